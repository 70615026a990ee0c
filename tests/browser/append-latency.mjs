// Time from an append to its card on screen, with many pages open: opens
// <pages> pages of one session, prints "ready" once each shows the
// session's last event, then records, on every page, when each new event's
// element is in the page and a frame has been drawn after it. Reads the
// events' own `at` (the writer's clock, the same machine's) to turn that
// into a latency per page per event.
//
//   node append-latency.mjs <serve url> <project directory> <session id> <pages> <events>
//
//   node append-latency.mjs <serve url> <project directory> <session id> <pages> <events> peer
//
// does the same with the peer instead of the page: the least page that
// shows the session's stream, one list item per event.
//
// Prints one JSON line: every latency in milliseconds, sorted (`ms`), and
// when each event reached the page's script (`arrived`). Run by
// crates/serve/tests/suite/perf.rs (ignored by default), which appends the
// events after "ready". With DEBUG_LATENCY=1 it also prints, on stderr,
// Chromium's CPU time by process type while idle and while the events
// arrive, and the first page's rendering counters.
import { chromium } from 'playwright-core';
import { readdirSync, readFileSync } from 'node:fs';

// CPU seconds of every Chromium process so far (DEBUG_LATENCY only).
function chromiumCpu(byType) {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((n) => /^[0-9]+$/.test(n))) {
    try {
      const cmd = readFileSync('/proc/' + pid + '/cmdline', 'utf8');
      if (!cmd.includes('chromium')) continue;
      const f = readFileSync('/proc/' + pid + '/stat', 'utf8').split(') ')[1].split(' ');
      ticks += Number(f[11]) + Number(f[12]);
      if (byType) {
        const type = (cmd.match(/--type=([a-z-]+)/) || [0, 'browser'])[1] + ((cmd.match(/--utility-sub-type=([a-zA-Z.]+)/) || [0, ''])[1]);
        byType[type] = (byType[type] || 0) + (Number(f[11]) + Number(f[12])) / 100;
      }
    } catch (e) { /* gone */ }
  }
  return ticks / 100;
}

