//! `chock run` against providers that behave like real APIs (the fake
//! model): waits before retries on the terminal, in the log and in the
//! session's row; a provider that never recovers; thinking and reasoning
//! kept in the log and sent again by a carried-on session; the bounds on
//! model calls; `chock usage` with the prompt cache; compaction counted.

use std::time::Duration;

use chock_log::event::EndReason;
use chock_log::{SessionRow, StateDir, fold_log};
use chock_testkit::{FakeModel, Reply, TempProject, Turn, Wire};
use serde_json::{Value, json};

use super::chock;
use super::kit::{
    all_of, assert_ended, chock_out, failed, log_values, only_log, run_session, sessions,
    start_session, write_config,
};

/// A config.zon with the fake as instance `fake` of `kind`, its entry
/// holding `extra` fields, and top-level `top` lines.
fn config(fake: &FakeModel, kind: &str, extra: &str, top: &str) -> String {
    let url = match kind {
        "anthropic" => fake.url(),
        _ => fake.openai_url(),
    };
    format!(
        ".{{\n    .providers = .{{\n        .fake = .{{ .kind = .{kind}, .base_url = \"{url}\"{extra} }},\n    }},\n    .model = \"fake/m\",\n{top}}}\n"
    )
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn notices<'a>(events: &'a [Value], subject: &str) -> Vec<&'a str> {
    all_of(events, "notice")
        .into_iter()
        .filter(|n| n["subject"] == subject)
        .map(|n| n["text"].as_str().unwrap())
        .collect()
}

#[test]
fn a_rate_limit_is_waited_out_said_on_the_terminal_and_noted_in_the_log() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = FakeModel::with([
        Turn::text("")
            .call(
                "w",
                "write_file",
                &json!({"path": "a.txt", "content": "a\n"}),
            )
            .into(),
        Reply::rate_limited("0.2"),
        Turn::text("written").into(),
    ]);
    write_config(state.path(), &fake.config_zon(Wire::Anthropic, "m"));
    let out = run_session(state.path(), project.path(), "write a");
    assert!(out.status.success(), "{}", stderr(&out));
    let said = "rate limited by fake, retrying in 0.2 s (1 of 6)";
    assert!(
        stderr(&out).contains(&format!("chock: {said}\n")),
        "{}",
        stderr(&out)
    );
    let events = log_values(&only_log(state.path()));
    assert_eq!(notices(&events, "provider"), [said]);
    assert_eq!(
        all_of(&events, "tool.result").len(),
        1,
        "no second tool run"
    );
    assert_eq!(all_of(&events, "turn.end").len(), 1, "one turn");
    assert_eq!(fake.requests().len(), 3);
}

#[test]
fn while_a_retry_waits_the_session_row_says_waiting_for_the_provider() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = FakeModel::with([Reply::rate_limited("3"), Turn::text("back").into()]);
    write_config(state.path(), &fake.config_zon(Wire::OpenAi, "m"));
    let child = start_session(state.path(), project.path(), "hi");
    let st = StateDir::at(state.path());
    let log = chock_testkit::wait_for(Duration::from_secs(20), "the wait's notice", || {
        let id = sessions(state.path()).into_iter().next()?;
        let log = st.log_path(&id);
        let text = std::fs::read_to_string(&log).ok()?;
        text.contains("\"subject\":\"provider\"").then_some(log)
    });
    let row = SessionRow::from_state(&sessions(state.path())[0], &fold_log(&log).unwrap().state);
    assert_eq!(row.status.as_str(), "retrying");
    assert_eq!(
        row.detail.as_deref(),
        Some("rate limited by fake, retrying in 3 s (1 of 6)")
    );
    let listed = chock_out(state.path(), &["sessions"]);
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("waiting for the provider"), "{listed}");
    // The daemon's `list` row, as the browser gets it.
    let (mut daemon, address) = super::kit::start_daemon(state.path());
    let rows = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(chock_control::Client::new(address).list(project.path()))
        .unwrap();
    let row = rows[0].session_row().unwrap();
    assert_eq!(row.status.as_str(), "retrying");
    assert_eq!(
        row.detail.as_deref(),
        Some("rate limited by fake, retrying in 3 s (1 of 6)")
    );
    assert!(daemon.terminate().success());
    let out = super::kit::finish(child);
    assert!(out.status.success(), "{}", stderr(&out));
    let after = SessionRow::from_state(&sessions(state.path())[0], &fold_log(&log).unwrap().state);
    assert_eq!(after.status.as_str(), "ended");
}

