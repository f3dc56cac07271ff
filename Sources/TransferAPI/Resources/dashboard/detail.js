// A task's detail panel (a modal <dialog>): its state in words, request, response, error (with
// its resume data), metrics and events. The facts follow the change feed while it is open; the
// metrics and events are read when it opens and on "Reload". Events are read with `task=`, and
// without an attachment, so a background session's client keeps its own.
import * as api from './api.js';
import * as format from './format.js';
import { displayState } from './states.js';
import { amounts, present } from './tasklist.js';
import { element, fileLink, setText, canRetry } from './view.js';

const $ = (id) => document.getElementById(id);
let openId = null;

export function currentId() {
  return openId;
}

function facts(list, pairs) {
  list.replaceChildren(...pairs.filter(([, value]) => value != null && value !== '').flatMap(([term, value]) => [
    element('dt', { text: term }), element('dd', {}, value instanceof Node ? value : String(value)),
  ]));
}

function headerText(headers) {
  if (!headers) return '';
  return Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join('\n');
}

function time(value) {
  return value ? new Date(value).toLocaleString() : null;
}

/** Redraws the panel's facts for `task` (called on open and on every change of the task). */
export function update(task, sessions) {
  if (!task || task.id !== openId) return;
  const shown = present(task, sessions, Date.now());
  const state = displayState(task);
  setText($('detail-title'), shown.name);
  setText($('detail-subtitle'), `Task ${task.id} · ${task.kind} · ${shown.sessionLabel}`);
  const badge = $('detail-state');
  setText(badge, state.label);
  badge.dataset.key = state.key;
  setText($('detail-reason'), [state.reason, state.detail].filter(Boolean).join(' — '));
  const { done, total } = amounts(task);
  facts($('detail-facts'), [
    ['URL', shown.url],
    ['Description', task.description],
    ['Session', `${shown.sessionLabel} (${task.sessionId})`],
    ['Transferred', format.byteProgress(done, total)],
    ['Speed', task.state === 'running' ? format.rate(task.progress.bytesPerSecond) : null],
    ['Priority', format.priority(task.priority)],
    ['Service type', `${task.networkServiceType} (class ${task.schedulingClass})`],
    ['Created', time(task.createdAt)],
    ['Started', time(task.startedAt)],
    ['Completed', time(task.completedAt)],
    ['Starts at', time(task.earliestBeginDate)],
    ['Retries', task.retryCount || null],
    ['Destination', task.destination],
    ['File on the daemon', task.location],
    ['Checksum', task.checksum],
    ['SHA-256', task.digest && task.digest['sha-256']],
    ['Segments', task.segments],
    ['Mirrors', task.mirrors && task.mirrors.join('\n')],
    ['Speed limit', task.bandwidthLimit && format.rate(task.bandwidthLimit.downloadBytesPerSecond)],
    ['Cache', task.cacheStatus],
  ]);
  const request = task.currentRequest || task.originalRequest;
  setText($('detail-request'), `${request.method} ${request.url}\n${headerText(request.headers)}`.trim());
  const response = task.response;
  setText($('detail-response'), response ? `HTTP ${response.statusCode}\n${headerText(response.headers)}` : 'No response yet.');
  const error = task.error;
  $('detail-error-section').hidden = !error;
  if (error) {
    setText($('detail-error'), `${error.name} (${error.code})${error.reason ? `, ${error.reason}` : ''}\n${error.message}`);
  }
  const link = $('detail-resume-data');
  const resumeData = error && error.resumeData;
  if (resumeData && link.dataset.value !== resumeData) {
    // Offered as a file: the base64 text the API gives, to send back as `resumeData`.
    if (link.href) URL.revokeObjectURL(link.href);
    link.href = URL.createObjectURL(new Blob([resumeData], { type: 'text/plain' }));
    link.dataset.value = resumeData;
    link.download = `task-${task.id}.resumedata`;
  }
  link.hidden = !resumeData;

  if (task.state === 'completed' && metricsOf !== task.id && $('detail-metrics').textContent !== 'Loading…') loadMetrics(task);

  const priority = $('detail-priority');
  if (document.activeElement !== priority && !priority.dataset.edited) priority.value = String(task.priority);
  $('detail-priority-form').hidden = task.state === 'completed';

  // The panel's own actions, by state.
  const key = state.key;
  const live = task.state === 'running' || task.state === 'suspended';
  const actions = [];
  if (task.state === 'running') actions.push(['suspend', 'Pause']);
  if (task.state === 'suspended') actions.push(['resume', 'Resume']);
  if (live) actions.push(['cancel', 'Cancel']);
  if (live && task.kind === 'download') actions.push(['cancel-resume-data', 'Cancel, keep resume data']);
  if (resumeData) actions.push(['resume-data', 'Resume from resume data']);
  if ((key === 'failed' || key === 'cancelled') && task.state === 'completed' && canRetry(task)) actions.push(['retry', 'Retry']);
  if (task.state === 'completed') actions.push(['delete', 'Delete'], ...(task.destination ? [['delete-file', 'Delete with its file']] : []));
  const signature = actions.map(([action]) => action).join(',') + (task.location ? ',open' : '');
  const container = $('detail-actions');
  if (container.dataset.signature !== signature) {
    const controls = actions.map(([action, label]) => element('button', {
      type: 'button', class: `small${action.startsWith('delete') || action.startsWith('cancel') ? ' danger' : ''}`, 'data-action': action, text: label,
    }));
    if (task.state === 'completed' && (task.location || task.kind === 'data')) {
      controls.unshift(fileLink(task, task.kind === 'data' ? 'Open body' : 'Open file'));
    }
    container.replaceChildren(...controls);
    container.dataset.signature = signature;
  }
}

