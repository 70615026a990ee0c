// What a step looks like: markdown, diffs, a call's essential argument and
// its outcome. Everything here builds DOM nodes and sets text with
// textContent; nothing a model, a tool or a log wrote is ever parsed as
// HTML, so a `<script>` in a reply or a command's output is shown as the
// characters it is.
//
// essential() and outcome() say the same as the terminal's
// crates/terminal/src/describe.rs, so the page and `chock run` show a step
// the same way.
(() => {
'use strict';

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') node.textContent = value;
    else if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

// ---- markdown, as DOM ----------------------------------------------------

// Inline markup: `code`, **bold**, *em* / _em_, [text](http link). A link
// is made only for http and https targets; anything else stays text.
function inline(text) {
  const out = [];
  const pattern = /(`+)([\s\S]*?)\1|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|\b_([^_\s][^_]*)_\b|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let at = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > at) out.push(text.slice(at, m.index));
    if (m[1]) out.push(el('code', { text: m[2] }));
    else if (m[3] || m[4]) out.push(el('strong', {}, ...inline(m[3] || m[4])));
    else if (m[5] || m[6]) out.push(el('em', {}, ...inline(m[5] || m[6])));
    else if (/^https?:\/\//i.test(m[8])) out.push(el('a', { href: m[8], rel: 'noopener noreferrer nofollow', target: '_blank' }, ...inline(m[7])));
    else out.push(m[0]);
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

// Block markup: headings, fenced code, lists, quotes, rules, paragraphs.
function markdown(text) {
  const root = el('div', { class: 'markdown' });
  const lines = String(text || '').replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  let para = [];
  const flush = () => {
    if (para.length) root.append(el('p', {}, ...inline(para.join(' '))));
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if ((m = /^\s*(```+|~~~+)\s*([\w+-]*)/.exec(line))) {
      flush();
      const fence = m[1];
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence)) { body.push(lines[i]); i += 1; }
      i += 1;
      root.append(el('pre', { class: 'code', 'data-lang': m[2] || null }, el('code', { text: body.join('\n') })));
      continue;
    }
    if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
      flush();
      root.append(el('h' + Math.min(6, m[1].length + 2), { class: 'md-h' }, ...inline(m[2].replace(/\s#+\s*$/, ''))));
      i += 1;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) { flush(); root.append(el('hr')); i += 1; continue; }
    if (/^\s*>/.test(line)) {
      flush();
      const body = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) { body.push(lines[i].replace(/^\s*>\s?/, '')); i += 1; }
      root.append(el('blockquote', {}, markdown(body.join('\n'))));
      continue;
    }
    if ((m = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(line))) {
      flush();
      const ordered = /\d/.test(m[2]);
      const list = el(ordered ? 'ol' : 'ul');
      while (i < lines.length && (m = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]))) {
        let item = m[3];
        i += 1;
        // A continuation line, indented under the item.
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !/^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
          item += ' ' + lines[i].trim();
          i += 1;
        }
        const box = /^\[([ xX])\]\s+(.*)$/.exec(item);
        list.append(box
          ? el('li', { class: 'task' }, el('input', { type: 'checkbox', disabled: true, checked: box[1] !== ' ' }), ' ', ...inline(box[2]))
          : el('li', {}, ...inline(item)));
      }
      root.append(list);
      continue;
    }
    if (!line.trim()) { flush(); i += 1; continue; }
    para.push(line.trim());
    i += 1;
  }
  flush();
  return root;
}

// ---- diffs ----------------------------------------------------------------

// A unified diff as one block per file, each line coloured by its sign.
function diffView(text) {
  const root = el('div', { class: 'diff' });
  let file = null;
  let body = null;
  const start = (name) => {
    body = el('pre', { class: 'diff-body' });
    file = el('div', { class: 'diff-file' }, el('div', { class: 'diff-name', text: name }), body);
    root.append(file);
  };
  const lines = String(text || '').split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i];
    if (line.startsWith('diff --git ')) { start(line.replace(/^diff --git a\/(.*) b\/.*$/, '$1')); continue; }
    if (line.startsWith('--- ') && lines[i + 1] && lines[i + 1].startsWith('+++ ')) {
      const to = lines[i + 1].slice(4).replace(/^b\//, '');
      const from = line.slice(4).replace(/^a\//, '');
      const name = to === '/dev/null' ? from + ' (deleted)' : from === '/dev/null' ? to + ' (new)' : to;
      if (!file || file.querySelector('.diff-body').childNodes.length) start(name);
      else file.querySelector('.diff-name').textContent = name;
      i += 1;
      continue;
    }
    if (!file) start('');
    const kind = line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del'
      : line.startsWith('... (') ? 'cut' : /^(index |new file|deleted file|similarity|rename |old mode|new mode)/.test(line) ? 'meta' : 'ctx';
    if (kind === 'meta') continue;
    body.append(el('span', { class: 'dl ' + kind, text: line }), '\n');
  }
  return root;
}

