// A session and its subagent in the browser: the project's list shows the
// subagent right under its parent, and each session's page links the
// other (the parent's spawn_agent call names the child, the child's
// session.open names the parent).
//
//   node subagent.mjs <serve url> <project directory> <parent id> <child id>
//
// Run by crates/serve/tests/suite/browser.rs.
import { check, runPage } from './chromium.mjs';

const [url, project, parent, child] = process.argv.slice(2);
await runPage({}, async (page) => {
  await page.goto(url + '/#/project/' + encodeURIComponent(project));
  await page.locator('#sessions li.subagent').waitFor();
  const rows = await page.locator('#sessions li').evaluateAll((items) =>
    items.map((li) => ({ nested: li.classList.contains('subagent'), text: li.innerText })));
  const at = rows.findIndex((r) => r.text.includes(parent) && !r.nested);
  check(at >= 0, 'the parent is listed: ' + JSON.stringify(rows));
  check(rows[at + 1] && rows[at + 1].nested && rows[at + 1].text.includes('subagent of ' + parent),
    'the subagent is right under its parent: ' + JSON.stringify(rows));

  await page.goto(url + '/#/session/' + encodeURIComponent(project) + '/' + encodeURIComponent(parent));
  const down = page.locator('#events a.session-link', { hasText: 'subagent ' + child });
  await down.first().waitFor();
  await down.first().click();
  await page.waitForURL(new RegExp(child + '$'));
  const up = page.locator('#events a.session-link', { hasText: 'parent session ' + parent });
  await up.waitFor();
  console.log('subagent: nested under its parent, linked both ways');
});
