// Time from an append to its card on screen, with many pages open: opens
// <pages> pages of one session, prints "ready" once each shows the
// session's last event, then records, on every page, when each new event's
// element is in the page and a frame has been drawn after it. Reads the
// events' own `at` (the writer's clock, the same machine's) to turn that
// into a latency per page per event.
//
//   node append-latency.mjs <serve url> <project directory> <session id> <pages> <events>
//
// Prints one JSON line: every latency in milliseconds, sorted. Run by
// crates/serve/tests/suite/perf.rs (ignored by default), which appends the
// events after "ready".
import { chromium } from 'playwright-core';

const [url, project, session, pagesArg, eventsArg] = process.argv.slice(2);
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
  const open = [];
  for (let i = 0; i < pages; i++) {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(60000);
    await page.goto(target);
    await page.locator('#events [data-id]').first().waitFor({ state: 'attached' });
    const start = await page.evaluate(() => Math.max(...[...document.querySelectorAll('#events [data-id]')].map((e) => Number(e.dataset.id))));
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
    }, start);
    open.push({ page, start });
  }
  const from = Math.min(...open.map((p) => p.start));
  console.log('ready ' + from);
  for (const { page, start } of open) {
    await page.waitForFunction((n) => window.seen.size >= n, expect + (from - start));
  }
  const response = await fetch(url + '/api/sessions/' + encodeURIComponent(session) + '/events?after=' + from + '&limit=2000');
  const at = new Map((await response.json()).events.map((e) => [e.id, Date.parse(e.at)]));
  const ms = [];
  for (const { page } of open) {
    const seen = await page.evaluate(() => [...window.seen.entries()]);
    for (const [id, when] of seen) if (at.has(id)) ms.push(when - at.get(id));
  }
  ms.sort((a, b) => a - b);
  console.log(JSON.stringify({ ms }));
} finally {
  await browser.close();
}