const [url, project, session, pagesArg, eventsArg, kind = 'page'] = process.argv.slice(2);
const pages = Number(pagesArg || 20);
const expect = Number(eventsArg || 100);
// One browser, each page in a context of its own: a browser opens at most
// six HTTP/1.1 connections to one site per context, and each live page
// holds one.
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const target = url + '/#/session/' + encodeURIComponent(project) + '/' + encodeURIComponent(session);
try {
  // The session's last event before the appends: every page shows it
  // before "ready", so only the appends are timed.
  const row = await (await fetch(url + '/api/sessions/' + encodeURIComponent(session) + '?project=' + encodeURIComponent(project))).json();
  const from = row.events;
  const open = [];
  for (let i = 0; i < pages; i++) {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(60000);
    // When each event reached the page's script, to tell the network's part
    // from the drawing's.
    await page.addInitScript(() => {
      window.arrived = new Map();
      const Real = window.EventSource;
      window.EventSource = class extends Real {
        constructor(...args) {
          super(...args);
          this.addEventListener('log', (e) => { const id = Number(e.lastEventId); if (!window.arrived.has(id)) window.arrived.set(id, Date.now()); });
        }
      };
    });
    if (kind === 'peer') {
      // The peer: the least page that shows a live session, on the same
      // origin and stream: one EventSource, one list item per event, the
      // event's text as text. What Chromium itself costs here.
      await page.goto(url + '/api/status');
      await page.setContent('<!doctype html><title>peer</title><ol id="events"></ol>');
      await page.evaluate(([project, session, after]) => {
        const list = document.getElementById('events');
        const source = new EventSource('/api/sessions/' + encodeURIComponent(session) + '/watch?project=' + encodeURIComponent(project) + '&after=' + after);
        source.addEventListener('log', (e) => {
          const event = JSON.parse(e.data);
          const li = document.createElement('li');
          li.dataset.id = String(event.id);
          li.textContent = event.type + ' ' + (event.text || '');
          list.append(li);
        });
      }, [project, session, Math.max(0, from - 200)]);
    } else await page.goto(target);
    await page.locator('#events [data-id="' + from + '"]').waitFor({ state: 'attached' });
    await page.evaluate((from) => {
      window.seen = new Map();
      new MutationObserver((records) => {
        const now = Date.now();
        for (const r of records) for (const node of r.addedNodes) {
          if (!(node instanceof Element)) continue;
          for (const e of [node, ...node.querySelectorAll('[data-id]')]) {
            const id = Number(e.dataset && e.dataset.id);
            if (id > from && !window.seen.has(id)) {
              window.seen.set(id, now);
              requestAnimationFrame(() => window.seen.set(id, Math.max(window.seen.get(id), Date.now())));
            }
          }
        }
      }).observe(document.getElementById('events'), { childList: true, subtree: true });
    }, from);
    open.push(page);
  }
  if (process.env.DEBUG_LATENCY) {
    await new Promise((r) => setTimeout(r, 3000));
    const before = {};
    const idle = chromiumCpu(before);
    await new Promise((r) => setTimeout(r, 2000));
    const after = {};
    const spent = chromiumCpu(after) - idle;
    console.error('chromium CPU idle: ' + Object.entries(after).map(([k, v]) => k + ' ' + (v - (before[k] || 0)).toFixed(2)).join(', ') + ' = ' + spent.toFixed(2) + ' s over 2000 ms');
  }
  const cdp = process.env.DEBUG_LATENCY ? await open[0].context().newCDPSession(open[0]) : null;
  if (cdp) await cdp.send('Performance.enable');
  const metrics = async () => {
    if (!cdp) return {};
    const m = await cdp.send('Performance.getMetrics');
    return Object.fromEntries(m.metrics.map((x) => [x.name, x.value]));
  };
  const m0 = await metrics();
  const typesBefore = {};
  const cpuBefore = chromiumCpu(typesBefore);
  const wallBefore = Date.now();
  console.log('ready ' + from);
  // Waiting asks each page once, not on every frame: polling on every
  // animation frame (Playwright's default) would keep all the pages
  // drawing and measure the measuring.
  for (const page of open) {
    await page.evaluate((n) => new Promise((done) => {
      const check = () => (window.seen.size >= n ? done() : setTimeout(check, 200));
      check();
    }), expect);
  }
  const typesAfter = {};
  const cpuAfter = chromiumCpu(typesAfter);
  if (process.env.DEBUG_LATENCY) console.error('chromium CPU while appending: ' + Object.entries(typesAfter).map(([k, v]) => k + ' ' + (v - (typesBefore[k] || 0)).toFixed(2)).join(', ') + ' = ' + (cpuAfter - cpuBefore).toFixed(2) + ' s over ' + (Date.now() - wallBefore) + ' ms');
  if (process.env.DEBUG_LATENCY) {
    const m1 = await metrics();
    console.error('page 0: ' + ['TaskDuration', 'ScriptDuration', 'RecalcStyleDuration', 'LayoutDuration', 'RecalcStyleCount', 'LayoutCount', 'Nodes'].map((k) => k + ' ' + ((m1[k] - (m0[k] || 0)) * (k.endsWith('Duration') ? 1000 : 1)).toFixed(1)).join(', '));
  }
  const response = await fetch(url + '/api/sessions/' + encodeURIComponent(session) + '/events?after=' + from + '&limit=2000');
  const at = new Map((await response.json()).events.map((e) => [e.id, Date.parse(e.at)]));
  const ms = [];
  const arrived = [];
  const pagesWorst = [];
  for (const page of open) {
    const seen = await page.evaluate(() => [...window.seen.entries()]);
    const got = new Map(await page.evaluate(() => [...window.arrived.entries()]));
    let worst = 0;
    for (const [id, when] of seen) {
      if (!at.has(id)) continue;
      ms.push(when - at.get(id));
      worst = Math.max(worst, when - at.get(id));
      if (got.has(id)) arrived.push(got.get(id) - at.get(id));
    }
    pagesWorst.push(worst);
  }
  ms.sort((a, b) => a - b);
  arrived.sort((a, b) => a - b);
  console.log(JSON.stringify({ ms, arrived, pages_worst: pagesWorst }));
} finally {
  await browser.close();
}
