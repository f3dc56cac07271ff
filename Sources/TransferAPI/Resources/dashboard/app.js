// The dashboard's controller: asks for a token when the API wants one, follows every task through
// the change-feed long-poll (GET /v1/tasks?after=&wait=), and turns buttons and forms into API
// calls. It never reads a session's event feed, so it never touches a background session's
// attachment or acknowledges events on a client's behalf.
import * as api from './api.js';
import { render, renderSessionChoices } from './view.js';

const LONG_POLL_SECONDS = 30;
// Progress changes many times a second: one answer at most this often is enough for the eye.
const MIN_POLL_INTERVAL_MS = 250;

const tasks = new Map();
let sessions = [];
let cursor = 0;

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- messages ----------------------------------------------------------------------------

function showError(message) {
  const alerts = $('alerts');
  const item = document.createElement('p');
  item.className = 'alert';
  item.textContent = message;
  const close = document.createElement('button');
  close.type = 'button';
  close.className = 'quiet';
  close.textContent = 'Dismiss';
  close.setAttribute('aria-label', `Dismiss: ${message}`);
  close.addEventListener('click', () => item.remove());
  item.append(' ', close);
  alerts.replaceChildren(item);
}

function clearError() {
  $('alerts').replaceChildren();
}

function describe(error) {
  if (error instanceof api.APIError) {
    return `${error.message}${error.field ? ` (${error.field})` : ''} [${error.code}]`;
  }
  return `The daemon cannot be reached: ${error.message}`;
}

function setConnection(text) {
  const node = $('connection');
  if (node.textContent !== text) node.textContent = text;
}

// ---- token -------------------------------------------------------------------------------

let tokenWaiters = [];

/** Shows the token form and resolves once a token was entered. */
function needToken() {
  const section = $('token-section');
  if (section.hidden) {
    section.hidden = false;
    setConnection(api.token() ? 'The token was refused.' : 'A token is needed.');
    if (api.token()) showError('The daemon refused the token; enter another.');
    $('token').focus();
  }
  return new Promise((resolve) => tokenWaiters.push(resolve));
}

function tokenEntered(event) {
  event.preventDefault();
  const value = $('token').value.trim();
  if (!value) return;
  api.setToken(value);
  $('token').value = '';
  $('token-section').hidden = true;
  $('forget-token').hidden = false;
  clearError();
  const waiters = tokenWaiters;
  tokenWaiters = [];
  for (const resolve of waiters) resolve();
}

/** Runs `call`, asking for a token and trying again when the API answers 401. */
async function authorized(call) {
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof api.APIError) || error.status !== 401) throw error;
      await needToken();
    }
  }
}

// ---- data ----------------------------------------------------------------------------------

function draw() {
  render($('sessions'), sessions, tasks);
  $('empty').hidden = $('sessions').children.length > 0;
}

async function loadSessions() {
  sessions = await authorized(() => api.allSessions());
  renderSessionChoices($('task-session'), sessions);
  draw();
}

/** Follows the change feed for as long as the page is open. */
async function follow() {
  let failures = 0;
  for (;;) {
    const started = Date.now();
    try {
      // The first read answers at once (the whole list), later ones wait for a change.
      const page = await authorized(() => api.taskChanges(cursor, cursor === 0 ? 0 : LONG_POLL_SECONDS));
      failures = 0;
      if (page.resync) {
        tasks.clear();
        cursor = 0;
        continue;
      }
      for (const task of page.tasks) tasks.set(task.id, task);
      for (const id of page.removed) tasks.delete(id);
      cursor = page.next;
      setConnection(`Live · updated ${new Date().toLocaleTimeString()}`);
      if (page.tasks.some((task) => !sessions.some((session) => session.id === task.sessionId))) {
        await loadSessions();  // a session created elsewhere
      }
      draw();
      if (page.tasks.length >= 1000) continue;  // more pending: read on at once
    } catch (error) {
      failures += 1;
      setConnection(`Reconnecting… (${describe(error)})`);
      // A restarted daemon starts its counter over: the next answer says resync.
      await sleep(Math.min(10000, 500 * 2 ** Math.min(failures, 5)));
      continue;
    }
    const spent = Date.now() - started;
    if (spent < MIN_POLL_INTERVAL_MS) await sleep(MIN_POLL_INTERVAL_MS - spent);
  }
}

