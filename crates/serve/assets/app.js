// The page in front of chock serve. Every fact comes from serve's /api/
// routes, which are the daemon's verbs. Text from a log is only ever set as
// textContent (render.js builds markdown and diffs as DOM nodes), never as
// markup, so nothing a session wrote can become HTML.
'use strict';

const { el, markdown, diffView, proposedDiff, essential, outcome, tokens } = window.render;

const PAGE = 200;
const main = document.getElementById('main');
const banner = document.getElementById('banner');
const crumb = document.getElementById('crumb');
let view = null; // the current view's cleanup, called when the hash changes

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
const sessionApi = (id, rest) => '/api/sessions/' + encodeURIComponent(id) + (rest || '');

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

// ---- where a session stands ------------------------------------------------

// The words a row's status takes on the page: a pending question is
// "waiting for you", whatever else the row says.
function standing(row) {
  if (row.status === 'ended') return ['ended', row.reason ? 'ended: ' + row.reason : 'ended'];
  if (row.status === 'waiting' || row.pending_approvals > 0) return ['waiting', 'waiting for you'];
  if (row.status === 'retrying') return ['retrying', 'retrying'];
  return ['running', row.status || 'running'];
}

function statusBadge(row) {
  const [kind, text] = standing(row);
  return el('span', { class: 'status ' + kind, text });
}

function ago(at) {
  const t = Date.parse(at);
  if (!t) return '';
  const s = Math.max(0, Math.round((Date.now() - t) / 1000));
  if (s < 60) return s + ' s ago';
  if (s < 3600) return Math.round(s / 60) + ' min ago';
  if (s < 86400) return Math.round(s / 3600) + ' h ago';
  return new Date(t).toISOString().slice(0, 10);
}

// One session in a list: its title (or the start of its first message),
// where it stands, and what it waits for.
function sessionItem(row, { depth = 0, withProject = false } = {}) {
  const name = row.title || row.preview || row.id;
  const meta = [withProject ? row.project : '', depth ? 'subagent of ' + row.parent : '', ago(row.updated_at || row.started_at),
    row.model, (row.input_tokens || row.output_tokens) ? tokens((row.input_tokens || 0) + (row.output_tokens || 0)) : '',
    row.status === 'ended' && row.detail ? row.detail : ''].filter(Boolean);
  const waiting = standing(row)[0] === 'waiting';
  return el('li', { class: (depth ? 'subagent depth-' + Math.min(depth, 4) : '') + (waiting ? ' waiting' : ''), 'data-session': row.id },
    el('a', { href: sessionHref(row.project, row.id) },
      el('span', { class: 'name' + (row.title ? '' : ' untitled'), text: name }), statusBadge(row),
      waiting && row.question ? el('div', { class: 'asks', text: row.question }) : null,
      el('div', { class: 'meta', text: meta.join(' · ') })));
}

// Sessions with each subagent right under the session that spawned it,
// and how deep it is; one whose parent is not listed stands alone.
function nested(rows) {
  const ids = new Set(rows.map((r) => r.id));
  const children = new Map();
  for (const r of rows) {
    if (r.parent && ids.has(r.parent)) {
      if (!children.has(r.parent)) children.set(r.parent, []);
      children.get(r.parent).push(r);
    }
  }
  const out = [];
  const place = (row, depth) => {
    out.push([depth, row]);
    const kids = children.get(row.id) || [];
    // Taken once, so parents that lead round to each other end the walk.
    children.delete(row.id);
    kids.reverse().forEach((r) => place(r, depth + 1));
  };
  rows.filter((r) => !r.parent || !ids.has(r.parent)).forEach((r) => place(r, 0));
  if (out.length < rows.length) {
    const shown = new Set(out.map(([, r]) => r.id));
    for (const r of rows) if (!shown.has(r.id)) out.push([0, r]);
  }
  return out;
}

