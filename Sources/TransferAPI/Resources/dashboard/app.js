// The dashboard's controller: asks for a token when the API wants one, follows every task
// through the change-feed long-poll (GET /v1/tasks?after=&wait=), and turns tabs, search,
// selection, buttons and forms into API calls. It never reads a session's event feed with an
// attachment, so it never touches a background session's attachment or acknowledges events on
// a client's behalf.
import * as api from './api.js';
import * as detail from './detail.js';
import * as overview from './overview.js';
import { FormError, refusalWhere, taskSpecs } from './add.js';
import { FINISHED } from './states.js';
import { arrange, sessionName, taskName } from './tasklist.js';
import { canRetry, renderChoices, renderRows, renderTabs } from './view.js';

const LONG_POLL_SECONDS = 30;
// Progress changes many times a second: one answer at most this often is enough for the eye.
const MIN_POLL_INTERVAL_MS = 250;
const OVERVIEW_INTERVAL_MS = 1000;
// Bulk actions: this many requests at once, so 1,000 selected tasks neither wait in one line
// nor open 1,000 connections.
const BULK_PARALLEL = 6;

const tasks = new Map();
const sessions = new Map();
const selection = new Set();
const view = { tab: 'all', session: '', search: '', sort: 'newest', page: 0, pageSize: 50 };
let cursor = 0;
const sessionsLookedFor = new Set();
let arranged = { counts: {}, matching: [], rows: [], page: 0, pages: 1 };

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- messages ----------------------------------------------------------------------------

function showError(message) {
  const item = document.createElement('p');
  item.className = 'alert';
  item.textContent = message;
  const close = document.createElement('button');
  close.type = 'button';
  close.className = 'quiet small';
  close.textContent = 'Dismiss';
  close.setAttribute('aria-label', `Dismiss: ${message}`);
  close.addEventListener('click', () => item.remove());
  item.append(' ', close);
  $('alerts').replaceChildren(item);
}

function clearError() {
  $('alerts').replaceChildren();
}

function notify(message) {
  const notice = $('notice');
  notice.textContent = message;
  notice.hidden = !message;
}

