// Draws one page of the task table: a row per task, kept and updated in place (a focused
// button survives an update), with only the actions that apply to the task's state. Text from
// the API is only ever set as text, never parsed as HTML.
import * as format from './format.js';
import { TABS } from './states.js';
import { amounts, fraction } from './tasklist.js';

export function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'text') node.textContent = value;
    else node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** Whether the dashboard can post the task again: a request it can rebuild (no body to resend). */
export function canRetry(task) {
  return (task.kind === 'download' || task.kind === 'data') && task.originalRequest.bodyLength == null;
}

/** The actions a task's row offers: [action, label], by its shown state. */
function actionsFor(shown) {
  const { task, state } = shown;
  const resumeData = task.error && task.error.resumeData;
  switch (state.key) {
    case 'active':
    case 'queued':
    case 'waiting':
      return [['suspend', 'Pause'], ['cancel', 'Cancel']];
    case 'paused':
      return [['resume', 'Resume'], ['cancel', 'Cancel']];
    case 'done':
      return [task.kind === 'download' && task.location ? ['open', 'Open file'] : null,
        task.kind === 'data' ? ['open', 'Open body'] : null, ['delete', 'Delete']].filter(Boolean);
    case 'failed':
    case 'cancelled':
      if (task.state === 'canceling') return [];
      return [resumeData ? ['resume-data', 'Resume'] : null, canRetry(task) ? ['retry', 'Retry'] : null,
        task.location ? ['open', 'Open file'] : null, ['delete', 'Delete']].filter(Boolean);
    default:
      return [];
  }
}

/** The link that opens a task's file or body (the controller adds the token where one is needed). */
export function fileLink(task, label, extra = {}) {
  const path = task.kind === 'data' ? `/v1/tasks/${task.id}/body` : `/v1/tasks/${task.id}/file`;
  return element('a', { href: path, class: 'open-file', 'data-task-id': String(task.id), 'data-action': 'open', target: '_blank', rel: 'noopener', text: label, ...extra });
}

function actionControls(shown) {
  const id = shown.task.id;
  const controls = actionsFor(shown).map(([action, label]) => {
    if (action === 'open') return fileLink(shown.task, label, { 'aria-label': `${label}: ${shown.name}` });
    return element('button', { type: 'button', class: `small${action === 'delete' || action === 'cancel' ? ' danger' : ''}`, 'data-action': action, 'aria-label': `${label}: ${shown.name} (task ${id})`, text: label });
  });
  controls.push(element('button', { type: 'button', class: 'small quiet', 'data-action': 'details', 'aria-label': `Details: ${shown.name} (task ${id})`, text: 'Details' }));
  return controls;
}

function newRow(id) {
  const progress = element('progress', { max: '1', 'aria-label': `Progress of task ${id}` });
  const check = element('input', { type: 'checkbox', class: 'select', 'aria-label': `Select task ${id}` });
  return element('tr', { class: 'task', 'data-task-id': String(id) },
    element('td', { class: 'pick', 'data-label': 'Select' }, check),
    element('th', { scope: 'row', class: 'name-cell', 'data-label': 'Name' },
      element('button', { type: 'button', class: 'name link', 'data-action': 'details' }),
      element('div', { class: 'url' })),
    element('td', { class: 'session', 'data-label': 'Session' }),
    element('td', { class: 'state-cell', 'data-label': 'State' },
      element('span', { class: 'badge' }), element('div', { class: 'reason' })),
    element('td', { class: 'progress-cell', 'data-label': 'Progress' }, progress, ' ', element('span', { class: 'percent' })),
    element('td', { class: 'bytes', 'data-label': 'Size' }),
    element('td', { class: 'speed', 'data-label': 'Speed' }),
    element('td', { class: 'remaining', 'data-label': 'Left' }),
    element('td', { class: 'actions', 'data-label': 'Actions' }));
}

