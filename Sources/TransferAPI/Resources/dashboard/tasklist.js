// The task list as shown: every task the token sees, across sessions, narrowed by the status
// tab, the session filter and the search box, sorted, and cut into pages. Pure functions over
// plain objects, so 10,000 tasks cost one pass and one sort per drawing, and only one page of
// rows is ever in the document.
import { displayState } from './states.js';

/** A session's name: its description, its background identifier, or its id. */
export function sessionName(session, id) {
  if (id === 'shared') return 'Shared';
  if (session && session.description) return session.description;
  if (session && session.identifier) return session.identifier;
  return `Session ${id.slice(0, 8)}`;
}

function lastComponent(path) {
  const clean = path.split(/[?#]/)[0].replace(/\/+$/, '');
  const slash = clean.lastIndexOf('/');
  return slash >= 0 ? clean.slice(slash + 1) : clean;
}

/**
 * A task's name, as a download manager names it, by its file: the file's, the suggested one, its
 * destination's, its URL's last part; then its description (clients such as transferctl describe
 * every task alike, so the description is a fallback and shown in the details).
 */
export function taskName(task) {
  if (task.location) return lastComponent(task.location);
  if (task.response && task.response.suggestedFilename) return task.response.suggestedFilename;
  if (task.destination) return lastComponent(task.destination);
  const url = task.originalRequest ? task.originalRequest.url : '';
  let name = '';
  try {
    name = decodeURIComponent(lastComponent(new URL(url).pathname));
  } catch {
    name = lastComponent(url);
  }
  return name || task.description || (task.kind === 'stream' ? 'stream' : url) || `Task ${task.id}`;
}

/** Bytes moved so far and expected, by the task's direction. */
export function amounts(task) {
  const p = task.progress;
  if (task.kind === 'upload') return { done: p.bytesSent, total: p.bytesExpectedToSend };
  return { done: p.bytesReceived, total: p.bytesExpectedToReceive };
}

/** 0–1, or null when the size is unknown. */
export function fraction(task, state) {
  if (state.key === 'done') return 1;
  const { done, total } = amounts(task);
  if (task.kind !== 'upload' && task.progress.fractionCompleted != null) return task.progress.fractionCompleted;
  return total ? Math.min(1, done / total) : null;
}

/** One shown task: the API's object with what the list needs to filter and sort. */
export function present(task, sessions, now) {
  const state = displayState(task, now);
  const session = sessions.get(task.sessionId);
  const name = taskName(task);
  const sessionLabel = sessionName(session, task.sessionId);
  const url = task.originalRequest ? task.originalRequest.url : `${task.host || ''}:${task.port || ''}`;
  return {
    task, state, name, sessionLabel, url,
    haystack: `${name}\n${url}\n${task.description || ''}\n${sessionLabel}\n${task.sessionId}\n#${task.id}`.toLowerCase(),
  };
}

export const SORTS = {
  newest: (a, b) => b.task.id - a.task.id,
  oldest: (a, b) => a.task.id - b.task.id,
  name: (a, b) => a.name.localeCompare(b.name) || b.task.id - a.task.id,
  size: (a, b) => (amounts(b.task).total ?? -1) - (amounts(a.task).total ?? -1) || b.task.id - a.task.id,
  progress: (a, b) => (fraction(b.task, b.state) ?? -1) - (fraction(a.task, a.state) ?? -1) || b.task.id - a.task.id,
  speed: (a, b) => (b.task.progress.bytesPerSecond || 0) - (a.task.progress.bytesPerSecond || 0) || b.task.id - a.task.id,
  state: (a, b) => a.state.key.localeCompare(b.state.key) || b.task.id - a.task.id,
};

/**
 * Everything the table shows: counts per tab (after the session filter and the search, before
 * the tab), the matching tasks in order, and the page of them (`page` is clamped).
 */
export function arrange(tasks, sessions, { tab = 'all', session = '', search = '', sort = 'newest', page = 0, pageSize = 50 }, now = Date.now()) {
  const needle = search.trim().toLowerCase();
  const counts = { all: 0, active: 0, queued: 0, waiting: 0, paused: 0, done: 0, failed: 0, cancelled: 0 };
  const matching = [];
  for (const task of tasks.values()) {
    if (session && task.sessionId !== session) continue;
    const shown = present(task, sessions, now);
    if (needle && !shown.haystack.includes(needle)) continue;
    counts.all += 1;
    counts[shown.state.key] += 1;
    if (tab === 'all' || shown.state.key === tab) matching.push(shown);
  }
  matching.sort(SORTS[sort] || SORTS.newest);
  const pages = Math.max(1, Math.ceil(matching.length / pageSize));
  const current = Math.min(Math.max(0, page), pages - 1);
  const rows = matching.slice(current * pageSize, (current + 1) * pageSize);
  return { counts, matching, rows, page: current, pages };
}