#[test]
fn a_provider_that_answers_429_for_ever_ends_the_turn_and_the_session_can_be_carried_on() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = FakeModel::with((0..3).map(|_| Reply::rate_limited("0")));
    write_config(
        state.path(),
        &config(
            &fake,
            "anthropic",
            ", .retries = 2, .retry_wait_secs = 10",
            "",
        ),
    );
    let out = run_session(state.path(), project.path(), "hi");
    let said = failed(&out);
    assert!(
        said.contains("provider 'fake' still failed after 2 retries and 0 s of waiting: provider 'fake' answered HTTP 429"),
        "{said}"
    );
    let log = only_log(state.path());
    assert_ended(&log, EndReason::Error);
    assert_eq!(notices(&log_values(&log), "provider").len(), 2);
    fake.push(Turn::text("here now"));
    let id = sessions(state.path())[0].to_string();
    let out = chock_out(state.path(), &["run", "--continue", &id, "try again"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("here now"));
}

#[test]
fn thinking_is_shown_folded_kept_in_the_log_and_sent_again_after_carrying_on() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = FakeModel::with([
        Turn::text("")
            .thinking("The directory first, then the answer.", "sig-1")
            .call("t1", "list_directory", &json!({}))
            .into(),
        Turn::text("Seen.").into(),
    ]);
    write_config(
        state.path(),
        &config(&fake, "anthropic", ", .thinking_budget = 2048", ""),
    );
    let out = run_session(state.path(), project.path(), "look");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "chock: thought (37 characters, folded; chock log shows them): The directory first, then the answer.\n"
        ),
        "{}",
        stderr(&out)
    );
    let log = only_log(state.path());
    let events = log_values(&log);
    let answer = &all_of(&events, "assistant.message")[0];
    assert_eq!(
        answer["reasoning"],
        json!([{"kind": "thinking", "text": "The directory first, then the answer.", "opaque": "sig-1"}])
    );
    // A carried-on session rebuilds the request from the log, thinking
    // included (the fake refuses a tool-use turn without it).
    fake.push(Turn::text("Still seen."));
    let id = sessions(state.path())[0].to_string();
    let out = chock_out(state.path(), &["run", "--continue", &id, "again"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let last = fake.requests().last().unwrap().json();
    assert_eq!(
        last["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "The directory first, then the answer.", "signature": "sig-1"})
    );
}

#[test]
fn responses_reasoning_is_kept_an_unknown_item_said_once_and_the_log_rebuilds_the_input() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let odd = json!({"type": "web_search_call", "id": "ws_1", "status": "completed"});
    let fake = FakeModel::with([
        Turn::text("")
            .reasoning("rs_1", "Look first.", "enc-1")
            .extra_item(odd.clone())
            .call("c1", "list_directory", &json!({}))
            .into(),
        Turn::text("Done.").extra_item(odd.clone()).into(),
    ]);
    write_config(
        state.path(),
        &config(&fake, "openai_responses", ", .reasoning_effort = .low", ""),
    );
    let out = run_session(state.path(), project.path(), "look");
    assert!(out.status.success(), "{}", stderr(&out));
    let log = only_log(state.path());
    let events = log_values(&log);
    let said = notices(&events, "model");
    assert_eq!(said.len(), 1, "said once: {said:?}");
    assert!(said[0].contains("'web_search_call'"), "{said:?}");
    let answers = all_of(&events, "assistant.message");
    assert_eq!(answers[0]["unknown_items"], json!([odd]));
    assert_eq!(answers[0]["reasoning"][0]["id"], "rs_1");
    fake.push(Turn::text("Again."));
    let id = sessions(state.path())[0].to_string();
    let out = chock_out(state.path(), &["run", "--continue", &id, "again"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let request = fake.requests().last().unwrap().json();
    assert!(request.get("previous_response_id").is_none());
    let input = request["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output",
            "message",
            "message"
        ]
    );
    assert_eq!(input[1]["encrypted_content"], "enc-1");
    assert!(!request.to_string().contains("web_search_call"));
}

#[test]
fn max_model_calls_bounds_a_turn_and_the_ending_names_the_setting() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let looping = || Reply::from(Turn::text("").call("l", "list_directory", &json!({})));
    let fake = FakeModel::with([looping(), looping(), looping()]);
    write_config(
        state.path(),
        &config(&fake, "openai", "", "    .max_model_calls = 2,\n"),
    );
    let said = failed(&run_session(state.path(), project.path(), "loop"));
    assert!(
        said.contains("the turn made 2 model calls without finishing and was stopped: .max_model_calls = 2 in config.zon bounds a turn"),
        "{said}"
    );
    assert_eq!(fake.requests().len(), 2);
}

#[test]
fn max_session_model_calls_bounds_the_session_over_carried_on_runs() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = FakeModel::with([
        Turn::text("")
            .call("l", "list_directory", &json!({}))
            .into(),
        Turn::text("one").into(),
        Turn::text("two").into(),
    ]);
    write_config(
        state.path(),
        &config(&fake, "openai", "", "    .max_session_model_calls = 3,\n"),
    );
    let out = run_session(state.path(), project.path(), "first");
    assert!(out.status.success(), "{}", stderr(&out));
    let id = sessions(state.path())[0].to_string();
    let out = chock_out(state.path(), &["run", "--continue", &id, "second"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = failed(&chock_out(
        state.path(),
        &["run", "--continue", &id, "third"],
    ));
    assert!(
        said.contains("the session made 3 model calls in all and was stopped: .max_session_model_calls = 3 in config.zon bounds a session"),
        "{said}"
    );
    assert_eq!(fake.requests().len(), 3);
}

#[test]
fn a_zero_bound_on_model_calls_is_refused_with_what_to_write() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = FakeModel::start();
    write_config(
        state.path(),
        &config(&fake, "openai", "", "    .max_model_calls = 0,\n"),
    );
    let said = failed(&run_session(state.path(), project.path(), "hi"));
    assert!(
        said.contains(
            ".max_model_calls = 0 would let no model call be made: give at least 1, or leave it out"
        ),
        "{said}"
    );
    assert!(fake.requests().is_empty());
}

#[test]
fn usage_shows_the_prompt_cache_and_what_it_saved() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = FakeModel::with([
        Turn::text("")
            .call("l", "list_directory", &json!({}))
            .usage(4000, 10)
            .cache(0, 3900)
            .into(),
        Turn::text("done").usage(4100, 5).cache(3900, 150).into(),
    ]);
    write_config(state.path(), &fake.config_zon(Wire::Anthropic, "m"));
    let out = run_session(state.path(), project.path(), "hi");
    assert!(out.status.success(), "{}", stderr(&out));
    let id = sessions(state.path())[0].to_string();
    let text =
        String::from_utf8_lossy(&chock_out(state.path(), &["usage", &id]).stdout).into_owned();
    assert!(text.contains("CACHE READ  CACHE WRITE"), "{text}");
    assert!(
        text.contains("prompt cache: 3900 of 8100 input tokens read from a cache (48%), 4050 written; the input cost 31% less than uncached"),
        "{text}"
    );
    let json = chock_out(state.path(), &["usage", &id, "--json"]);
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["total"]["cache_read_tokens"], 3900);
    assert_eq!(report["total"]["cache_write_tokens"], 4050);
    assert_eq!(report["calls"][1]["cache_read_tokens"], 3900);
}