function updateRow(row, shown, selected) {
  const { task, state } = shown;
  row.dataset.state = task.state;
  row.dataset.display = state.key;
  row.querySelector('.select').checked = selected;
  const name = row.querySelector('.name');
  setText(name, shown.name);
  name.setAttribute('aria-label', `Details: ${shown.name} (task ${task.id})`);
  const url = row.querySelector('.url');
  const request = `${task.originalRequest.method} ${shown.url}`;
  setText(url, request);
  url.title = request;
  setText(row.querySelector('.session'), shown.sessionLabel);
  row.querySelector('.session').title = task.sessionId;
  const badge = row.querySelector('.badge');
  setText(badge, state.label);
  badge.dataset.key = state.key;
  const reason = row.querySelector('.reason');
  setText(reason, state.reason);
  badge.title = state.detail;
  reason.title = state.detail;

  const bar = row.querySelector('progress');
  // Indeterminate (animated) only while moving with no known size; a finished or stopped
  // task's bar stands still where it got to.
  let value = fraction(task, state);
  if (value == null && !['active', 'queued', 'waiting'].includes(state.key)) value = 0;
  if (value == null) bar.removeAttribute('value');
  // (An indeterminate bar's value reads 0: a 0 must still be set to make it determinate.)
  else if (!bar.hasAttribute('value') || bar.value !== value) bar.value = value;
  setText(row.querySelector('.percent'), format.percent(value));
  const { done, total } = amounts(task);
  setText(row.querySelector('.bytes'), format.byteProgress(done, total));
  const moving = state.key === 'active';
  setText(row.querySelector('.speed'), moving ? format.rate(task.progress.bytesPerSecond) : '–');
  setText(row.querySelector('.remaining'), moving ? format.duration(task.progress.secondsRemaining) : '–');

  // Replaced only when the set of actions changes, so a focused button stays focused.
  const actions = row.querySelector('.actions');
  const signature = `${state.key}|${task.state}|${Boolean(task.error && task.error.resumeData)}|${Boolean(task.location)}`;
  if (actions.dataset.signature !== signature) {
    actions.replaceChildren(...actionControls(shown));
    actions.dataset.signature = signature;
  }
}

/** Brings the table body in line with `rows` (one page, in order). */
export function renderRows(body, rows, selection) {
  const existing = new Map([...body.children].map((row) => [row.dataset.taskId, row]));
  const wanted = new Set(rows.map((shown) => String(shown.task.id)));
  for (const [id, row] of existing) if (!wanted.has(id)) row.remove();
  let before = body.firstChild;
  for (const shown of rows) {
    let row = existing.get(String(shown.task.id));
    if (!row) row = newRow(shown.task.id);
    if (row !== before) body.insertBefore(row, before);
    before = row.nextSibling;
    updateRow(row, shown, selection.has(shown.task.id));
  }
}

/** The status tabs with their counts; the current one pressed. */
export function renderTabs(container, counts, current) {
  if (!container.children.length) {
    for (const [key, label] of TABS) {
      container.append(element('button', { type: 'button', class: 'tab', 'data-tab': key, 'aria-pressed': 'false' },
        element('span', { class: 'tab-label', text: label }), ' ', element('span', { class: 'count' })));
    }
  }
  for (const button of container.children) {
    const key = button.dataset.tab;
    setText(button.querySelector('.count'), String(counts[key] ?? 0));
    button.setAttribute('aria-pressed', String(key === current));
  }
}

/** A <select>'s options replaced by `choices` ([value, label]), keeping the chosen value if it is still there. */
export function renderChoices(select, choices) {
  const chosen = select.value;
  const signature = JSON.stringify(choices);
  if (select.dataset.signature === signature) return;
  select.dataset.signature = signature;
  select.replaceChildren(...choices.map(([value, label]) => element('option', { value, text: label })));
  if (choices.some(([value]) => value === chosen)) select.value = chosen;
}
