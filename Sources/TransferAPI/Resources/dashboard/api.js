// The dashboard's only way to the daemon: JSON requests to /v1 on this origin, with the bearer
// token (kept in sessionStorage, never in the URL) when one was given.

const TOKEN_KEY = 'transferd.dashboard.token';

/** An answer that is not 2xx: the API's error code and message. */
export class APIError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** One request; resolves with the decoded JSON (null for an empty body), throws APIError. */
export async function request(method, path, body, { signal } = {}) {
  const headers = { Accept: 'application/json' };
  const bearer = token();
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  const init = { method, headers, signal, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const error = data && data.error ? data.error : {};
    throw new APIError(response.status, error.code || 'http_error', error.message || `HTTP ${response.status}`, error.field);
  }
  return data;
}

/** Every session the token sees, following the list's cursor (at most 20 pages). */
export async function allSessions() {
  const sessions = [];
  let cursor = null;
  for (let page = 0; page < 20; page += 1) {
    const query = cursor ? `?limit=1000&cursor=${encodeURIComponent(cursor)}` : '?limit=1000';
    const answer = await request('GET', `/v1/sessions${query}`);
    sessions.push(...answer.items);
    cursor = answer.next;
    if (!cursor) break;
  }
  return sessions;
}

/**
 * One read of the change feed of every task the token sees (GET /v1/tasks): answers at once
 * with what changed after `after`, or holds up to `wait` seconds for a change.
 */
export function taskChanges(after, wait, signal) {
  return request('GET', `/v1/tasks?after=${after}&wait=${wait}&limit=1000`, undefined, { signal });
}
