// The global view: total down and up speed with a live graph of the last minute, the figures
// per scheduling class, the head of the queue, and the daemon-wide limits. With an admin token
// (or none) the figures are the daemon's (GET /v1/stats); a tenant token is refused those
// (403), so they are summed from the tasks it sees instead, and the limits are read-only.
import * as api from './api.js';
import * as format from './format.js';
import { element, setText } from './view.js';

const CLASSES = ['interactive', 'streaming', 'default', 'background'];
const SAMPLES = 60;       // one a second: the graph's minute
const GRAPH_WIDTH = 120;  // the SVG's viewBox
const GRAPH_HEIGHT = 32;

const history = { down: [], up: [] };
let scope = 'unknown';  // 'daemon' (stats answered) or 'tasks' (403: a tenant token)

const $ = (id) => document.getElementById(id);

/** Figures summed from the tasks the token sees: running transfers by class. */
function figuresFromTasks(tasks) {
  const figures = { downloadBytesPerSecond: 0, uploadBytesPerSecond: 0, classes: {}, running: 0, queued: 0, waiting: 0, suspended: 0 };
  for (const name of CLASSES) figures.classes[name] = { running: 0, queued: 0, downloadBytesPerSecond: 0, uploadBytesPerSecond: 0 };
  for (const task of tasks.values()) {
    if (task.state === 'suspended') figures.suspended += 1;
    if (task.state !== 'running') continue;
    const entry = figures.classes[task.schedulingClass] || figures.classes.default;
    if (task.phase === 'queued') {
      figures.queued += 1;
      entry.queued += 1;
    } else if (task.phase === 'waiting' || task.phase === 'retrying') {
      figures.waiting += 1;
    } else {
      figures.running += 1;
      entry.running += 1;
      const rate = task.progress.bytesPerSecond || 0;
      const key = task.kind === 'upload' ? 'uploadBytesPerSecond' : 'downloadBytesPerSecond';
      figures[key] += rate;
      entry[key] += rate;
    }
  }
  return figures;
}

function push(list, value) {
  list.push(value);
  if (list.length > SAMPLES) list.shift();
}

function points(list, top) {
  const step = GRAPH_WIDTH / (SAMPLES - 1);
  const offset = SAMPLES - list.length;
  return list.map((value, index) => {
    const x = (offset + index) * step;
    const y = GRAPH_HEIGHT - 1 - (top > 0 ? (value / top) * (GRAPH_HEIGHT - 2) : 0);
    return `${x.toFixed(1)},${y.toFixed(1)}`;
  }).join(' ');
}

function drawGraph() {
  const top = Math.max(1, ...history.down, ...history.up);
  $('graph-down').setAttribute('points', points(history.down, top));
  $('graph-up').setAttribute('points', points(history.up, top));
  setText($('graph-top'), `peak ${format.rate(top)}`);
}

function drawFigures(figures) {
  setText($('down-rate'), format.rate(figures.downloadBytesPerSecond) === '–' ? '0 B/s' : format.rate(figures.downloadBytesPerSecond));
  setText($('up-rate'), format.rate(figures.uploadBytesPerSecond) === '–' ? '0 B/s' : format.rate(figures.uploadBytesPerSecond));
  setText($('overview-counts'), `${figures.running} transferring · ${figures.queued} queued · ${figures.waiting} waiting · ${figures.suspended} paused`);
  setText($('overview-scope'), scope === 'daemon' ? 'The whole daemon (every token).' : 'Your tasks (the daemon-wide figures need an admin token).');
  const body = $('classes-body');
  if (!body.children.length) {
    for (const name of CLASSES) {
      body.append(element('tr', { 'data-class': name },
        element('th', { scope: 'row', text: name }), element('td', { class: 'running' }), element('td', { class: 'queued' }),
        element('td', { class: 'down' }), element('td', { class: 'up' })));
    }
  }
  for (const row of body.children) {
    const entry = figures.classes[row.dataset.class] || {};
    setText(row.querySelector('.running'), String(entry.running ?? 0));
    setText(row.querySelector('.queued'), String(entry.queued ?? 0));
    setText(row.querySelector('.down'), format.rate(entry.downloadBytesPerSecond || 0));
    setText(row.querySelector('.up'), format.rate(entry.uploadBytesPerSecond || 0));
  }
  push(history.down, figures.downloadBytesPerSecond || 0);
  push(history.up, figures.uploadBytesPerSecond || 0);
  drawGraph();
}

