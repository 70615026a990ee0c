// A long session in the browser: the page shows the last page of events,
// pages back with "Load older steps" (every event is one element with its id: a card, a line of a card, or a folded quiet line), and still shows a question asked
// long before the last page.
//
//   node long-session.mjs <serve url> <project directory> <session id>
//
// Run by crates/serve/tests/suite/browser.rs against a session of 450
// events whose event 2 is an approval request nobody has answered.
import { check, runPage } from './chromium.mjs';

const [url, project, session] = process.argv.slice(2);
await runPage({}, async (page) => {
  await page.goto(url + '/#/session/' + encodeURIComponent(project) + '/' + encodeURIComponent(session));
  await page.locator('#question button.yes').waitFor({ state: 'visible' });
  check((await page.locator('#question').innerText()).includes('Deploy?'), 'the old question is shown');
  await page.waitForFunction(() => document.querySelectorAll('#events [data-id]').length === 200);
  const ids = async () => (await page.locator('#events [data-id]').evaluateAll((items) => items.map((li) => Number(li.dataset.id)).sort((a, b) => a - b)));
  let shown = await ids();
  check(shown[0] === 251 && shown[199] === 450, 'the last page first: ' + shown[0] + '..' + shown[199]);
  await page.getByRole('button', { name: 'Load older steps' }).click();
  await page.waitForFunction(() => document.querySelectorAll('#events [data-id]').length === 400);
  await page.getByRole('button', { name: 'Load older steps' }).click();
  await page.waitForFunction(() => document.querySelectorAll('#events [data-id]').length === 450);
  await page.locator('#older').waitFor({ state: 'hidden' });
  shown = await ids();
  check(shown.every((id, i) => id === i + 1), 'every event once, in order, after paging back');
  console.log('long session: question shown, 450 events paged in order');
});
