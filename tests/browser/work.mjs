// Working in the browser, as a person would: start a session from the
// project page, answer its question, approve an edit (its diff shown before
// and after), read its markdown reply and a command's output that holds
// HTML (both as text), reply after it ended so it carries on, interrupt the
// next turn, look at the workspace's changes and apply them; meanwhile a
// second page on the home shows every session live, and a second session
// started later appears there without a reload. Saves screenshots at 1280
// and 390 pixels wide.
//
//   node work.mjs <serve url> <project directory> <screenshot directory>
//
// Run by tests/suite/serve_browser.rs; the fake model's turns are there.
import { check, runPage } from './chromium.mjs';

const [url, project, shots] = process.argv.slice(2);
if (!url || !project || !shots) {
  console.error('usage: node work.mjs <serve url> <project directory> <screenshot directory>');
  process.exit(2);
}

const wide = { width: 1280, height: 900 };
const phone = { width: 390, height: 844 };
const shot = async (page, name, size) => {
  await page.setViewportSize(size);
  await page.waitForTimeout(100);
  await page.screenshot({ path: shots + '/' + name + '-' + size.width + '.png', fullPage: true });
};

await runPage({ viewport: wide, deviceScaleFactor: 1 }, async (page) => {
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('dialog', (d) => d.accept());

  // The home, open beside the work, never reloaded.
  const home = await page.context().newPage();
  home.on('pageerror', (e) => errors.push('home: ' + e.message));
  await home.goto(url + '/#/');
  await home.locator('#counts').filter({ hasText: 'sessions' }).waitFor();
  check((await home.locator('#counts').innerText()).startsWith('0 sessions'), 'the home starts empty');

  await page.goto(url + '/#/project/' + encodeURIComponent(project));
  await page.locator('textarea[name=message]').fill('Tidy the greeting');
  await page.getByRole('button', { name: 'Start session' }).click();
  await page.waitForURL(/#\/session\//);
  const id = decodeURIComponent(page.url().split('/').pop());

  // The model's question: the page and the home both say it waits.
  const reply = page.locator('#question input#reply');
  await reply.waitFor({ state: 'visible' });
  check((await page.locator('#status').innerText()) === 'waiting for you', 'the badge says it waits for the person');
  const waiting = home.locator('#waiting li[data-session="' + id + '"]');
  await waiting.waitFor();
  check((await waiting.locator('.asks').innerText()).includes('Which greeting should it say?'), 'the home shows the question');
  check((await waiting.locator('.name').innerText()) === 'Tidy the greeting', 'an untitled session is listed by its first message');
  await reply.fill('Hello, world');
  await reply.press('Enter');

  // The edit asks, with the diff it would make.
  const yes = page.locator('#question button.yes:has-text("Yes")');
  await yes.waitFor({ state: 'visible' });
  const proposed = await page.locator('#question .diff').innerText();
  check(proposed.includes('-Hi') && proposed.includes('+Hello, world'), 'the approval shows the edit as a diff: ' + proposed);
  await shot(page, 'serve-approval', wide);
  await shot(page, 'serve-approval', phone);
  await page.setViewportSize(wide);
  await yes.click();

  await page.locator('#ended').waitFor({ state: 'visible' });
  check((await page.locator('#status').innerText()) === 'ended: done', 'the first task ended done');

  // The edit's card: its real diff, from the result.
  const edit = page.locator('#events li.card.step[data-tool=edit_file]');
  check((await edit.locator('.diff-name').allInnerTexts()).includes('greeting.txt'), 'the diff names the file');
  const lines = await edit.locator('.diff .dl').allInnerTexts();
  check(lines.includes('-Hi') && lines.includes('+Hello, world'), 'the edit card shows the change: ' + lines.join(' | '));
  check((await edit.locator('.decided').innerText()).includes('ask'), 'the card says the edit was asked');

  // The command: exit status, and its HTML output as text.
  const command = page.locator('#events li.card.step[data-tool=run_command]').first();
  check((await command.locator('.arg').innerText()).startsWith('sh -c'), 'the command line is shown');
  const out = await command.locator('.outcome').innerText();
  check(out.includes('exit status 0'), 'the exit status is shown: ' + out);
  check(out.includes('<b>bold</b><img src=x onerror=window.pwned=2>'), 'the output is shown as text: ' + out);

  // The reply: markdown rendered, HTML from the model shown as text.
  const md = page.locator('#events li.card.reply .markdown').first();
  check((await md.locator('.md-h').first().innerText()) === 'Plan', 'a heading renders');
  check((await md.locator('strong').first().innerText()) === 'edit', 'bold renders');
  check((await md.locator('pre.code').innerText()).includes('sh check.sh'), 'a code block renders');
  check((await md.locator('li').count()) === 2, 'a list renders');
  check((await md.innerText()).includes('<img src=x onerror="window.pwned=1">'), 'the model\'s HTML is text');
  check(await page.locator('#events img, #events script, #events b').count() === 0, 'no markup from the log');
  check(await page.evaluate(() => window.pwned) === undefined, 'no script from the log ran');

  // The plan as a checklist; usage per turn and in total.
  const plan = await page.locator('#plan li').allInnerTexts();
  check(plan.length === 2 && plan[0].includes('Edit the greeting'), 'the plan is a checklist: ' + plan.join(' | '));
  check((await page.locator('#usage').innerText()).includes('in'), 'the total usage is shown');
  check((await page.locator('#events li.card.turn-end').first().innerText()).includes('tokens'), 'the turn says its usage');
  await shot(page, 'serve-session', wide);
  await shot(page, 'serve-session', phone);
  await page.setViewportSize(wide);

  // A reply carries the ended session on; its slow command is interrupted.
  await page.locator('form#continue textarea').fill('Now wait for the slow check');
  await page.getByRole('button', { name: 'Reply' }).click();
  const slow = page.locator('#events li.card.step[data-tool=run_command]', { hasText: 'sleep' });
  await slow.locator('.state', { hasText: 'running' }).waitFor();
  await page.locator('#interrupt').click();
  await page.locator('#status', { hasText: 'ended: interrupted' }).waitFor();
  check(await page.locator('#events li.card.you').count() === 2, 'both messages are in the one session');

  // The workspace's changes, then apply.
  await page.locator('#show-diff').click();
  await page.locator('#panel .diff').waitFor();
  check((await page.locator('#panel .diff').innerText()).includes('+Hello, world'), 'the workspace diff shows the edit');
  await page.locator('#panel button#apply').click();
  await page.locator('#banner').filter({ hasText: /appl/i }).waitFor();
  console.log('applied: ' + await page.locator('#banner').innerText());

  // A second session, started later, shows on the home without a reload.
  await page.goto(url + '/#/project/' + encodeURIComponent(project));
  await page.locator('textarea[name=message]').fill('Second task');
  await page.getByRole('button', { name: 'Start session' }).click();
  await page.waitForURL(/#\/session\//);
  const second = decodeURIComponent(page.url().split('/').pop());
  await home.locator('li[data-session="' + second + '"]').waitFor();
  await home.locator('#ended-sessions li[data-session="' + second + '"]').waitFor();
  check((await home.locator('#counts').innerText()).startsWith('2 sessions'), 'the home counts both');
  await shot(home, 'serve-home', wide);
  await shot(home, 'serve-home', phone);

  check(errors.length === 0, 'no script errors: ' + errors.join('; '));
  console.log('worked through session ' + id + ' and saw ' + second + ' arrive');
});