const WAITING_FOR = {
  globalCap: 'all transfer slots busy',
  hostCap: "the host's connection cap",
  sessionCap: "the session's task cap",
  discretionary: 'discretionary: other work first',
};

function drawQueue(page, names) {
  const list = $('queue-list');
  const items = page.tasks || [];
  setText($('queue-total'), items.length ? `${page.total} queued; next:` : 'Nothing is queued.');
  list.replaceChildren(...items.slice(0, 5).map((item) => element('li', {},
    element('span', { class: 'queue-name', text: names(item.taskId) }),
    element('span', { class: 'muted', text: ` — ${WAITING_FOR[item.waitingFor] || item.waitingFor || ''}` }))));
}

/** Reads the figures once: the daemon's when allowed, else summed from `tasks`. */
export async function refresh(tasks, names) {
  if (scope !== 'tasks') {
    try {
      const stats = await api.request('GET', '/v1/stats');
      scope = 'daemon';
      drawFigures(stats);
    } catch (error) {
      if (!(error instanceof api.APIError) || error.status !== 403) throw error;
      scope = 'tasks';
      setLimitsEditable(false);
    }
  }
  if (scope === 'tasks') drawFigures(figuresFromTasks(tasks));
  drawQueue(await api.request('GET', '/v1/queue?limit=5'), names);
}

// ---- limits ------------------------------------------------------------------------------

// The form shows KiB/s; empty is unlimited.
const LIMIT_FIELDS = [
  ['limit-down', (l) => l.downloadBytesPerSecond],
  ['limit-up', (l) => l.uploadBytesPerSecond],
  ['limit-bg-down', (l) => l.background.downloadBytesPerSecond],
  ['limit-bg-up', (l) => l.background.uploadBytesPerSecond],
];

function setLimitsEditable(editable) {
  for (const [id] of LIMIT_FIELDS) $(id).readOnly = !editable;
  $('limits-button').hidden = !editable;
  $('limits-note').hidden = editable;
}

export function showLimits(limits) {
  for (const [id, read] of LIMIT_FIELDS) {
    const field = $(id);
    if (document.activeElement === field) continue;
    const value = read(limits);
    field.value = value == null ? '' : String(Math.round(value / 1024));
  }
  const summary = LIMIT_FIELDS.map(([, read]) => read(limits)).map((value) => (value == null ? 'unlimited' : format.rate(value)));
  setText($('limits-summary'), `Down ${summary[0]}, up ${summary[1]}; background down ${summary[2]}, up ${summary[3]}.`);
}

export async function loadLimits() {
  showLimits(await api.request('GET', '/v1/limits'));
}

/** The PATCH body from the form: KiB/s to bytes/s, empty to null (unlimited). Throws on a bad number. */
export function limitsPatch() {
  const values = {};
  for (const [id] of LIMIT_FIELDS) {
    const text = $(id).value.trim();
    if (text === '') {
      values[id] = null;
      continue;
    }
    const number = Number(text);
    if (!Number.isFinite(number) || number <= 0) throw new Error(`${$(id).labels[0].textContent} must be a number of KiB/s above 0, or empty for unlimited`);
    values[id] = Math.round(number * 1024);
  }
  return {
    downloadBytesPerSecond: values['limit-down'],
    uploadBytesPerSecond: values['limit-up'],
    background: { downloadBytesPerSecond: values['limit-bg-down'], uploadBytesPerSecond: values['limit-bg-up'] },
  };
}
