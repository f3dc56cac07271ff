// What a person reads for a task: the API's state and phase (URLSession's words) turned into a
// download manager's (downloading, queued, waiting, paused, done, failed, cancelled), with the
// reason in words and the URLError behind it for a hover.

/** The status tabs, in order: key, label. `all` counts every task. */
export const TABS = [
  ['all', 'All'],
  ['active', 'Active'],
  ['queued', 'Queued'],
  ['waiting', 'Waiting'],
  ['paused', 'Paused'],
  ['done', 'Done'],
  ['failed', 'Failed'],
  ['cancelled', 'Cancelled'],
];

/** Finished tasks: what "Clear finished" deletes and what can be retried or deleted. */
export const FINISHED = new Set(['done', 'failed', 'cancelled']);

// URLError codes (NSURLError*) in words; the name and number go in the hover.
const ERROR_WORDS = {
  [-1]: 'An unknown error',
  [-999]: 'Cancelled',
  [-1000]: 'The URL is not valid',
  [-1001]: 'The server did not answer in time',
  [-1002]: 'This kind of URL is not supported',
  [-1003]: "The server's name could not be found",
  [-1004]: 'Could not connect to the server',
  [-1005]: 'The connection was lost',
  [-1006]: 'The name lookup failed',
  [-1007]: 'Too many redirects',
  [-1008]: 'The resource is unavailable',
  [-1009]: 'Not connected to the network',
  [-1011]: "The server's answer was not valid",
  [-1012]: 'Authentication was cancelled',
  [-1013]: 'The server asks for a login',
  [-1014]: 'The resource is empty',
  [-1016]: 'The content could not be decoded',
  [-1017]: "The server's answer could not be read",
  [-1100]: 'The file does not exist',
  [-1101]: 'The file is a folder',
  [-1102]: 'No permission to read the file',
  [-1103]: 'The answer is larger than allowed',
  [-1200]: 'A secure connection could not be made',
  [-1202]: "The server's certificate is not trusted",
  [-3000]: 'The file could not be created',
  [-3003]: 'The file could not be written',
};

const REASON_WORDS = {
  network_policy: "Blocked by the daemon's network policy",
  destination_exists: 'The destination file already exists',
};

const STATUS_WORDS = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  408: 'Request Timeout', 410: 'Gone', 416: 'Range Not Satisfiable', 429: 'Too Many Requests',
  500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

function statusWords(status) {
  return `The server answered ${status} ${STATUS_WORDS[status] || ''}`.trim();
}

/** A task error in words: the reason's, else the code's, else the daemon's message. */
export function errorWords(error) {
  return REASON_WORDS[error.reason] || ERROR_WORDS[error.code] || error.message || `Error ${error.code}`;
}

/** The hover of an error: URLError's name and code, and the daemon's own message. */
export function errorDetail(error) {
  return `NSURLError ${error.name} (${error.code})${error.reason ? `, ${error.reason}` : ''}: ${error.message}`;
}

function verb(task) {
  if (task.kind === 'upload') return 'uploading';
  if (task.kind === 'stream') return 'connected';
  return 'downloading';
}

/**
 * The task as a person reads it: `key` (its tab), `label`, `reason` (words, may be empty) and
 * `detail` (for a hover: the URLError code, the phase).
 */
export function displayState(task, now = Date.now()) {
  if (task.state === 'completed') {
    const error = task.error;
    if (error && error.code === -999) {
      return { key: 'cancelled', label: 'cancelled', reason: error.resumeData ? 'Resume data kept' : '', detail: errorDetail(error) };
    }
    const status = task.response && task.response.statusCode;
    // A download of an HTTP error answer fails with a URLError (fileDoesNotExist for a 404, as
    // URLSession maps it); the status says it better.
    if (error && status >= 400 && !error.reason) {
      return { key: 'failed', label: 'failed', reason: statusWords(status), detail: errorDetail(error) };
    }
    if (error) return { key: 'failed', label: 'failed', reason: errorWords(error), detail: errorDetail(error) };
    // URLSession completes a 404 without an error; a download manager's user calls it failed.
    if (status >= 400) {
      return {
        key: 'failed', label: 'failed', reason: statusWords(status),
        detail: `HTTP ${status}: the task completed without a URLError, with the server's error answer as its body`,
      };
    }
    return { key: 'done', label: 'done', reason: '', detail: '' };
  }
  if (task.state === 'canceling') return { key: 'cancelled', label: 'cancelling', reason: '', detail: '' };
  if (task.state === 'suspended') return { key: 'paused', label: 'paused', reason: '', detail: `phase ${task.phase}` };
  switch (task.phase) {
    case 'queued':
      return { key: 'queued', label: 'queued', reason: '', detail: 'Waiting for a free transfer slot' };
    case 'retrying':
      return { key: 'waiting', label: 'waiting', reason: `Retry ${task.retryCount + 1} after a failure`, detail: 'phase retrying' };
    case 'waiting': {
      const begin = task.earliestBeginDate ? Date.parse(task.earliestBeginDate) : NaN;
      if (begin > now) {
        return { key: 'waiting', label: 'waiting', reason: `Starts at ${new Date(begin).toLocaleString()}`, detail: 'earliestBeginDate' };
      }
      return { key: 'waiting', label: 'waiting', reason: 'Waiting for connectivity', detail: 'phase waiting: the host could not be reached; tried again periodically' };
    }
    case 'connecting':
      return { key: 'active', label: verb(task), reason: 'Connecting', detail: 'phase connecting' };
    default:
      return { key: 'active', label: verb(task), reason: '', detail: `phase ${task.phase}` };
  }
}
