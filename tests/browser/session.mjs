// The browser test of chock serve's page, in Debian's Chromium driven by
// Playwright: open a project, start a session, answer the question the
// model asks in words, watch it ask for a write, press Yes, see it finish.
// Text from the log must show as text, never as markup.
//
//   node session.mjs <serve url> <project directory> <screenshot.png>
//
// The session is a real `chock run` under a real `chock daemon`, whose fake
// model sets the title "Write the note", asks "Which file should the note
// go in?" (ask_user) and then calls write_file, which the project's
// chock.zon makes ask. Also saves <screenshot>-question.png while
// the question is open. Prints what it saw; exits non-zero with the reason
// on any failure. Run by tests/suite/serve_browser.rs.
import { check, runPage } from './chromium.mjs';

const [url, project, screenshot] = process.argv.slice(2);
if (!url || !project || !screenshot) {
  console.error('usage: node session.mjs <serve url> <project directory> <screenshot.png>');
  process.exit(2);
}

// A phone's screen: the page must be readable there.
await runPage({ viewport: { width: 412, height: 915 }, deviceScaleFactor: 1 }, async (page) => {
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));

  await page.goto(url + '/#/project/' + encodeURIComponent(project));
  await page.getByText('Start a session').waitFor();
  const hostile = 'Write the note <img src=x onerror="window.pwned=1"> <b>now</b>';
  await page.locator('textarea[name=message]').fill(hostile);
  await page.getByRole('button', { name: 'Start session' }).click();

  // The session page: the model's question arrives live and takes words.
  await page.waitForURL(/#\/session\//);
  const reply = page.locator('#question input#reply');
  await reply.waitFor({ state: 'visible' });
  const asked = await page.locator('#question').innerText();
  check(asked.includes('Which file should the note go in?'), 'the model\'s question is shown: ' + asked);
  check(await page.locator('#question button.no').count() === 0, 'a question has no Yes/No');
  await reply.fill('note.txt, please');
  await reply.press('Enter');

  // Then the approval, with Yes and No.
  const yes = page.locator('#question button.yes:has-text("Yes")');
  await yes.waitFor({ state: 'visible' });
  const question = await page.locator('#question').innerText();
  check(question.includes('write_file'), 'the question is shown: ' + question);
  check(question.includes('call.write_file'), 'the action is named: ' + question);
  console.log('asked: ' + question.split('\n').join(' | '));
  await page.screenshot({ path: screenshot.replace(/\.png$/, '-question.png'), fullPage: true });

  // Log text is text.
  const said = await page.locator('#events li.card.you .text').innerText();
  check(said === hostile, 'the message shows as typed: ' + said);
  check(await page.locator('#events img, #events b').count() === 0, 'no markup from the log');
  check(await page.evaluate(() => window.pwned) === undefined, 'no script from the log ran');

  await yes.click();
  await page.locator('#ended').waitFor({ state: 'visible' });
  await page.locator('#question').waitFor({ state: 'hidden' });
  // Every event is one element with its id: a card, a line in a card, or
  // a line in a fold of quiet events.
  const ids = await page.locator('#events [data-id]').evaluateAll((items) => items.map((e) => Number(e.dataset.id)));
  const sorted = ids.slice().sort((a, b) => a - b);
  check(JSON.stringify(sorted) === JSON.stringify(sorted.map((_, i) => i + 1)),
    'every event once, no gap: ' + sorted.join(', '));
  // The steps a person must see, in this order.
  const cards = await page.locator('#events > li.card').evaluateAll((items) =>
    items.map((li) => (li.dataset.tool ? 'step:' + li.dataset.tool : li.className.replace(/^card /, ''))));
  console.log('cards: ' + cards.join(', '));
  const want = ['you', 'step:set_title', 'step:ask_user', 'step:write_file', 'reply', 'turn-end', 'end done'];
  let at = 0;
  for (const c of cards) if (c.startsWith(want[at])) at += 1;
  check(at === want.length, 'the session\'s steps in order: missing ' + want[at] + ' in ' + cards.join(', '));
  const answers = await page.locator('#events .answered').allInnerTexts();
  check(answers.length === 2, 'two answers: ' + answers.join(' | '));
  check(answers[0].startsWith('answered "note.txt, please"'), 'the reply is recorded: ' + answers[0]);
  check(answers[1].startsWith('answered yes'), 'the yes is recorded: ' + answers[1]);
  const write = page.locator('#events li.card.step[data-tool=write_file]');
  check((await write.locator('.diff .dl.add').allInnerTexts()).includes('+written after a yes'), 'the write shows its diff');
  check((await page.locator('#title').innerText()) === 'Write the note', 'the title is shown');
  check((await page.locator('#status').innerText()) === 'ended: done', 'the ending is shown');
  check(errors.length === 0, 'no script errors: ' + errors.join('; '));
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log('finished; screenshot at ' + screenshot);
});