// A list of sessions kept live by serve's /api/live stream (the daemon's
// `rows`): the whole list first, then each row as it changes.
function liveRows(project, isCurrent, draw) {
  const rows = new Map();
  let source = null;
  let timer = null;
  const url = '/api/live' + (project ? '?project=' + encodeURIComponent(project) : '');
  const connect = () => {
    if (!isCurrent()) return;
    source = new EventSource(url);
    source.addEventListener('rows', (e) => {
      hideBanner();
      rows.clear();
      for (const row of JSON.parse(e.data)) rows.set(row.id, row);
      draw([...rows.values()]);
    });
    source.addEventListener('row', (e) => {
      const row = JSON.parse(e.data);
      rows.set(row.id, row);
      draw([...rows.values()]);
    });
    source.addEventListener('failure', (e) => {
      source.close();
      const [text, wait] = explain(new ApiError(JSON.parse(e.data), 502));
      showBanner(text, true);
      timer = setTimeout(connect, wait || 3000);
    });
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CONNECTING) return;
      source.close();
      api('/api/status').then(() => { timer = setTimeout(connect, 1000); }, (err) => {
        const [text, wait] = explain(err);
        showBanner(text, true);
        timer = setTimeout(connect, wait || 3000);
      });
    });
  };
  connect();
  return () => { if (source) source.close(); clearTimeout(timer); };
}

const newestFirst = (a, b) => String(b.started_at || '').localeCompare(String(a.started_at || ''));

// ---- home: every session of every project ---------------------------------

function homeView() {
  let current = true;
  const input = el('input', { name: 'project', placeholder: '/home/you/project', required: '', 'aria-label': 'Project directory' });
  const waiting = el('ul', { class: 'sessions', id: 'waiting' });
  const running = el('ul', { class: 'sessions', id: 'running' });
  const ended = el('ul', { class: 'sessions', id: 'ended-sessions' });
  const counts = el('p', { class: 'meta', id: 'counts' });
  main.append(
    el('h1', { text: 'Sessions' }), counts,
    el('h2', { text: 'Waiting for you' }), waiting,
    el('h2', { text: 'Running' }), running,
    el('h2', { text: 'Ended' }), ended,
    el('h2', { text: 'Open a project' }),
    el('form', { onsubmit: (e) => { e.preventDefault(); location.hash = projectHref(input.value.trim()); } },
      el('label', { text: 'Project directory on the daemon\'s machine' }), input,
      el('button', { type: 'submit', text: 'Open' })),
  );
  const recent = recentProjects();
  const known = el('ul', { class: 'sessions', id: 'projects' });
  main.append(el('h2', { text: 'Projects' }), known);
  const stop = liveRows(null, () => current, (rows) => {
    rows.sort(newestFirst);
    const tops = rows.filter((r) => !r.parent);
    const by = (kind) => tops.filter((r) => standing(r)[0] === kind || (kind === 'running' && standing(r)[0] === 'retrying'));
    const fill = (list, items, none, limit) => {
      list.replaceChildren(...items.slice(0, limit).map((r) => sessionItem(r, { withProject: true })));
      if (!items.length) list.append(el('li', { class: 'meta', text: none }));
      if (items.length > limit) list.append(el('li', { class: 'meta', text: (items.length - limit) + ' more in their projects\' pages' }));
    };
    fill(waiting, by('waiting'), 'Nothing waits for you.', 100);
    fill(running, by('running'), 'No session is running.', 100);
    fill(ended, by('ended'), 'No session has ended yet.', 30);
    counts.textContent = rows.length + ' sessions in ' + new Set(rows.map((r) => r.project)).size + ' projects';
    const projects = [...new Set([...rows.map((r) => r.project), ...recent])].filter(Boolean);
    known.replaceChildren(...projects.map((p) => {
      const mine = rows.filter((r) => r.project === p);
      return el('li', {}, el('a', { href: projectHref(p) }, el('span', { text: p }),
        el('div', { class: 'meta', text: mine.length + ' sessions' + (mine.some((r) => standing(r)[0] === 'waiting') ? ' · waiting for you' : '') })));
    }));
  });
  view = () => { current = false; stop(); };
}

