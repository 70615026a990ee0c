// What the browser tests share: Debian's Chromium launched headless on a
// profile of its own, a check that throws with what it expected, and a run
// of one page that reports a failure and sets the exit code.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/// Throws `what` unless `ok`.
export const check = (ok, what) => { if (!ok) throw new Error(what); };

/// Chromium on a fresh profile, with `options` added to the launch; close()
/// closes it and removes the profile.
export async function launch(options = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'chock-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
    ...options,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/// Runs `test` on the first page of a browser launched with `options`
/// (20 s for each wait); prints why it failed and exits 1 if it throws, 0
/// otherwise.
export async function runPage(options, test) {
  const browser = await launch(options);
  let failed = false;
  try {
    const page = browser.context.pages()[0] || await browser.context.newPage();
    page.setDefaultTimeout(20000);
    await test(page);
  } catch (err) {
    failed = true;
    console.error('browser test failed: ' + err.message);
  } finally {
    await browser.close();
  }
  process.exit(failed ? 1 : 0);
}