async function loadExtras(task) {
  const id = task.id;
  setText($('detail-metrics'), 'Loading…');
  $('detail-events').replaceChildren();
  try {
    const page = await api.request('GET', `/v1/sessions/${encodeURIComponent(task.sessionId)}/events?after=0&limit=200&task=${id}`);
    if (openId !== id) return;
    const items = page.events.map((event) => {
      const fields = Object.entries(event.fields || {})
        .filter(([name]) => name !== 'resumeData')
        .map(([name, value]) => `${name}=${typeof value === 'object' ? JSON.stringify(value) : value}`).join(' ');
      return element('li', {}, element('time', { datetime: event.time, text: new Date(event.time).toLocaleTimeString() }), ' ',
        element('strong', { text: event.type }), fields ? ` ${fields}` : '');
    });
    $('detail-events').replaceChildren(...(items.length ? items : [element('li', { class: 'muted', text: 'No events kept (acknowledged events are gone).' })]));
  } catch (error) {
    if (openId === id) $('detail-events').replaceChildren(element('li', { class: 'muted', text: `Events unavailable: ${error.message}` }));
  }
  metricsOf = null;
  await loadMetrics(task);
}

// A task's metrics exist once it completes: read then, once per opening.
let metricsOf = null;

async function loadMetrics(task) {
  const id = task.id;
  if (task.state !== 'completed') {
    setText($('detail-metrics'), 'The metrics come when the task completes.');
    return;
  }
  if (metricsOf === id) return;
  metricsOf = id;
  try {
    const metrics = await api.request('GET', `/v1/tasks/${id}/metrics`);
    if (openId === id) setText($('detail-metrics'), JSON.stringify(metrics, null, 2));
  } catch (error) {
    if (openId === id) setText($('detail-metrics'), `No metrics: ${error.message}`);
  }
}

export function open(task, sessions) {
  openId = task.id;
  const dialog = $('detail');
  dialog.dataset.taskId = String(task.id);
  $('detail-actions').dataset.signature = '';
  delete $('detail-priority').dataset.edited;
  update(task, sessions);
  if (!dialog.open) dialog.showModal();
  loadExtras(task);
}

export function reload(task) {
  if (task && task.id === openId) loadExtras(task);
}

export function close() {
  openId = null;
  const dialog = $('detail');
  if (dialog.open) dialog.close();
}

export function onClosed() {
  openId = null;
}