/** Applies an answered task at once (the feed brings the same version a moment later). */
function adopt(task) {
  if (task && typeof task.id === 'number') {
    const known = tasks.get(task.id);
    if (!known || known.version <= task.version) tasks.set(task.id, task);
    draw();
  }
}

// ---- actions -------------------------------------------------------------------------------

const ACTIONS = {
  suspend: (id) => api.request('POST', `/v1/tasks/${id}/suspend`, {}),
  resume: (id) => api.request('POST', `/v1/tasks/${id}/resume`, {}),
  cancel: (id) => api.request('POST', `/v1/tasks/${id}/cancel`, {}),
  'cancel-resume-data': (id) => api.request('POST', `/v1/tasks/${id}/cancel`, { produceResumeData: true }),
};

async function onAction(event) {
  const button = event.target.closest('button[data-action]');
  if (!button) return;
  const row = button.closest('tbody[data-task-id]');
  const id = Number(row.dataset.taskId);
  const action = ACTIONS[button.dataset.action];
  button.disabled = true;
  try {
    adopt(await authorized(() => action(id)));
    clearError();
  } catch (error) {
    showError(`Task ${id}: ${describe(error)}`);
    draw();
  }
}

async function onPriority(event) {
  const form = event.target.closest('form.priority-form');
  if (!form) return;
  event.preventDefault();
  const id = Number(form.dataset.taskId);
  const input = form.querySelector('input');
  const value = Number(input.value);
  if (input.value === '' || !(value >= 0 && value <= 1)) {
    showError(`Task ${id}: the priority must be a number from 0 to 1.`);
    input.focus();
    return;
  }
  try {
    const task = await authorized(() => api.request('PATCH', `/v1/tasks/${id}`, { priority: value }));
    delete input.dataset.edited;
    adopt(task);
    clearError();
  } catch (error) {
    showError(`Task ${id}: ${describe(error)}`);
  }
}

async function onCreate(event) {
  event.preventDefault();
  // By `elements`: `form.method` would be the form's own attribute, not the field.
  const fields = event.target.elements;
  const button = $('create-button');
  const request = { url: fields.url.value.trim(), method: fields.method.value.trim() || 'GET' };
  if (fields.networkServiceType.value) request.networkServiceType = fields.networkServiceType.value;
  const body = { kind: fields.kind.value, request, priority: Number(fields.priority.value) };
  button.disabled = true;
  try {
    let session = fields.session.value;
    if (session === 'new') {
      const created = await authorized(() => api.request('POST', '/v1/sessions', {}));
      session = created.id;
      await loadSessions();
      $('task-session').value = session;
    }
    const task = await authorized(() => api.request('POST', `/v1/sessions/${encodeURIComponent(session)}/tasks`, body));
    adopt(task);
    clearError();
    setConnection(`Task ${task.id} created.`);
  } catch (error) {
    showError(`The task was not created: ${describe(error)}`);
  } finally {
    button.disabled = false;
  }
}

function forgetToken() {
  api.setToken(null);
  $('forget-token').hidden = true;
  tasks.clear();
  sessions = [];
  cursor = 0;
  draw();
  location.reload();
}

// ---- start ---------------------------------------------------------------------------------

function start() {
  $('token-form').addEventListener('submit', tokenEntered);
  $('create-form').addEventListener('submit', onCreate);
  $('sessions').addEventListener('click', onAction);
  $('sessions').addEventListener('submit', onPriority);
  // An edit counts from its first keystroke or change (a cleared field too, whose focus may have
  // moved on already): updates leave the field alone until the edit is sent.
  const markEdited = (event) => {
    if (event.target.classList.contains('priority-input')) event.target.dataset.edited = '1';
  };
  $('sessions').addEventListener('input', markEdited);
  $('sessions').addEventListener('change', markEdited);
  $('forget-token').addEventListener('click', forgetToken);
  $('forget-token').hidden = !api.token();
  loadSessions().catch((error) => showError(describe(error)));
  follow();
}

start();
