// Time to the first event of a long session, as a person sees it: from
// navigating to the session's page in Chromium to the first event on screen.
//
//   node first-event.mjs <serve url> <project directory> <session id> [runs]
//
// Prints one JSON line: each run's milliseconds to the first and to the
// last card (the newest event, the end of the first batch), how many events the page
// showed, and the bytes the page's first load transferred. Run by
// crates/serve/tests/suite/perf.rs (ignored by default).
import { launch } from './chromium.mjs';

const [url, project, session, runsArg] = process.argv.slice(2);
const runs = Number(runsArg || 10);
const browser = await launch();
const target = url + '/#/session/' + encodeURIComponent(project) + '/' + encodeURIComponent(session);
const ms = [];
const last = [];
let shown = 0;
let bytes = 0;
try {
  for (let i = 0; i < runs; i++) {
    const page = await browser.context.newPage();
    const began = Date.now();
    await page.goto(target, { waitUntil: 'commit' });
    await page.locator('#events [data-id]').first().waitFor({ state: 'attached', timeout: 30000 });
    ms.push(Date.now() - began);
    // Let the rest of the page's first batch land before counting it.
    await page.waitForFunction(() => document.querySelectorAll('#events [data-id]').length >= 200, null, { polling: 'raf' });
    // The last card: the session's newest event, the bottom of the page.
    last.push(Date.now() - began);
    shown = await page.locator('#events [data-id]').count();
    bytes = await page.evaluate(() => performance.getEntriesByType('navigation')
      .concat(performance.getEntriesByType('resource'))
      .filter((e) => !e.name.includes('/api/'))
      .reduce((sum, e) => sum + e.encodedBodySize, 0));
    await page.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify({ ms, last_ms: last, shown, page_bytes: bytes }));
