//! A 30-call session for the prompt-caching figures: 29 calls that each
//! read one 2,000-character file, then an answer, over the Anthropic wire,
//! against the fake model's billing (modelled on the API's prompt cache).
//! Shared by the benchmark (`tests/perf`, which prints the figures) and by
//! the end-to-end test that holds the target (`tests/suite`).

use std::path::Path;
use std::process::Command;

use chock_testkit::{Billing, FakeModel, TempProject, Turn, Wire};

/// Model calls in the session.
pub(crate) const CALLS: usize = 30;

/// Runs the session with prompt caching on or off (`.prompt_cache =
/// false`): what each call was billed. `chock` makes the `chock` command
/// for a state directory, reading its config from `<state>/config`.
pub(crate) fn billed_session(chock: impl FnOnce(&Path) -> Command, caching: bool) -> Vec<Billing> {
    let state = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
    let project = TempProject::git();
    for i in 1..CALLS {
        let line = format!("line {i} of a file the agent reads; ");
        project.write(&format!("f{i:02}.txt"), &line.repeat(2000 / line.len()));
    }
    project.commit_all("files to read");
    let mut replies: Vec<chock_testkit::Reply> = (1..CALLS)
        .map(|i| {
            Turn::text("")
                .call(
                    &format!("r{i}"),
                    "read_file",
                    &serde_json::json!({"path": format!("f{i:02}.txt")}),
                )
                .into()
        })
        .collect();
    replies.push(Turn::text("All read.").into());
    let fake = FakeModel::with(replies);
    fake.account_usage();
    let config = fake.config_zon(Wire::Anthropic, "m").replace(
        "\" },",
        if caching {
            "\" },"
        } else {
            "\", .prompt_cache = false },"
        },
    );
    let dir = state.path().join("config").join("chock");
    std::fs::create_dir_all(&dir).unwrap_or_else(|err| panic!("{err}"));
    std::fs::write(dir.join("config.zon"), config).unwrap_or_else(|err| panic!("{err}"));
    let out = chock(state.path())
        .arg("run")
        .arg(project.path())
        .arg("read every file")
        .output()
        .unwrap_or_else(|err| panic!("{err}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let billed = fake.billing();
    assert_eq!(billed.len(), CALLS, "one bill per model call");
    billed
}

/// The share of prompt tokens read from the cache over `calls`.
pub(crate) fn read_share(calls: &[Billing]) -> f64 {
    let read: u64 = calls.iter().map(|b| b.cache_read).sum();
    let prompt: u64 = calls.iter().map(Billing::prompt).sum();
    read as f64 / prompt.max(1) as f64
}

/// Input billed at the API's prices: uncached at 1, cache reads at 0.1,
/// cache writes at 1.25.
pub(crate) fn billed_input(calls: &[Billing]) -> f64 {
    calls
        .iter()
        .map(|b| b.input as f64 + 0.1 * b.cache_read as f64 + 1.25 * b.cache_write as f64)
        .sum()
}
