// What a model or a tool writes is shown, never run: a session whose reply
// is markdown holding HTML and a javascript: link, whose command printed
// HTML, and whose write's diff holds HTML. The markdown renders (a
// heading, bold, a list, a code block, an http link); every tag and the
// javascript: link stay text; no script runs.
//
//   node hostile.mjs <serve url> <project directory> <session id>
//
// Run by crates/serve/tests/suite/browser.rs.
import { check, runPage } from './chromium.mjs';

const [url, project, session] = process.argv.slice(2);
await runPage({ viewport: { width: 390, height: 844 } }, async (page) => {
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url + '/#/session/' + encodeURIComponent(project) + '/' + encodeURIComponent(session));
  await page.locator('#events li.card.end').waitFor();
  const md = page.locator('#events li.card.reply .markdown');
  check((await md.locator('.md-h').innerText()) === 'Summary', 'the heading renders');
  check((await md.locator('strong').innerText()) === 'adds', 'bold renders');
  check((await md.locator('li').count()) === 2, 'the list renders');
  check((await md.locator('pre.code').innerText()) === '<script>window.pwned=3</script>', 'a code block is text');
  check((await md.locator('a').count()) === 1, 'only the http link is a link');
  check((await md.locator('a').getAttribute('href')) === 'https://example.org/x', 'the link goes where it says');
  check((await md.locator('a').getAttribute('rel')).includes('noopener'), 'the link does not hand over the page');
  const text = await md.innerText();
  check(text.includes('<img src=x onerror="window.pwned=1">'), 'inline HTML is text: ' + text);
  check(text.includes('[click](javascript:window.pwned=4)'), 'a javascript: link is text: ' + text);
  const step = page.locator('#events li.card.step[data-tool=run_command]');
  check((await step.locator('.outcome').innerText()).includes('<b>bold</b>'), 'the output is text');
  const write = page.locator('#events li.card.step[data-tool=write_file]');
  const lines = await write.locator('.diff .dl').allInnerTexts();
  check(lines.includes('+<iframe src="https://evil.example"></iframe>'), 'the diff is text: ' + lines.join(' | '));
  check(lines.some((l) => l.startsWith('... (')), 'a cut diff says so');
  check(await page.locator('#events img, #events script, #events iframe, #events b').count() === 0, 'no markup from the log');
  check(await page.evaluate(() => window.pwned) === undefined, 'no script from the log ran');
  check(errors.length === 0, 'no script errors: ' + errors.join('; '));
  console.log('hostile text shown as text');
});