// ---- a project: its sessions, live, and a new one --------------------------

function projectView(project) {
  let current = true;
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
  const stop = liveRows(project, () => current, (rows) => {
    rows.sort(newestFirst);
    list.replaceChildren(...nested(rows).map(([depth, row]) => sessionItem(row, { depth })));
    if (!rows.length) list.append(el('li', { class: 'meta', text: 'No sessions in this project yet.' }));
  });
  view = () => { current = false; stop(); };
}

// ---- a session: its steps --------------------------------------------------

// Whether a decision is the shipped policy's plain allow, which a step
// does not need to mention.
const shippedAllow = (d) => d.decision === 'allow' && (!d.layer || d.layer === 'default' || d.layer === 'shipped');

function said(d) {
  return d.decision + ' · ' + d.action + (d.layer ? ' · ' + d.layer : '') + (d.rule ? ' rule ' + d.rule : '');
}

// A question in two parts: what it asks (up to its first question mark),
// and the rest (what the call would do, the rule that made it ask), which
// the card shows on its own and the panel folds.
function asking(question) {
  const text = String(question || '');
  const at = text.indexOf('?');
  if (at < 0 || at === text.length - 1) return [text, ''];
  return [text.slice(0, at + 1), text.slice(at + 1).trim()];
}

function usageText(u) {
  return tokens(u.input_tokens || 0) + ' in · ' + tokens(u.output_tokens || 0) + ' out';
}

// The few words a quiet event is folded to.
function quietText(event) {
  switch (event.type) {
    case 'assistant.message': return 'model call · ' + usageText(event.usage || {});
    case 'session.open': return 'opened by process ' + event.pid + ' (model ' + event.model + ')';
    case 'workspace.open': return 'workspace ' + (event.branch || event.dir || '') + (event.base ? ' from ' + String(event.base).slice(0, 12) : '');
    case 'decision': return said(event);
    case 'notice': return (event.subject ? event.subject + ': ' : '') + (event.text || '');
    case 'title.set': return 'titled "' + event.title + '"';
    case 'plan.update': return 'plan updated';
    case 'turn.end': return 'turn ended';
    case 'compaction': return 'the conversation so far was summarised to fit the context';
    case 'session.end': return 'handed over: ' + (event.detail || '');
    default: {
      const rest = Object.assign({}, event);
      delete rest.id; delete rest.at; delete rest.type;
      const text = JSON.stringify(rest);
      return text === '{}' ? '' : text.slice(0, 300);
    }
  }
}

