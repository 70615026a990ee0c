// The page in front of chock serve. Every fact comes from serve's /api/
// routes, which are the daemon's verbs. Text from a log is only ever set as
// textContent, never as markup, so nothing a session wrote can become HTML.
'use strict';

const PAGE = 200;
const main = document.getElementById('main');
const banner = document.getElementById('banner');
const crumb = document.getElementById('crumb');
let view = null; // the current view's cleanup, called when the hash changes

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === 'text') node.textContent = value;
    else if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

class ApiError extends Error {
  constructor(body, status) {
    super(body.error || ('HTTP ' + status));
    this.kind = body.kind || 'unknown';
    this.body = body;
  }
}

async function api(path, options) {
  let response;
  try {
    response = await fetch(path, options);
  } catch (e) {
    throw new ApiError({ kind: 'serve_down', error: 'chock serve is not reachable (' + e.message + ')' }, 0);
  }
  let body = {};
  try { body = await response.json(); } catch (e) { /* not JSON: the status says it */ }
  if (!response.ok) throw new ApiError(body, response.status);
  return body;
}

function post(path, body) {
  return api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

// What the banner says about a failure, and how long until the next try.
function explain(err) {
  if (err.kind === 'protocol') {
    return ['The daemon speaks chock-control ' + err.body.daemon_protocol + ' and this chock serve speaks chock-control ' +
      err.body.serve_protocol + ': update the older of the two. Retrying.', 10000];
  }
  if (err.kind === 'daemon_down') return ['The daemon is not reachable: ' + err.message + '. Retrying every few seconds.', 3000];
  if (err.kind === 'serve_down') return [err.message + '. Retrying every few seconds.', 3000];
  return [err.message, 0];
}

function showBanner(text, bad) {
  banner.textContent = text;
  banner.className = bad ? 'bad' : '';
  banner.hidden = false;
}

function hideBanner() { banner.hidden = true; }

// Runs `load` until it succeeds, saying why in the banner between tries.
async function retrying(load, isCurrent) {
  for (;;) {
    try {
      const value = await load();
      hideBanner();
      return value;
    } catch (err) {
      if (!isCurrent()) throw err;
      const [text, wait] = explain(err);
      showBanner(text, true);
      if (!wait) throw err;
      await new Promise((resolve) => setTimeout(resolve, wait));
      if (!isCurrent()) throw err;
    }
  }
}

function recentProjects() {
  try { return JSON.parse(localStorage.getItem('chock.projects') || '[]'); } catch (e) { return []; }
}

function remember(project) {
  const list = [project, ...recentProjects().filter((p) => p !== project)].slice(0, 10);
  try { localStorage.setItem('chock.projects', JSON.stringify(list)); } catch (e) { /* private mode */ }
}

const projectHref = (project) => '#/project/' + encodeURIComponent(project);
const sessionHref = (project, id) => '#/session/' + encodeURIComponent(project) + '/' + encodeURIComponent(id);

function route() {
  if (view) view();
  view = null;
  hideBanner();
  main.replaceChildren();
  crumb.replaceChildren();
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] === 'project' && parts[1]) return projectView(parts[1]);
  if (parts[0] === 'session' && parts[1] && parts[2]) return sessionView(parts[1], parts[2]);
  return homeView();
}

function homeView() {
  const input = el('input', { name: 'project', placeholder: '/home/you/project', required: '', 'aria-label': 'Project directory' });
  main.append(
    el('h1', { text: 'Projects' }),
    el('form', { onsubmit: (e) => { e.preventDefault(); location.hash = projectHref(input.value.trim()); } },
      el('label', { text: 'Project directory on the daemon\'s machine' }), input,
      el('button', { type: 'submit', text: 'Open' })),
  );
  const recent = recentProjects();
  if (recent.length) {
    main.append(el('h2', { text: 'Recent' }),
      el('ul', { class: 'sessions' }, ...recent.map((p) => el('li', {}, el('a', { href: projectHref(p), text: p })))));
  }
}

function statusBadge(row) {
  const status = row.status || 'running';
  const text = status === 'ended' && row.reason ? 'ended: ' + row.reason : status;
  return el('span', { class: 'status ' + status, text });
}

function projectView(project) {
  let current = true;
  view = () => { current = false; };
  remember(project);
  crumb.append(el('a', { href: projectHref(project), text: project }));
  const list = el('ul', { class: 'sessions', id: 'sessions' });
  const message = el('textarea', { name: 'message', required: '', placeholder: 'What should the session do?', 'aria-label': 'Message' });
  const button = el('button', { type: 'submit', text: 'Start session' });
  const form = el('form', { id: 'start', onsubmit: async (e) => {
    e.preventDefault();
    button.disabled = true;
    try {
      const started = await post('/api/sessions', { project, message: message.value });
      location.hash = sessionHref(project, started.session);
    } catch (err) {
      showBanner(explain(err)[0], true);
    } finally { button.disabled = false; }
  } }, message, button);
  main.append(el('h1', { text: 'Sessions' }), el('h2', { text: 'Start a session' }), form, el('h2', { text: 'Sessions' }), list);
  retrying(() => api('/api/sessions?project=' + encodeURIComponent(project)), () => current).then((body) => {
    if (!body.sessions.length) list.append(el('li', { class: 'meta', text: 'No sessions in this project yet.' }));
    for (const [depth, row] of nested(body.sessions)) {
      list.append(el('li', { class: depth ? 'subagent depth-' + Math.min(depth, 4) : '' }, el('a', { href: sessionHref(project, row.id) },
        el('span', { text: row.title || row.id }), statusBadge(row),
        el('div', { class: 'meta', text: [depth ? 'subagent of ' + row.parent : '', row.started_at, row.model, row.events + ' events',
          row.pending_approvals ? row.pending_approvals + ' waiting for you' : ''].filter(Boolean).join(' · ') }))));
    }
  }, () => {});
}

