// Draws sessions and their tasks: one section with a table per session, one <tbody> per task (a
// row of facts and a row of actions), kept and updated in place (so a focused button or a half-typed priority survives an update).
// Text from the API is only ever set as text, never parsed as HTML.
import * as format from './format.js';

const COLUMNS = ['Task', 'State', 'Progress', 'Bytes', 'Speed', 'Remaining', 'Priority', 'Service'];

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'text') node.textContent = value;
    else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child);
  return node;
}

// One wrapper per cell, so a card (narrow screens) is a grid of label and value.
function cell(label, ...children) {
  return element('td', { 'data-label': label }, element('div', { class: 'value' }, ...children));
}

function sessionSection(session) {
  const id = session.id;
  const heading = element('h3', { id: `session-${id}-heading` },
    element('span', { class: 'session-name', text: id === 'shared' ? 'Shared session' : `Session ${id}` }),
    element('span', { class: 'session-meta' }));
  const table = element('table', { class: 'tasks', 'aria-labelledby': heading.id },
    element('thead', {}, element('tr', {}, ...COLUMNS.map((name) => element('th', { scope: 'col', text: name })))));
  const none = element('p', { class: 'no-tasks', text: 'No tasks.' });
  return element('section', { class: 'session', 'data-session-id': id, 'aria-labelledby': heading.id }, heading, none, table);
}

function actionButton(action, label, taskId) {
  return element('button', { type: 'button', 'data-action': action, 'aria-label': `${label}: task ${taskId}`, text: label });
}

function taskRow(task) {
  const id = task.id;
  const progress = element('progress', { max: '1', 'aria-label': `Progress of task ${id}` });
  const priorityInput = element('input', {
    id: `priority-${id}`, class: 'priority-input', type: 'number', min: '0', max: '1', step: '0.05', required: '',
  });
  const priorityForm = element('form', { class: 'priority-form', 'data-task-id': String(id) },
    element('label', { for: priorityInput.id, class: 'visually-hidden', text: `Priority of task ${id}` }),
    priorityInput,
    element('button', { type: 'submit', 'aria-label': `Set priority: task ${id}`, text: 'Set' }));
  const resumeData = element('a', { class: 'resume-data', hidden: '', download: `task-${id}.resumedata`, text: 'Resume data' });
  const facts = element('tr', { class: 'facts' },
    element('th', { scope: 'row', 'data-label': 'Task' }, element('div', { class: 'value' },
      element('span', { class: 'task-id', text: `#${id}` }), ' ',
      element('span', { class: 'kind' }),
      element('div', { class: 'url' }))),
    cell('State', element('span', { class: 'state' }), ' ', element('span', { class: 'phase' }), element('div', { class: 'error' })),
    cell('Progress', progress, ' ', element('span', { class: 'percent' })),
    cell('Bytes', element('span', { class: 'bytes' })),
    cell('Speed', element('span', { class: 'speed' })),
    cell('Remaining', element('span', { class: 'remaining' })),
    cell('Priority', priorityForm),
    cell('Service', element('span', { class: 'service' })));
  const actions = element('tr', { class: 'controls' },
    element('td', { colspan: String(COLUMNS.length), 'data-label': 'Actions' }, element('div', { class: 'value actions' },
      actionButton('suspend', 'Suspend', id),
      actionButton('resume', 'Resume', id),
      actionButton('cancel', 'Cancel', id),
      actionButton('cancel-resume-data', 'Cancel, keep resume data', id),
      resumeData)));
  return element('tbody', { class: 'task', 'data-task-id': String(id) }, facts, actions);
}

function setText(row, selector, text) {
  const node = row.querySelector(selector);
  if (node.textContent !== text) node.textContent = text;
}