function sessionView(project, id) {
  let current = true;
  let source = null;
  let timer = null;
  view = () => { current = false; if (source) source.close(); clearTimeout(timer); };
  crumb.append(el('a', { href: projectHref(project), text: project }), ' / ', el('span', { text: id }));
  const title = el('h1', { id: 'title', text: id });
  const badge = el('span', { id: 'status' });
  const usage = el('span', { class: 'meta', id: 'usage' });
  const controls = el('div', { class: 'controls', id: 'controls' });
  const panel = el('section', { id: 'panel', hidden: '' });
  const plan = el('section', { id: 'plan', hidden: '' });
  const older = el('button', { class: 'secondary', id: 'older', text: 'Load older steps', hidden: '' });
  const events = el('ol', { class: 'events', id: 'events' });
  const ending = el('p', { class: 'end', id: 'ended', hidden: '' });
  const question = el('section', { id: 'question', hidden: '' });
  const replyForm = el('form', { id: 'continue', hidden: '' });
  main.append(title, el('div', { class: 'standing' }, badge, usage), controls, panel, plan, older, events, ending, question, replyForm);

  const pending = new Map(); // request id -> { request, card }
  const cards = new Map(); // call id -> card
  let row = { status: 'running' };
  let lastId = 0;
  let oldest = 1;
  let lastDecision = null; // the newest decision with a call id
  // The fold the next quiet event joins while nothing else came between:
  // one for live events, one for an older page being put together.
  const folds = { live: null, older: null };
  const total = { input: 0, output: 0 };
  const turn = { input: 0, output: 0 };

  // ---- the status line and the controls

  // What the status line last drew: it is redrawn only when it changes,
  // since every event asks (a redraw costs a layout of the page's head, and
  // replaced buttons lose the pointer and focus a person has on them).
  const drawn = { badge: '', usage: '', controls: '' };

  function setStanding() {
    const ended = row.status === 'ended' && row.reason !== 'handover';
    const live = row.status === 'waiting' || row.status === 'ended' ? 'running' : row.status;
    const shown = Object.assign({}, row, { pending_approvals: pending.size, status: ended ? 'ended' : pending.size ? 'waiting' : live });
    const [kind, words] = standing(shown);
    if (drawn.badge !== kind + ' ' + words) {
      drawn.badge = kind + ' ' + words;
      badge.replaceChildren(statusBadge(shown));
    }
    const spent = tokens(total.input) + ' in · ' + tokens(total.output) + ' out' + (row.model ? ' · ' + row.model : '');
    if (drawn.usage !== spent) usage.textContent = drawn.usage = spent;
    const offered = String([ended, Boolean(row.owned && !row.child)]);
    if (drawn.controls !== offered) {
      drawn.controls = offered;
      drawControls(ended);
    }
    replyForm.hidden = !ended;
  }

  const act = async (button, verb, body, done) => {
    button.disabled = true;
    try {
      const result = await post(sessionApi(id, '/' + verb), Object.assign({ project }, body || {}));
      showBanner(done(result), false);
      return result;
    } catch (err) {
      showBanner(explain(err)[0], true);
      return null;
    } finally { button.disabled = false; }
  };

  function drawControls(ended) {
    const buttons = [];
    if (!ended) {
      buttons.push(el('button', { class: 'secondary', id: 'interrupt', text: 'Interrupt', onclick: (e) =>
        act(e.target, 'interrupt', {}, () => 'Interrupted: the turn ends; reply to carry on.') }));
      if (row.owned && !row.child) {
        buttons.push(el('button', { class: 'secondary', id: 'detach', text: 'Hand to the daemon', onclick: (e) =>
          act(e.target, 'detach', {}, () => 'Handed over: the daemon carries the session on.') }));
      }
    }
    buttons.push(el('button', { class: 'secondary', id: 'show-diff', text: 'Changes', onclick: () => showDiff() }));
    buttons.push(el('button', { class: 'secondary danger', id: 'stop', text: 'Stop agents here', onclick: (e) => {
      const reason = window.prompt('Stop every agent in ' + project + '? Their next tool call, commit and push are refused until `chock resume`. Why:', 'stopped from the browser');
      if (reason === null) return;
      post('/api/stop', { project, reason: reason || 'stopped from the browser' }).then((r) => showBanner(r.said, false), (err) => showBanner(explain(err)[0], true));
      e.target.blur();
    } }));
    controls.replaceChildren(...buttons);
  }

  // The workspace's changes, what applying them does, and Apply / Discard.
  async function showDiff() {
    panel.hidden = false;
    panel.replaceChildren(el('p', { class: 'meta', text: 'Reading the workspace…' }));
    let diff;
    try {
      diff = await api(sessionApi(id, '/diff?project=' + encodeURIComponent(project)));
    } catch (err) {
      panel.replaceChildren(el('p', { class: 'meta', text: explain(err)[0] }));
      return;
    }
    const close = el('button', { class: 'secondary', text: 'Close', onclick: () => { panel.hidden = true; } });
    const files = (diff.files || []).map((f) => f.path + ' +' + f.added + ' −' + f.removed).join(', ');
    panel.replaceChildren(el('h2', { text: 'Changes in the workspace' }),
      el('p', { class: 'meta', text: files || 'No changes.' }),
      diff.description ? el('p', { class: 'description', text: diff.description }) : null,
      diff.diff ? diffView(diff.diff) : null,
      diff.truncated ? el('p', { class: 'meta' }, 'The diff is ' + diff.bytes + ' bytes; the first part is shown. ',
        el('a', { href: sessionApi(id, '/diff?project=' + encodeURIComponent(project) + '&full=1'), target: '_blank', text: 'The full diff as text' })) : null,
      el('div', { class: 'buttons' },
        diff.diff ? el('button', { class: 'yes', id: 'apply', text: 'Apply', onclick: (e) =>
          act(e.target, 'apply', {}, (r) => r.said).then((r) => { if (r) showDiff(); }) }) : null,
        diff.diff ? el('button', { class: 'no', id: 'discard', text: 'Discard', onclick: (e) => {
          if (!window.confirm('Discard every change this session made in its workspace?')) return;
          act(e.target, 'discard', {}, (r) => r.said).then((r) => { if (r) showDiff(); });
        } }) : null,
        close));
  }

  // Reply once the session ended: the daemon carries it on.
  const replyText = el('textarea', { name: 'reply', required: '', placeholder: 'Reply to carry the session on', 'aria-label': 'Reply' });
  const replyButton = el('button', { type: 'submit', text: 'Reply' });
  replyForm.append(replyText, replyButton);
  replyForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const text = replyText.value.trim();
    if (!text) { showBanner('Write a reply first.', true); return; }
    replyButton.disabled = true;
    try {
      await post(sessionApi(id, '/continue'), { project, message: text });
      replyText.value = '';
      row = Object.assign({}, row, { status: 'running', reason: null });
      ending.hidden = true;
      setStanding();
      connect();
    } catch (err) {
      showBanner(explain(err)[0], true);
    } finally { replyButton.disabled = false; }
  });

  // ---- the question waiting for the person

  // The request the question panel shows ('' for none), redrawn only when
  // another one comes first, so a person's half-typed answer survives the
  // events that arrive while they write it.
  let asked = '';

  function showQuestion() {
    const [entry] = pending.values();
    setStanding();
    const now = entry ? entry.request.request_id + (entry.card ? ' with its card' : '') : '';
    if (now === asked) return;
    asked = now;
    question.replaceChildren();
    question.hidden = !entry;
    if (!entry) return;
    const request = entry.request;
    const note = el('p', { class: 'meta' });
    const inputs = () => question.querySelectorAll('button, input');
    // One delivery, whichever kind: the buttons and the field stay off
    // until the daemon says whether the session took it.
    const deliver = async (verb, body, done) => {
      for (const c of inputs()) c.disabled = true;
      try {
        await post(sessionApi(id, '/' + verb), { project, request: request.request_id, ...body });
        note.textContent = done + '; waiting for the session to record it.';
      } catch (err) {
        note.textContent = explain(err)[0];
        for (const c of inputs()) c.disabled = false;
      }
    };
    const card = entry.card;
    let shows = null;
    if (card && card.tool === 'run_command') shows = el('pre', { class: 'command', text: essential(card.tool, card.args) });
    else if (card) {
      const proposed = proposedDiff(card.tool, card.args);
      if (proposed) shows = diffView(proposed);
      else if (card.tool !== 'ask_user') shows = el('pre', { class: 'command', text: card.tool + ' ' + essential(card.tool, card.args) });
    }
    const [head, why] = asking(request.question || request.action);
    question.append(el('h2', { text: request.kind === 'question' ? 'The session asks you' : 'Allow this?' }),
      el('div', { class: 'text', text: head }), shows,
      why ? el('details', { class: 'why' }, el('summary', { text: 'why it asks' }), el('div', { class: 'meta', text: why })) : null,
      el('div', { class: 'meta', text: request.action + ' · request ' + request.request_id }));
    if (request.kind === 'question') {
      const field = el('input', { id: 'reply', type: 'text', 'aria-label': 'Your answer', autocomplete: 'off' });
      const send = () => {
        const text = field.value.trim();
        if (!text) { note.textContent = 'Write an answer first.'; return; }
        deliver('reply', { text }, 'Answered');
      };
      field.addEventListener('keydown', (e) => { if (e.key === 'Enter') send(); });
      question.append(el('div', { class: 'buttons' }, field, el('button', { class: 'yes', text: 'Send', onclick: send })), note);
      return;
    }
    question.append(el('div', { class: 'buttons' },
      el('button', { class: 'yes', text: 'Yes', onclick: () => deliver('answer', { answer: 'yes' }, 'Answered yes') }),
      el('button', { class: 'no', text: 'No', onclick: () => deliver('answer', { answer: 'no' }, 'Answered no') })), note);
  }

  // ---- steps

  // Appends a card (or, with `before`, puts it ahead of the first card,
  // for older pages).
  function place(node, into) {
    if (into) into.append(node);
    else events.append(node);
    return node;
  }

  function quietLine(event, into) {
    const which = into ? 'older' : 'live';
    const line = el('div', { class: 'quiet-event', 'data-id': String(event.id), text: '#' + event.id + ' ' + event.type + ' · ' + quietText(event) });
    if (!folds[which]) {
      const summary = el('summary', {});
      const fold = el('details', { class: 'quiet' }, summary);
      place(el('li', { class: 'quiet-item' }, fold), into);
      folds[which] = { fold, summary, count: 0, kinds: new Set() };
    }
    const group = folds[which];
    group.fold.append(line);
    group.count += 1;
    group.kinds.add(event.type);
    group.summary.textContent = group.count === 1 ? quietText(event) || event.type : group.count + ' internal events: ' + [...group.kinds].join(', ');
  }

  function card(kind, event, into, ...children) {
    folds[into ? 'older' : 'live'] = null;
    const node = el('li', { class: 'card ' + kind }, ...children);
    if (event) node.dataset.id = String(event.id);
    return place(node, into);
  }

  function stepCard(call, event, into) {
    let args = call.arguments;
    if (typeof args === 'string') { try { args = JSON.parse(args); } catch (e) { /* shown as text */ } }
    const state = el('span', { class: 'state', text: 'asked' });
    const decided = el('span', { class: 'decided' });
    const head = el('div', { class: 'step-head' }, el('span', { class: 'tool', text: call.name }), ' ',
      el('span', { class: 'arg', text: essential(call.name, args) }), decided, state);
    const body = el('div', { class: 'step-body' });
    const root = card('step', null, into, head, body);
    root.dataset.call = call.id;
    root.dataset.tool = call.name;
    const step = { root, head, body, state, decided, tool: call.name, args };
    cards.set(call.id, step);
    return step;
  }

  function add(event, into) {
    switch (event.type) {
      case 'user.message':
        card('you', event, into, el('div', { class: 'who', text: 'You' }), el('div', { class: 'text', text: event.text || '' }));
        return;
      case 'assistant.message': {
        const u = event.usage || {};
        if (!into) {
          total.input += u.input_tokens || 0; total.output += u.output_tokens || 0;
          turn.input += u.input_tokens || 0; turn.output += u.output_tokens || 0;
        }
        const thought = (event.reasoning || []).map((r) => r.text || '(not shown by the provider)').join('\n\n');
        if (event.text || thought) {
          card('reply', event, into,
            thought ? el('details', { class: 'thinking' }, el('summary', { text: 'thought (' + thought.length + ' characters)' }),
              el('div', { class: 'text', text: thought })) : null,
            event.text ? markdown(event.text) : null,
            el('div', { class: 'meta usage', text: (event.model ? event.model + ' · ' : '') + usageText(u) }));
        } else {
          quietLine(event, into);
        }
        for (const call of event.tool_calls || []) stepCard(call, event, into);
        return;
      }
      case 'decision': {
        const step = event.call_id && cards.get(event.call_id);
        if (!step) { quietLine(event, into); return; }
        lastDecision = event.call_id;
        step.decision = event;
        step.body.append(el('div', { class: 'quiet-event', 'data-id': String(event.id), text: said(event) }));
        if (!shippedAllow(event)) {
          step.decided.textContent = ' ' + event.decision + (event.rule ? ' · ' + event.layer + ' rule ' + event.rule : event.layer ? ' · ' + event.layer : '');
          step.decided.className = 'decided ' + event.decision;
        }
        if (event.decision === 'deny') step.state.textContent = 'refused';
        return;
      }
      case 'approval.request': {
        let step = lastDecision && cards.get(lastDecision);
        if (event.kind === 'question') step = [...cards.values()].reverse().find((c) => c.tool === 'ask_user' && !c.done) || step;
        const asked = el('div', { class: 'asks', 'data-id': String(event.id), 'data-request': event.request_id, text: 'asked you: ' + asking(event.question || event.action)[0] });
        if (step) { step.body.append(asked); step.state.textContent = 'waiting for you'; } else card('asks', null, into, asked);
        if (!into) pending.set(event.request_id, { request: event, card: step });
        return;
      }
      case 'approval.answer': {
        const asked = (into || events).querySelector('[data-request="' + CSS.escape(String(event.request_id)) + '"]');
        const text = (event.text != null ? '"' + event.text + '"' : event.answer) + (event.by ? ', by ' + event.by : '');
        const answered = el('div', { class: 'answered ' + (event.answer === 'no' ? 'no' : 'yes'), 'data-id': String(event.id), text: 'answered ' + text });
        if (asked) asked.after(answered); else card('asks', null, into, answered);
        pending.delete(event.request_id);
        return;
      }
      case 'tool.call': {
        // A call whose answer is on an older page gets its card here.
        const step = cards.get(event.call_id) || stepCard({ id: event.call_id, name: event.tool, arguments: event.arguments }, event, into);
        step.state.textContent = 'running';
        step.body.append(el('span', { class: 'hidden-event', 'data-id': String(event.id) }));
        if (typeof event.session === 'string' && event.session) {
          step.body.append(el('a', { class: 'session-link', href: sessionHref(project, event.session), text: 'subagent ' + event.session }));
        }
        return;
      }
      case 'tool.result': {
        const step = cards.get(event.call_id);
        if (!step) { card('step', event, into, el('pre', { class: 'output', text: event.output || '' })); return; }
        step.done = true;
        step.state.textContent = event.ok ? 'done' : 'failed';
        step.root.classList.add(event.ok ? 'ok' : 'failed');
        const lines = outcome(step.tool, event.ok, event.output);
        const result = el('div', { class: 'outcome', 'data-id': String(event.id) });
        for (const [i, line] of lines.entries()) result.append(el('div', { class: i ? 'line' : 'line first', text: line }));
        step.body.append(result);
        if (event.diff) step.body.append(diffView(event.diff));
        if (event.output) {
          step.body.append(el('details', { class: 'full' }, el('summary', { text: 'full output (' + event.output.split('\n').length + ' lines' + (event.truncated ? ', cut for the model' : '') + ')' }),
            el('pre', { class: 'output', text: event.output })));
        }
        return;
      }
      case 'plan.update':
        if (!into) drawPlan(event.items || []);
        quietLine(event, into);
        return;
      case 'title.set':
        if (event.title && !into) title.textContent = event.title;
        quietLine(event, into);
        return;
      case 'turn.end':
        card('turn-end', event, into, el('span', { class: 'meta', text: 'turn ended' + (into ? '' : ' · ' + tokens(turn.input) + ' in · ' + tokens(turn.output) + ' out') }));
        if (!into) { turn.input = 0; turn.output = 0; }
        return;
      case 'subagent.end':
        card('step', event, into, el('div', { class: 'meta', text: 'subagent ended: ' + (event.reason || '') }),
          typeof event.session === 'string' ? el('a', { class: 'session-link', href: sessionHref(project, event.session), text: 'subagent ' + event.session }) : null,
          event.text ? markdown(event.text) : null);
        return;
      case 'session.open':
        if (typeof event.parent === 'string' && event.parent) {
          card('link', event, into, el('a', { class: 'session-link', href: sessionHref(project, event.parent), text: 'parent session ' + event.parent }));
          return;
        }
        if (event.model && !into) row.model = event.model;
        quietLine(event, into);
        return;
      case 'session.end':
        if (event.reason === 'handover') { quietLine(event, into); return; }
        card('end ' + String(event.reason), event, into, el('div', { class: 'text', text: 'Ended: ' + event.reason + (event.detail ? ' — ' + event.detail : '') }));
        if (!into) {
          pending.clear();
          row = Object.assign({}, row, { status: 'ended', reason: event.reason, detail: event.detail });
        }
        return;
      default:
        quietLine(event, into);
    }
  }

  function drawPlan(items) {
    plan.hidden = !items.length;
    const done = items.filter((i) => i.status === 'done').length;
    plan.replaceChildren(el('h2', { text: 'Plan · ' + done + ' of ' + items.length + ' done' }),
      el('ul', { class: 'checklist' }, ...items.map((item) => el('li', { class: 'plan-' + item.status },
        el('input', { type: 'checkbox', disabled: true, checked: item.status === 'done' }), ' ',
        el('span', { text: item.text }), item.status === 'in_progress' ? el('span', { class: 'meta', text: ' (in progress)' }) : null))));
  }

  function setRow(next) {
    row = next;
    const named = row.title || (title.textContent === id && row.preview);
    if (named && named !== title.textContent) title.textContent = named;
    total.input = Math.max(total.input, row.input_tokens || 0);
    total.output = Math.max(total.output, row.output_tokens || 0);
    setStanding();
  }

  function connect() {
    if (!current) return;
    if (source) source.close();
    const url = sessionApi(id, '/watch?project=' + encodeURIComponent(project) + '&after=' + lastId);
    source = new EventSource(url);
    source.addEventListener('open', hideBanner);
    source.addEventListener('row', (e) => setRow(JSON.parse(e.data)));
    source.addEventListener('log', (e) => {
      const event = JSON.parse(e.data);
      if (event.id <= lastId) return;
      lastId = event.id;
      add(event);
      showQuestion();
    });
    source.addEventListener('end', () => {
      source.close();
      ending.textContent = 'The session has ended. Reply below to carry it on.';
      ending.hidden = false;
      // A session whose process died wrote no ending: the daemon's row
      // says how it stands (crashed).
      if (row.status !== 'ended') {
        api(sessionApi(id, '?project=' + encodeURIComponent(project))).then(setRow, () => setStanding());
      } else setStanding();
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
      source.close();
      api(sessionApi(id, '?project=' + encodeURIComponent(project))).then(() => {
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
      const page = await api(sessionApi(id, '/events?before=' + oldest + '&limit=' + PAGE));
      const into = document.createDocumentFragment();
      folds.older = null;
      for (const event of page.events) add(event, into);
      events.prepend(into);
      if (page.events.length) oldest = page.events[0].id;
      older.hidden = !page.more;
    } catch (err) {
      showBanner(explain(err)[0], true);
    } finally { older.disabled = false; }
  });

  retrying(() => api(sessionApi(id, '?project=' + encodeURIComponent(project))), () => current)
    .then((first) => {
      setRow(first);
      // A long session starts at its last page; older pages come from read.
      lastId = Math.max(0, (first.events || 0) - PAGE);
      oldest = lastId + 1;
      older.hidden = lastId === 0;
      return findPending(first.pending_approvals || 0).catch(() => {}).then(() => {
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
      const page = await api(sessionApi(id, '/events?before=' + before + '&limit=2000'));
      if (!page.events.length) break;
      for (const event of page.events.slice().reverse()) {
        if (event.type === 'approval.answer') answered.add(event.request_id);
        if (event.type === 'approval.request' && !answered.has(event.request_id)) pending.set(event.request_id, { request: event, card: null });
      }
      before = page.events[0].id;
    }
  }
}

window.addEventListener('hashchange', route);
route();