function describe(error) {
  if (error instanceof api.APIError) {
    return `${error.message}${error.field ? ` (${error.field})` : ''} [${error.code}]`;
  }
  if (error instanceof FormError) return error.message;
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

// ---- drawing -------------------------------------------------------------------------------

let drawScheduled = false;

/** Draws on the next frame: many changes in one frame cost one drawing. */
function draw() {
  if (drawScheduled) return;
  drawScheduled = true;
  requestAnimationFrame(() => {
    drawScheduled = false;
    drawNow();
  });
}

function drawNow() {
  arranged = arrange(tasks, sessions, view);
  view.page = arranged.page;
  renderTabs($('tabs'), arranged.counts, view.tab);
  renderRows($('task-rows'), arranged.rows, selection);
  const total = arranged.matching.length;
  $('empty').hidden = total > 0;
  $('empty').textContent = tasks.size === 0 ? 'No tasks yet.' : 'No task matches.';
  const first = total ? arranged.page * view.pageSize + 1 : 0;
  const last = Math.min(total, (arranged.page + 1) * view.pageSize);
  $('page-info').textContent = `${first}–${last} of ${total} · page ${arranged.page + 1} of ${arranged.pages}`;
  $('page-prev').disabled = arranged.page === 0;
  $('page-next').disabled = arranged.page >= arranged.pages - 1;

  // Selection: ids of tasks that are gone are dropped.
  for (const id of selection) if (!tasks.has(id)) selection.delete(id);
  const onPage = arranged.rows.map((shown) => shown.task.id);
  const pageChecked = onPage.filter((id) => selection.has(id)).length;
  const pageBox = $('select-page');
  pageBox.checked = onPage.length > 0 && pageChecked === onPage.length;
  pageBox.indeterminate = pageChecked > 0 && pageChecked < onPage.length;
  $('selected-count').textContent = selection.size ? `${selection.size} selected` : 'None selected';
  const matchingButton = $('select-matching');
  matchingButton.hidden = !(pageBox.checked && total > onPage.length && selection.size < total);
  matchingButton.textContent = `Select all ${total} matching`;
  const chosen = [...selection].map((id) => tasks.get(id)).filter(Boolean);
  for (const button of $('bulk').querySelectorAll('button[data-bulk]')) {
    const action = button.dataset.bulk;
    const finished = arranged.counts.done + arranged.counts.failed + arranged.counts.cancelled;
    button.disabled = action === 'clear-finished' ? finished === 0 : !chosen.some((task) => BULK[action].applies(task));
  }
  renderChoices($('filter-session'), [['', 'All sessions'], ...sessionChoices(false)]);
  // A filtered session that is gone falls back to all, in the view as in the control.
  if (view.session !== $('filter-session').value) {
    view.session = $('filter-session').value;
    draw();
  }
  const open = detail.currentId();
  if (open != null) {
    if (tasks.has(open)) detail.update(tasks.get(open), sessions);
    else detail.close();
  }
}

function sessionChoices(activeOnly) {
  const ids = new Set(['shared', ...sessions.keys()]);
  for (const task of tasks.values()) ids.add(task.sessionId);
  return [...ids]
    .filter((id) => !activeOnly || id === 'shared' || (sessions.get(id) && sessions.get(id).state === 'active'))
    .map((id) => [id, sessionName(sessions.get(id), id)])
    .sort((a, b) => (a[0] === 'shared' ? -1 : b[0] === 'shared' ? 1 : a[1].localeCompare(b[1])));
}

function renderAddSessions() {
  renderChoices($('add-session'), [...sessionChoices(true), ['new', 'a new session…']]);
  $('add-session-name-field').hidden = $('add-session').value !== 'new';
}

// ---- data ----------------------------------------------------------------------------------

async function loadSessions() {
  const list = await authorized(() => api.allSessions());
  sessions.clear();
  for (const session of list) sessions.set(session.id, session);
  renderAddSessions();
  draw();
}

/** Follows the change feed for as long as the page is open. */
async function follow() {
  let failures = 0;
  for (;;) {
    const started = Date.now();
    let more = false;
    try {
      // The first reads answer at once (everything, 1,000 a page), later ones wait for a change.
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
      // A session created elsewhere: the list is read again, once per session it lacks (one
      // it does not list, such as a deleted one, would otherwise cost a read every answer).
      const unseen = page.tasks.map((task) => task.sessionId).filter((id) => !sessions.has(id) && !sessionsLookedFor.has(id));
      if (unseen.length) {
        for (const id of unseen) sessionsLookedFor.add(id);
        await loadSessions();
      }
      draw();
      more = page.tasks.length >= 1000;
    } catch (error) {
      failures += 1;
      setConnection(`Reconnecting… (${describe(error)})`);
      // A restarted daemon starts its counter over: the next answer says resync.
      await sleep(Math.min(10000, 500 * 2 ** Math.min(failures, 5)));
      continue;
    }
    if (more) continue;  // more pending: read on at once
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

async function followOverview() {
  const names = (id) => (tasks.has(id) ? `${taskName(tasks.get(id))} (#${id})` : `#${id}`);
  for (;;) {
    try {
      await authorized(() => overview.refresh(tasks, names));
    } catch (error) {
      // The feed's status line already says when the daemon is gone.
    }
    await sleep(OVERVIEW_INTERVAL_MS);
  }
}

// ---- actions -------------------------------------------------------------------------------

/** A new task in the same session with the same request (a task with a body is not retried here). */
function retrySpec(task) {
  const original = task.originalRequest;
  const headers = { ...original.headers };
  // Set per attempt by the daemon, not by the client.
  for (const name of Object.keys(headers)) {
    if (['host', 'content-length', 'range', 'if-range'].includes(name.toLowerCase())) delete headers[name];
  }
  const spec = {
    kind: task.kind,
    request: { url: original.url, method: original.method, headers, networkServiceType: original.networkServiceType },
    priority: task.priority,
  };
  if (task.description) spec.description = task.description;
  if (task.destination) {
    spec.destination = task.destination;
    spec.conflict = task.conflict || 'fail';
  }
  if (task.checksum) spec.checksum = task.checksum;
  if (task.segments) spec.segments = task.segments;
  if (task.mirrors) spec.mirrors = task.mirrors;
  if (task.bandwidthLimit) spec.bandwidthLimit = task.bandwidthLimit;
  return spec;
}

async function deleteTask(id, withFile) {
  await api.request('DELETE', `/v1/tasks/${id}${withFile ? '?deleteFile=true' : ''}`);
  tasks.delete(id);
  selection.delete(id);
}

const post = (id, verb, body = {}) => api.request('POST', `/v1/tasks/${id}/${verb}`, body);
const live = (task) => task.state === 'running' || task.state === 'suspended';

/** What each action does to one task, and to which tasks it applies (for the bulk buttons). */
const BULK = {
  suspend: { applies: (t) => t.state === 'running', run: (t) => post(t.id, 'suspend').then(adopt), done: 'Paused' },
  resume: { applies: (t) => t.state === 'suspended', run: (t) => post(t.id, 'resume').then(adopt), done: 'Resumed' },
  cancel: { applies: live, run: (t) => post(t.id, 'cancel').then(adopt), done: 'Cancelled' },
  'cancel-resume-data': { applies: (t) => live(t) && t.kind === 'download', run: (t) => post(t.id, 'cancel', { produceResumeData: true }).then(adopt), done: 'Cancelled' },
  retry: {
    applies: (t) => t.state === 'completed' && (t.error || (t.response && t.response.statusCode >= 400)) && canRetry(t),
    // The new task first: when it is refused, the old one (and its error) stays.
    run: async (t) => {
      adopt(await api.request('POST', `/v1/sessions/${encodeURIComponent(t.sessionId)}/tasks`, retrySpec(t)));
      await deleteTask(t.id, false);
    },
    done: 'Retried',
  },
  'resume-data': {
    applies: (t) => Boolean(t.error && t.error.resumeData),
    run: async (t) => adopt(await api.request('POST', `/v1/sessions/${encodeURIComponent(t.sessionId)}/tasks`, { kind: 'download', resumeData: t.error.resumeData, priority: t.priority })),
    done: 'Resumed',
  },
  delete: { applies: (t) => t.state === 'completed', run: (t) => deleteTask(t.id, false), done: 'Deleted' },
  'delete-file': { applies: (t) => t.state === 'completed', run: (t) => deleteTask(t.id, Boolean(t.destination)), done: 'Deleted' },
};

/** Finished tasks under the current session filter and search, whatever the tab. */
function finishedInView() {
  return arrange(tasks, sessions, { ...view, tab: 'all', page: 0, pageSize: Number.MAX_SAFE_INTEGER }).matching
    .filter((shown) => FINISHED.has(shown.state.key) && shown.task.state === 'completed').map((shown) => shown.task);
}

/** Runs `action` on `list`, a few at a time; reports what was done and what was refused. */
async function runOn(action, list) {
  const spec = BULK[action];
  const targets = list.filter(spec.applies);
  let done = 0;
  const refused = [];
  let next = 0;
  const worker = async () => {
    while (next < targets.length) {
      const task = targets[next];
      next += 1;
      try {
        await authorized(() => spec.run(task));
        done += 1;
      } catch (error) {
        refused.push(`#${task.id}: ${describe(error)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(BULK_PARALLEL, targets.length) }, worker));
  draw();
  notify(`${spec.done} ${done} task${done === 1 ? '' : 's'}.${list.length > targets.length ? ` ${list.length - targets.length} left out (not in a state for it).` : ''}`);
  if (refused.length) showError(`${refused.length} refused: ${refused.slice(0, 3).join('; ')}${refused.length > 3 ? '; …' : ''}`);
  else clearError();
}

function confirmDelete(action, list) {
  const count = list.filter(BULK[action].applies).length;
  if (!count) return false;
  const files = action === 'delete-file' ? ', and their files at their destinations' : '';
  return window.confirm(`Delete ${count} finished task${count === 1 ? '' : 's'}${files}? Files kept in the daemon's data folder go with them.`);
}

async function onBulk(event) {
  const button = event.target.closest('button[data-bulk]');
  if (!button) return;
  const action = button.dataset.bulk;
  if (action === 'clear-finished') {
    const list = finishedInView();
    if (!list.length || !window.confirm(`Delete ${list.length} finished task${list.length === 1 ? '' : 's'} (done, failed and cancelled) and the files they keep in the daemon's data folder?`)) return;
    await runOn('delete', list);
    return;
  }
  const list = [...selection].map((id) => tasks.get(id)).filter(Boolean);
  if ((action === 'delete' || action === 'delete-file') && !confirmDelete(action, list)) return;
  button.disabled = true;
  await runOn(action, list);
}

/** One task's action, from its row or its detail panel. */
async function onTaskAction(id, action, button) {
  const task = tasks.get(id);
  if (!task) return;
  if (action === 'details') {
    detail.open(task, sessions);
    return;
  }
  if ((action === 'delete' || action === 'delete-file') && !window.confirm(`Delete task ${id} (${taskName(task)})${action === 'delete-file' ? ' and its file' : ''}?`)) return;
  if (button) button.disabled = true;
  try {
    await authorized(() => BULK[action].run(task));
    clearError();
    notify(`${BULK[action].done} ${taskName(task)}.`);
  } catch (error) {
    showError(`Task ${id}: ${describe(error)}`);
    if (button) button.disabled = false;
  }
  draw();
}

/**
 * Opens a task's file with a token: a link cannot carry it, so the page asks for a file grant
 * (a link to this one file, valid for minutes, POST /v1/tasks/ID/file-grant) and lets the
 * browser download through it, streaming to disk. A data task's body (small, in the daemon's
 * memory or store) is fetched with the token and handed over as a blob.
 */
async function openFile(link) {
  const id = Number(link.dataset.taskId);
  if (link.getAttribute('href').endsWith('/file')) {
    const grant = await authorized(() => api.request('POST', `/v1/tasks/${id}/file-grant`, {}));
    const save = document.createElement('a');
    save.href = grant.url;
    save.download = '';
    save.rel = 'noopener';
    document.body.append(save);
    save.click();
    save.remove();
    return;
  }
  await fetchIntoBlob(link);
}

async function fetchIntoBlob(link) {
  const response = await fetch(link.getAttribute('href'), {
    headers: { Authorization: `Bearer ${api.token()}` }, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer',
  });
  if (response.status === 401) {
    await needToken();
    return fetchIntoBlob(link);
  }
  if (!response.ok) throw new api.APIError(response.status, 'http_error', `the file answered HTTP ${response.status}`);
  const disposition = response.headers.get('Content-Disposition') || '';
  const match = /filename\*=UTF-8''([^;]+)|filename="([^"]+)"/i.exec(disposition);
  const name = match ? decodeURIComponent(match[1] || match[2]) : `task-${link.dataset.taskId}`;
  const url = URL.createObjectURL(await response.blob());
  const save = document.createElement('a');
  save.href = url;
  save.download = name;
  document.body.append(save);
  save.click();
  save.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

function onClick(event) {
  const link = event.target.closest('a.open-file');
  if (link) {
    if (!api.token()) return;  // no token: the link works as it is
    event.preventDefault();
    openFile(link).catch((error) => showError(`Task ${link.dataset.taskId}: ${describe(error)}`));
    return;
  }
  const button = event.target.closest('button[data-action]');
  if (!button) return;
  const holder = button.closest('[data-task-id]');
  if (!holder) return;
  onTaskAction(Number(holder.dataset.taskId), button.dataset.action, button);
}

function onSelect(event) {
  const box = event.target;
  if (box.id === 'select-page') {
    for (const shown of arranged.rows) {
      if (box.checked) selection.add(shown.task.id);
      else selection.delete(shown.task.id);
    }
  } else if (box.classList.contains('select')) {
    const id = Number(box.closest('tr').dataset.taskId);
    if (box.checked) selection.add(id);
    else selection.delete(id);
  } else {
    return;
  }
  draw();
}

async function onPriority(event) {
  event.preventDefault();
  const id = detail.currentId();
  const input = $('detail-priority');
  const value = Number(input.value);
  if (input.value === '' || !(value >= 0 && value <= 1)) {
    showError(`Task ${id}: the priority must be a number from 0 to 1.`);
    input.focus();
    return;
  }
  try {
    adopt(await authorized(() => api.request('PATCH', `/v1/tasks/${id}`, { priority: value })));
    delete input.dataset.edited;
    clearError();
    notify(`Task ${id}: priority ${value}.`);
  } catch (error) {
    showError(`Task ${id}: ${describe(error)}`);
  }
}

async function onAdd(event) {
  event.preventDefault();
  const fields = event.target.elements;
  const button = $('add-button');
  let specs = [];
  try {
    specs = taskSpecs(fields);
  } catch (error) {
    showError(`Nothing was added: ${describe(error)}`);
    if (error.fieldId) $(error.fieldId).focus();
    return;
  }
  button.disabled = true;
  try {
    let session = fields.session.value;
    if (session === 'new') {
      const name = fields.sessionName.value.trim();
      const created = await authorized(() => api.request('POST', '/v1/sessions', name ? { description: name } : {}));
      session = created.id;
      await loadSessions();
      $('add-session').value = session;
      renderAddSessions();
    }
    const answer = await authorized(() => api.request('POST', `/v1/sessions/${encodeURIComponent(session)}/tasks:batch`, { tasks: specs }));
    for (const task of answer.tasks) adopt(task);
    clearError();
    notify(`Added ${answer.tasks.length} task${answer.tasks.length === 1 ? '' : 's'}${answer.tasks.length === 1 ? ` (#${answer.tasks[0].id})` : ''}.`);
    fields.urls.value = '';
  } catch (error) {
    const where = error instanceof api.APIError ? refusalWhere(error.field, specs) : '';
    showError(`Nothing was added${where ? `: ${where}` : ''}: ${describe(error)}`);
  } finally {
    button.disabled = false;
  }
}

async function onLimits(event) {
  event.preventDefault();
  try {
    const patch = overview.limitsPatch();
    overview.showLimits(await authorized(() => api.request('PATCH', '/v1/limits', patch)));
    clearError();
    notify('The daemon-wide limits are set.');
  } catch (error) {
    showError(`The limits were not changed: ${describe(error)}`);
  }
}

function forgetToken() {
  api.setToken(null);
  location.reload();
}

// ---- start ---------------------------------------------------------------------------------

function start() {
  $('token-form').addEventListener('submit', tokenEntered);
  $('add-form').addEventListener('submit', onAdd);
  $('add-session').addEventListener('change', renderAddSessions);
  $('task-rows').addEventListener('click', onClick);
  $('detail').addEventListener('click', onClick);
  $('task-rows').addEventListener('change', onSelect);
  $('select-page').addEventListener('change', onSelect);
  $('select-matching').addEventListener('click', () => {
    for (const shown of arranged.matching) selection.add(shown.task.id);
    draw();
  });
  $('bulk').addEventListener('click', onBulk);
  $('tabs').addEventListener('click', (event) => {
    const tab = event.target.closest('button[data-tab]');
    if (!tab) return;
    view.tab = tab.dataset.tab;
    view.page = 0;
    draw();
  });
  const searched = (event) => {
    if (view.search === event.target.value) return;
    view.search = event.target.value;
    view.page = 0;
    draw();
  };
  $('search').addEventListener('input', searched);
  $('search').addEventListener('change', searched);
  $('filter-session').addEventListener('change', (event) => {
    view.session = event.target.value;
    view.page = 0;
    draw();
  });
  $('sort').addEventListener('change', (event) => {
    view.sort = event.target.value;
    draw();
  });
  $('page-size').addEventListener('change', (event) => {
    view.pageSize = Number(event.target.value);
    view.page = 0;
    draw();
  });
  $('page-prev').addEventListener('click', () => { view.page -= 1; draw(); });
  $('page-next').addEventListener('click', () => { view.page += 1; draw(); });
  $('detail-close').addEventListener('click', () => detail.close());
  $('detail').addEventListener('close', () => detail.onClosed());
  $('detail-reload').addEventListener('click', () => detail.reload(tasks.get(detail.currentId())));
  $('detail-priority-form').addEventListener('submit', onPriority);
  $('detail-priority').addEventListener('input', (event) => { event.target.dataset.edited = '1'; });
  $('limits-form').addEventListener('submit', onLimits);
  $('forget-token').addEventListener('click', forgetToken);
  $('forget-token').hidden = !api.token();
  renderAddSessions();
  loadSessions().catch((error) => showError(describe(error)));
  authorized(() => overview.loadLimits()).catch((error) => showError(`The limits cannot be read: ${describe(error)}`));
  follow();
  followOverview();
  draw();
}

start();