/// A session whose second call comes after a big tool result, in a small
/// window: the compaction event says how the size was had.
fn compacted(kind: &str, wire_usage: u64) -> (Vec<Value>, FakeModel) {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    project.write("big.txt", &"word ".repeat(2000));
    project.commit_all("big");
    let fake = FakeModel::with([
        Turn::text("")
            .call("r", "read_file", &json!({"path": "big.txt"}))
            .usage(wire_usage, 10)
            .into(),
        Turn::text("The summary.").into(),
        Turn::text("done").into(),
    ]);
    write_config(
        state.path(),
        &config(&fake, kind, ", .context_window = 4000", ""),
    );
    let out = run_session(state.path(), project.path(), "read big.txt");
    assert!(out.status.success(), "{}", stderr(&out));
    (log_values(&only_log(state.path())), fake)
}

#[test]
fn compaction_goes_by_counted_tokens_and_the_log_says_how_they_were_had() {
    let (events, fake) = compacted("anthropic", 1200);
    let compaction = all_of(&events, "compaction");
    assert_eq!(compaction.len(), 1, "{events:#?}");
    assert_eq!(compaction[0]["counted_by"], "count_tokens");
    assert!(compaction[0]["tokens"].as_u64().unwrap() >= 3000);
    assert!(
        fake.requests()
            .iter()
            .any(|r| r.path == "/v1/messages/count_tokens")
    );

    let (events, fake) = compacted("openai", 1200);
    let compaction = all_of(&events, "compaction");
    assert_eq!(compaction[0]["counted_by"], "usage");
    // 1200 reported and 10 produced, plus a quarter of the result's
    // characters estimated.
    let tokens = compaction[0]["tokens"].as_u64().unwrap();
    assert!((3700..3800).contains(&tokens), "{tokens}");
    assert!(
        fake.requests()
            .iter()
            .all(|r| !r.path.contains("count_tokens"))
    );
}