// The diff an edit or a write would make, from its arguments alone (shown
// while it waits for an approval; the result carries the real one).
function proposedDiff(tool, args) {
  if (tool === 'edit_file' && typeof args.old_text === 'string' && typeof args.new_text === 'string') {
    const del = args.old_text.split('\n').map((l) => '-' + l);
    const add = args.new_text.split('\n').map((l) => '+' + l);
    return '--- a/' + args.path + '\n+++ b/' + args.path + '\n@@ ' + (args.replace_all ? 'every occurrence' : 'one occurrence') + ' @@\n' +
      del.concat(add).join('\n') + '\n';
  }
  if (tool === 'write_file' && typeof args.content === 'string') {
    const lines = args.content.replace(/\n$/, '').split('\n');
    return '--- ' + args.path + ' (as it is now, replaced whole)\n+++ b/' + args.path + '\n@@ the whole new content @@\n' +
      lines.map((l) => '+' + l).join('\n') + '\n';
  }
  return null;
}

// ---- a call in a few words ---------------------------------------------------

function shorten(text, max) {
  const first = String(text).split('\n')[0];
  if ([...first].length > max) return [...first].slice(0, max).join('') + '…';
  return first.length < String(text).trimEnd().length ? first + ' …' : first;
}

function commandLine(words) {
  return words.map((w) => {
    const word = typeof w === 'string' ? w : JSON.stringify(w);
    return word && /^[A-Za-z0-9\-_./=:,+@%]+$/.test(word) ? word : "'" + word.replace(/'/g, "'\\''") + "'";
  }).join(' ');
}

function essential(tool, args) {
  args = args && typeof args === 'object' ? args : {};
  const field = (name) => (typeof args[name] === 'string' ? args[name] : null);
  let text = null;
  switch (tool) {
    case 'run_command':
      if (Array.isArray(args.command)) text = commandLine(args.command) + (args.background === true ? ' (in the background)' : '');
      break;
    case 'grep': text = field('pattern') && (field('path') ? field('pattern') + ' in ' + field('path') : field('pattern')); break;
    case 'glob': text = field('pattern'); break;
    case 'fetch_url': text = field('url'); break;
    case 'web_search': text = field('query'); break;
    case 'set_title': text = field('title'); break;
    case 'ask_user': text = field('question'); break;
    case 'read_skill': text = field('name'); break;
    case 'request_action': text = field('action'); break;
    case 'restrict_self': text = field('reason'); break;
    case 'job_output': case 'serve_port': text = args.job === undefined ? null : String(args.job); break;
    case 'update_plan': text = Array.isArray(args.items) ? args.items.length + ' items' : null; break;
    case 'read_memory': text = ''; break;
    case 'write_memory': text = field('text') && [...field('text')].length + ' characters'; break;
    default: text = field('path');
  }
  if (text === null || text === undefined) {
    const json = JSON.stringify(args);
    text = json === '{}' ? '' : json;
  }
  return shorten(text, 120);
}

// What a call came to: a command's exit status and the ends of its output,
// grep's count, a read's lines.
function outcome(tool, ok, output) {
  output = String(output || '');
  if (tool === 'run_command') {
    const [head, rest = ''] = output.split('\n--- stdout ---\n', 2);
    const [stdout, stderr = ''] = rest.split('\n--- stderr ---\n', 2);
    const printed = stdout.split('\n').concat(stderr.split('\n')).filter((l) => l.trim());
    const out = [head];
    if (printed.length <= 5) out.push(...printed.map((l) => shorten(l, 160)));
    else out.push(...printed.slice(0, 2).map((l) => shorten(l, 160)), '… ' + (printed.length - 4) + ' more lines …',
      ...printed.slice(-2).map((l) => shorten(l, 160)));
    return out;
  }
  if (!ok) return output.split('\n').slice(0, 3).map((l) => shorten(l, 160));
  const lines = output ? output.split('\n').filter((l, i, all) => i < all.length - 1 || l).length : 0;
  switch (tool) {
    case 'grep': {
      if (output.startsWith('no line under')) return ['no matches'];
      const matches = output.split('\n').filter((l) => l && !l.startsWith('[more than')).length;
      return [matches + (output.includes('[more than') ? '+' : '') + ' matching lines'];
    }
    case 'read_file': case 'read_guidance': case 'read_skill': case 'read_memory': return [lines + ' lines'];
    case 'list_directory': case 'glob': return [lines + ' entries'];
    default: return [shorten(output, 160)];
  }
}

// A token count as a person reads it: 950, 12.3k, 1.2M.
function tokens(n) {
  n = Number(n) || 0;
  if (n < 1000) return n + ' tokens';
  if (n < 1e6) return (n / 1e3).toFixed(1) + 'k tokens';
  return (n / 1e6).toFixed(1) + 'M tokens';
}

window.render = { el, markdown, inline, diffView, proposedDiff, essential, outcome, shorten, tokens };
})();
