// A diff too large to show on the page: the Changes panel shows its first
// part, says how large the whole is, and links to the whole as text, which
// has the last line the page left out.
//
//   node big-diff.mjs <serve url> <project directory> <session id> <last line>
//
// Run by tests/suite/serve_browser.rs against a session that wrote a file
// of more than the page's 256 KiB whose last line is <last line>.
import { check, runPage } from './chromium.mjs';

const [url, project, session, last] = process.argv.slice(2);
await runPage({}, async (page) => {
  await page.goto(url + '/#/session/' + encodeURIComponent(project) + '/' + encodeURIComponent(session));
  await page.locator('#show-diff').click();
  const link = page.getByRole('link', { name: 'The full diff as text' });
  await link.waitFor();
  const panel = await page.locator('#panel').innerText();
  check(/The diff is \d+ bytes; the first part is shown/.test(panel), 'the panel says the diff is cut: ' + panel.slice(0, 200));
  check(!panel.includes(last), 'the page does not show the diff past its bound');
  check(await page.locator('#apply').isVisible(), 'a cut diff can still be applied');
  const response = await page.request.get(await link.getAttribute('href', { timeout: 1000 }).then((h) => new URL(h, url).href));
  check(response.status() === 200, 'the full diff answers 200: ' + response.status());
  check(response.headers()['content-type'] === 'text/plain; charset=utf-8', 'the full diff is plain text: ' + response.headers()['content-type']);
  const whole = await response.text();
  check(whole.includes('+' + last + '\n'), 'the full diff has the last line');
  check(whole.length > panel.length, 'the full diff is longer than what the page shows');
  console.log('big diff: cut on the page, whole behind the link (' + whole.length + ' bytes)');
});