// Sessions with each subagent right under the session that spawned it,
// and how deep it is; one whose parent is not listed stands alone.
function nested(rows) {
  const ids = new Set(rows.map((r) => r.id));
  const out = [];
  const place = (row, depth) => {
    if (out.length >= rows.length) return;
    out.push([depth, row]);
    rows.filter((r) => r.parent === row.id).reverse().forEach((r) => place(r, depth + 1));
  };
  rows.filter((r) => !r.parent || !ids.has(r.parent)).forEach((r) => place(r, 0));
  return out;
}

// The other session an event names (a spawn's child, a subagent's
// parent), as a link to its page.
function linked(project, event) {
  const other = event.type === 'session.open' ? event.parent
    : (event.type === 'tool.call' || event.type === 'subagent.end') ? event.session : null;
  if (typeof other !== 'string' || !other) return null;
  const label = event.type === 'session.open' ? 'parent session ' : 'subagent ';
  return el('a', { class: 'session-link', href: sessionHref(project, other), text: label + other });
}

function summary(event) {
  switch (event.type) {
    case 'user.message': case 'assistant.message': {
      const calls = (event.tool_calls || []).map((c) => 'calls ' + c.name);
      return [event.text, ...calls].filter(Boolean).join('\n');
    }
    case 'approval.request': return (event.question || '') + (event.action ? ' (' + event.action + ')' : '');
    case 'approval.answer': return (event.text != null ? '"' + event.text + '"' : event.answer) + ' to ' + event.request_id + (event.by ? ', by ' + event.by : '');
    case 'session.end': return event.reason + (event.detail ? ': ' + event.detail : '');
    case 'session.open': return 'model ' + event.model + ' in ' + event.project;
    case 'title.set': return event.title;
    case 'decision': return event.action + ': ' + event.decision;
    case 'tool.result': return (event.ok ? '' : 'failed: ') + (event.output || '');
    default: {
      const rest = Object.assign({}, event);
      delete rest.id; delete rest.at; delete rest.type;
      const text = JSON.stringify(rest);
      return text === '{}' ? '' : text.slice(0, 500);
    }
  }
}

// A model's thinking before its answer, folded: the summary says how much,
// opening it shows the words (as text, like everything from the log).
function thinking(event) {
  const parts = event.type === 'assistant.message' ? (event.reasoning || []) : [];
  if (!parts.length) return null;
  const text = parts.map((r) => r.text || '(not shown by the provider)').join('\n\n');
  return el('details', { class: 'thinking' },
    el('summary', { text: 'thought (' + text.length + ' characters)' }),
    el('div', { class: 'text', text }));
}

function eventItem(project, event) {
  return el('li', { class: String(event.type).replace(/\./g, '-'), 'data-id': String(event.id) },
    el('div', { class: 'kind', text: '#' + event.id + ' ' + event.type + ' · ' + (event.at || '') }),
    thinking(event),
    linked(project, event),
    el('div', { class: 'text', text: summary(event) }));
}