#[test]
fn the_config_zon_fields_of_the_providers_page_are_read() {
    // docs/providers.md's fields in one config: each is known (an unknown
    // kind or value fails the parse before any call), and the session gets
    // as far as the unreachable provider, retrying within the one second
    // the config allows.
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let text = r#".{
    .providers = .{
        .claude = .{ .kind = .anthropic, .base_url = "http://127.0.0.1:9", .thinking_budget = 4096, .retries = 4, .retry_wait_secs = 1, .prompt_cache = true },
        .gpt = .{ .kind = .openai_responses, .base_url = "http://127.0.0.1:9/v1", .reasoning_effort = .medium, .retries = 0 },
    },
    .model = "claude/claude-sonnet-4-5",
    .max_model_calls = 80,
    .max_session_model_calls = 1000,
}
"#;
    write_config(state.path(), text);
    let started = std::time::Instant::now();
    let said = failed(&run_session(state.path(), project.path(), "hi"));
    assert!(
        said.contains("cannot reach provider 'claude' at http://127.0.0.1:9"),
        "{said}"
    );
    assert!(said.contains("still failed after"), "{said}");
    assert!(started.elapsed() < Duration::from_secs(20));
    let out = chock(state.path())
        .args([
            "run",
            "--model",
            "gpt/gpt-5",
            project.path().to_str().unwrap(),
            "hi",
        ])
        .output()
        .unwrap();
    assert!(
        failed(&out).contains("cannot reach provider 'gpt'"),
        "{}",
        failed(&out)
    );
}

#[path = "../perf/cache_session.rs"]
mod cache_session;

#[test]
fn a_30_call_session_reads_most_of_its_input_from_the_prompt_cache() {
    let cached = cache_session::billed_session(chock, true);
    // From the fourth call on, at least 70% of the input is read from the
    // cache (the issue's target); without breakpoints, none is.
    let later = cache_session::read_share(&cached[3..]);
    assert!(later >= 0.70, "{:.1}% read from the cache", later * 100.0);
    let uncached = cache_session::billed_session(chock, false);
    assert_eq!(cache_session::read_share(&uncached), 0.0);
    assert!(cache_session::billed_input(&cached) < cache_session::billed_input(&uncached) / 2.0);
}
