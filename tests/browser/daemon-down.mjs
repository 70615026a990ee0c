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
import { check, runPage } from './chromium.mjs';

const [url, project, mode] = process.argv.slice(2);
await runPage({}, async (page) => {
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
});