function sessionView(project, id) {
  let current = true;
  let source = null;
  let timer = null;
  view = () => { current = false; if (source) source.close(); clearTimeout(timer); };
  crumb.append(el('a', { href: projectHref(project), text: project }), ' / ', el('span', { text: id }));
  const title = el('h1', { id: 'title', text: id });
  const badge = el('span', { id: 'status' });
  const question = el('section', { id: 'question', hidden: '' });
  const older = el('button', { class: 'secondary', id: 'older', text: 'Load older events', hidden: '' });
  const events = el('ol', { class: 'events', id: 'events' });
  const ending = el('p', { class: 'end', id: 'ended', hidden: '' });
  main.append(title, badge, question, older, events, ending);

  const pending = new Map(); // request id -> approval.request event
  let lastId = 0;
  let oldest = 1;

  function showQuestion() {
    const [request] = pending.values();
    question.replaceChildren();
    question.hidden = !request;
    if (!request) return;
    const note = el('p', { class: 'meta' });
    const controls = () => question.querySelectorAll('button, input');
    // One delivery, whichever kind: the buttons and the field stay off
    // until the daemon says whether the session took it.
    const deliver = async (verb, body, done) => {
      for (const c of controls()) c.disabled = true;
      try {
        await post('/api/sessions/' + encodeURIComponent(id) + '/' + verb, { project, request: request.request_id, ...body });
        note.textContent = done + '; waiting for the session to record it.';
      } catch (err) {
        note.textContent = explain(err)[0];
        for (const c of controls()) c.disabled = false;
      }
    };
    question.append(el('h2', { text: 'The session asks' }),
      el('div', { class: 'text', text: request.question || request.action }),
      el('div', { class: 'meta', text: request.action + ' · request ' + request.request_id }));
    if (request.kind === 'question') {
      // The model asked the person something (ask_user): a line of text.
      const field = el('input', { id: 'reply', type: 'text', 'aria-label': 'Your answer', autocomplete: 'off' });
      const send = () => {
        const text = field.value.trim();
        if (!text) { note.textContent = 'Write an answer first.'; return; }
        deliver('reply', { text }, 'Answered');
      };
      field.addEventListener('keydown', (e) => { if (e.key === 'Enter') send(); });
      question.append(el('div', { class: 'buttons' }, field,
        el('button', { class: 'yes', text: 'Send', onclick: send })), note);
      return;
    }
    question.append(el('div', { class: 'buttons' },
        el('button', { class: 'yes', text: 'Yes', onclick: () => deliver('answer', { answer: 'yes' }, 'Answered yes') }),
        el('button', { class: 'no', text: 'No', onclick: () => deliver('answer', { answer: 'no' }, 'Answered no') })),
      note);
  }

  function track(event) {
    if (event.type === 'approval.request') pending.set(event.request_id, event);
    if (event.type === 'approval.answer') pending.delete(event.request_id);
    if (event.type === 'session.end' && event.reason !== 'handover') {
      pending.clear();
      badge.replaceChildren(statusBadge({ status: 'ended', reason: event.reason }));
    }
    if (event.type === 'title.set' && event.title) title.textContent = event.title;
  }

  function setRow(row) {
    if (row.title) title.textContent = row.title;
    badge.replaceChildren(statusBadge(row));
  }

  function connect() {
    if (!current) return;
    const url = '/api/sessions/' + encodeURIComponent(id) + '/watch?project=' + encodeURIComponent(project) + '&after=' + lastId;
    source = new EventSource(url);
    source.addEventListener('open', hideBanner);
    source.addEventListener('row', (e) => setRow(JSON.parse(e.data)));
    source.addEventListener('log', (e) => {
      const event = JSON.parse(e.data);
      if (event.id <= lastId) return;
      lastId = event.id;
      track(event);
      events.append(eventItem(project, event));
      showQuestion();
    });
    source.addEventListener('end', () => {
      source.close();
      ending.textContent = 'The session has ended.';
      ending.hidden = false;
    });
    source.addEventListener('failure', (e) => {
      source.close();
      const err = new ApiError(JSON.parse(e.data), 502);
      showBanner(explain(err)[0] + ' Reconnecting from event ' + lastId + '.', true);
      timer = setTimeout(connect, 2000);
    });
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CONNECTING) {
        showBanner('Lost the connection to chock serve; reconnecting from event ' + lastId + '.', false);
        return;
      }
      // The browser gave up (serve answered with an error): ask why, say
      // so, and try again from the last event held.
      source.close();
      api('/api/sessions/' + encodeURIComponent(id) + '?project=' + encodeURIComponent(project)).then(() => {
        timer = setTimeout(connect, 1000);
      }, (err) => {
        const [text, wait] = explain(err);
        showBanner(text, true);
        if (wait) timer = setTimeout(connect, wait);
      });
    });
  }

  older.addEventListener('click', async () => {
    older.disabled = true;
    try {
      const page = await api('/api/sessions/' + encodeURIComponent(id) + '/events?before=' + oldest + '&limit=' + PAGE);
      const items = page.events.map((e) => eventItem(project, e));
      events.prepend(...items);
      if (page.events.length) oldest = page.events[0].id;
      older.hidden = !page.more;
    } catch (err) {
      showBanner(explain(err)[0], true);
    } finally { older.disabled = false; }
  });

  retrying(() => api('/api/sessions/' + encodeURIComponent(id) + '?project=' + encodeURIComponent(project)), () => current)
    .then((row) => {
      setRow(row);
      // A long session starts at its last page; older pages come from read.
      lastId = Math.max(0, (row.events || 0) - PAGE);
      oldest = lastId + 1;
      older.hidden = lastId === 0;
      return findPending(row.pending_approvals || 0).catch(() => {}).then(() => {
        showQuestion();
        connect();
      });
    }, () => {});

  // A question asked before the last page is still the person's to answer:
  // look back through read for requests the row says are waiting.
  async function findPending(waiting) {
    const answered = new Set();
    let before = lastId + 1;
    while (pending.size < waiting && before > 1) {
      const page = await api('/api/sessions/' + encodeURIComponent(id) + '/events?before=' + before + '&limit=2000');
      if (!page.events.length) break;
      for (const event of page.events.slice().reverse()) {
        if (event.type === 'approval.answer') answered.add(event.request_id);
        if (event.type === 'approval.request' && !answered.has(event.request_id)) pending.set(event.request_id, event);
      }
      before = page.events[0].id;
    }
  }
}

window.addEventListener('hashchange', route);
route();
