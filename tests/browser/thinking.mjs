// A model's thinking on the session page: folded under "thought (N
// characters)", its words shown as text once opened.
//
//   node thinking.mjs <serve url> <project directory> <session id> <thinking>
//
// Run by tests/suite/serve_browser.rs against a session whose first answer
// thought <thinking>.
import { check, runPage } from './chromium.mjs';

const [url, project, session, thought] = process.argv.slice(2);
await runPage({}, async (page) => {
  await page.goto(url + '/#/session/' + encodeURIComponent(project) + '/' + encodeURIComponent(session));
  const folded = page.locator('#events li.card.reply details.thinking').first();
  await folded.waitFor({ state: 'attached' });
  check(!(await folded.evaluate((d) => d.open)), 'the thinking starts folded');
  const summary = await folded.locator('summary').innerText();
  check(summary === 'thought (' + thought.length + ' characters)', 'the fold says how much: ' + summary);
  check(!(await folded.locator('.text').isVisible()), 'its words are hidden while folded');
  await folded.locator('summary').click();
  const words = await folded.locator('.text').innerText();
  check(words === thought, 'opened, the thinking shows as text: ' + words);
  check(await page.locator('#events details.thinking b').count() === 0, 'no markup from the log');
  console.log('thinking: folded, then shown');
});
