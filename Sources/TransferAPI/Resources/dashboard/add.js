// The "Add transfers" form: URLs one a line (blank lines and lines starting with # are left
// out) with options for every task, turned into one all-or-nothing batch
// (POST /v1/sessions/{sid}/tasks:batch). A refusal names its line.

/** An error of the form itself, before anything is sent. */
export class FormError extends Error {
  constructor(message, fieldId) {
    super(message);
    this.fieldId = fieldId;
  }
}

function urlLines(text) {
  return text.split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
}

function headerLines(text) {
  const headers = {};
  text.split('\n').map((line) => line.trim()).filter(Boolean).forEach((line, index) => {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new FormError(`Header line ${index + 1} must be "Name: value"`, 'add-headers');
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  });
  return headers;
}

// The file name a URL's download gets in a destination folder.
function fileName(url, index) {
  let name = '';
  try {
    const path = new URL(url).pathname;
    name = decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
  } catch {
    name = '';
  }
  name = name.replace(/[\u0000-\u001f\u007f/]/g, '_');
  return name && name !== '.' && name !== '..' ? name : `download-${index + 1}`;
}

/** The batch's task specs from the form's fields (`elements` of the form). Throws FormError. */
export function taskSpecs(fields) {
  const urls = urlLines(fields.urls.value);
  if (!urls.length) throw new FormError('Give at least one URL.', 'add-urls');
  if (urls.length > 10000) throw new FormError('At most 10,000 URLs at once.', 'add-urls');
  const kind = fields.kind.value;
  const priority = Number(fields.priority.value);
  if (fields.priority.value === '' || !(priority >= 0 && priority <= 1)) throw new FormError('The priority must be a number from 0 to 1.', 'add-priority');
  const headers = headerLines(fields.headers.value);
  const folder = fields.folder.value.trim().replace(/^\/+|\/+$/g, '');
  const limit = fields.limit.value.trim();
  const limitBytes = limit === '' ? null : Math.round(Number(limit) * 1024);
  if (limit !== '' && !(limitBytes > 0)) throw new FormError('The speed limit must be a number of KiB/s above 0.', 'add-limit');
  const segmentsText = fields.segments.value.trim();
  const segments = segmentsText === '' ? null : Number(segmentsText);
  if (segments !== null && !(Number.isInteger(segments) && segments >= 1 && segments <= 16)) {
    throw new FormError('Connections per file must be a whole number from 1 to 16.', 'add-segments');
  }
  const checksum = fields.checksum.value.trim();
  if (checksum && urls.length > 1) throw new FormError('A checksum is for one URL; give it one URL.', 'add-checksum');
  if (kind !== 'download' && (folder || segments !== null)) {
    throw new FormError('A destination folder and connections per file are for downloads.', folder ? 'add-folder' : 'add-segments');
  }

  return urls.map((url, index) => {
    const request = { url };
    if (Object.keys(headers).length) request.headers = headers;
    if (fields.networkServiceType.value) request.networkServiceType = fields.networkServiceType.value;
    const spec = { kind, request, priority };
    if (folder) {
      spec.destination = `${folder}/${fileName(url, index)}`;
      spec.conflict = fields.conflict.value;
    }
    if (limitBytes) spec.bandwidthLimit = { downloadBytesPerSecond: limitBytes };
    if (segments !== null) spec.segments = segments;
    if (checksum) spec.checksum = checksum;
    return spec;
  });
}

/** "line 3 (https://…): message" for a batch refusal whose field is `tasks[2]…`. */
export function refusalWhere(field, specs) {
  const match = /^tasks\[(\d+)\]/.exec(field || '');
  if (!match) return '';
  const index = Number(match[1]);
  const spec = specs[index];
  return spec ? `URL ${index + 1} (${spec.request.url})` : `task ${index + 1}`;
}