function updateRow(row, task) {
  const p = task.progress;
  const download = task.kind === 'download';
  const received = task.kind === 'upload' ? p.bytesSent : p.bytesReceived;
  const expected = task.kind === 'upload' ? p.bytesExpectedToSend : p.bytesExpectedToReceive;
  const fraction = task.kind === 'upload'
    ? (expected ? Math.min(1, p.bytesSent / expected) : null)
    : p.fractionCompleted;
  row.dataset.state = task.state;
  setText(row, '.kind', task.kind);
  const request = `${task.originalRequest.method} ${task.originalRequest.url}`;
  setText(row, '.url', request);
  row.querySelector('.url').title = request;  // shortened with an ellipsis on wide screens
  setText(row, '.state', task.state);
  setText(row, '.phase', task.phase);
  setText(row, '.error', task.error ? `${task.error.name}: ${task.error.message}` : '');

  const bar = row.querySelector('progress');
  const done = task.state === 'completed' && !task.error;
  const value = done ? 1 : fraction;
  if (value == null) {
    bar.removeAttribute('value');  // indeterminate: the size is not known
  } else if (bar.value !== value) {
    bar.value = value;
  }
  setText(row, '.percent', format.percent(value));
  setText(row, '.bytes', format.byteProgress(received, expected));
  const moving = task.state === 'running';
  setText(row, '.speed', moving ? format.rate(p.bytesPerSecond) : '–');
  setText(row, '.remaining', moving ? format.duration(p.secondsRemaining) : '–');
  setText(row, '.service', task.networkServiceType);

  const input = row.querySelector('.priority-input');
  // Not while someone edits it: an edit not yet sent (`edited`, set by the controller) is kept
  // even when focus has moved on to its Set button.
  if (document.activeElement !== input && !input.dataset.edited && input.value !== String(task.priority)) {
    input.value = String(task.priority);
  }

  const live = task.state === 'running' || task.state === 'suspended';
  row.querySelector('[data-action="suspend"]').disabled = task.state !== 'running';
  row.querySelector('[data-action="resume"]').disabled = task.state !== 'suspended';
  row.querySelector('[data-action="cancel"]').disabled = !live;
  const keep = row.querySelector('[data-action="cancel-resume-data"]');
  keep.hidden = !download;
  keep.disabled = !live;
  row.querySelector('.priority-form button').disabled = task.state === 'completed';
  input.disabled = task.state === 'completed';

  const link = row.querySelector('.resume-data');
  const resumeData = task.error && task.error.resumeData;
  if (resumeData && link.dataset.value !== resumeData) {
    // Offered as a file (the base64 text the API gives, to send back as `resumeData`).
    if (link.href) URL.revokeObjectURL(link.href);
    link.href = URL.createObjectURL(new Blob([resumeData], { type: 'text/plain' }));
    link.dataset.value = resumeData;
    link.title = 'Resume data (base64), to create a download that continues from here';
  }
  link.hidden = !resumeData;
}

/** Brings the page in line with `sessions` (in list order) and `tasks` (a Map by id). */
export function render(container, sessions, tasks) {
  const bySession = new Map();
  for (const task of tasks.values()) {
    if (!bySession.has(task.sessionId)) bySession.set(task.sessionId, []);
    bySession.get(task.sessionId).push(task);
  }
  const known = new Map(sessions.map((session) => [session.id, session]));
  // A task of a session the list has not caught up with yet still shows.
  for (const id of bySession.keys()) if (!known.has(id)) known.set(id, { id, kind: '', state: '' });

  const wanted = new Set(known.keys());
  for (const section of [...container.children]) {
    if (!wanted.has(section.dataset.sessionId)) section.remove();
  }
  let previous = null;
  for (const session of known.values()) {
    let section = container.querySelector(`section[data-session-id="${CSS.escape(session.id)}"]`);
    if (!section) section = sessionSection(session);
    const placeAfter = previous ? previous.nextSibling : container.firstChild;
    if (section !== placeAfter) container.insertBefore(section, placeAfter);
    previous = section;
    const meta = [session.kind, session.state, session.description].filter(Boolean).join(' · ');
    setText(section, '.session-meta', meta ? ` (${meta})` : '');

    const list = (bySession.get(session.id) || []).sort((a, b) => b.id - a.id);
    const table = section.querySelector('table');
    const ids = new Set(list.map((task) => String(task.id)));
    for (const row of table.querySelectorAll('tbody.task')) if (!ids.has(row.dataset.taskId)) row.remove();
    let before = table.tHead.nextSibling;
    for (const task of list) {
      let row = table.querySelector(`tbody.task[data-task-id="${task.id}"]`);
      if (!row) row = taskRow(task);
      if (row !== before) table.insertBefore(row, before);
      before = row.nextSibling;
      updateRow(row, task);
    }
    section.querySelector('table').hidden = list.length === 0;
    section.querySelector('.no-tasks').hidden = list.length > 0;
  }
}

/** The session choices of the new-task form: shared, the active sessions, and a new one. */
export function renderSessionChoices(select, sessions) {
  const chosen = select.value;
  const active = sessions.filter((session) => session.state === 'active' && session.id !== 'shared');
  const options = [element('option', { value: 'shared', text: 'shared' })];
  for (const session of active) {
    const label = [session.id, session.kind, session.description].filter(Boolean).join(' · ');
    options.push(element('option', { value: session.id, text: label }));
  }
  options.push(element('option', { value: 'new', text: 'a new default session' }));
  select.replaceChildren(...options);
  if ([...select.options].some((option) => option.value === chosen)) select.value = chosen;
}
