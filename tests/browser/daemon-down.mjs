// What the page says when the daemon is not there, and that it recovers by
// itself once it is; or, in "mismatch" mode, that it names both protocol
// numbers when the daemon speaks another.
//
//   node daemon-down.mjs <serve url> <project directory> down|mismatch
//
// In "down" mode it prints "banner shown" once the page says the daemon is
// not reachable, then waits (up to 20 s) for the caller to start one and
// for the page to show the project's sessions without the banner. Run by
// crates/serve/tests/suite/browser.rs.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [url, project, mode] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), 'chock-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const check = (ok, what) => { if (!ok) throw new Error(what); };
let failed = false;
try {
  const page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(20000);
  await page.goto(url + '/#/project/' + encodeURIComponent(project));
  const banner = page.locator('#banner');
  await banner.waitFor({ state: 'visible' });
  const text = await banner.innerText();
  if (mode === 'mismatch') {
    check(text.includes('chock-control 2') && text.includes('chock-control 1'), 'both numbers named: ' + text);
    console.log('banner: ' + text);
  } else {
    check(text.startsWith('The daemon is not reachable: no daemon is listening on unix:'), 'says the daemon is down: ' + text);
    check(text.includes('Retrying'), 'says it retries: ' + text);
    console.log('banner shown');
    await banner.waitFor({ state: 'hidden' });
    await page.getByText('No sessions in this project yet.').waitFor();
    console.log('recovered');
  }
} catch (err) {
  failed = true;
  console.error('browser test failed: ' + err.message);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
