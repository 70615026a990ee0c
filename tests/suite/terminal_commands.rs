//! The slash commands the session itself carries out, through tmux like
//! the rest of the terminal's tests: `/model` switching the next turn to
//! another provider (and refused for a model the policy or config.zon
//! does not let the session use), and `/compact` summarising the
//! conversation now.

use chock_testkit::{FakeModel, TempProject, Turn};
use serde_json::{Value, json};

use super::kit::{all_of, log_values, only_log, project_with, write_config};
use super::terminal::{WITHIN, at_prompt, open, say};

/// Two fake servers as two instances of config.zon, `fake` (the session's
/// model, `fake/m`) and `second`.
fn two_models(
    state: &std::path::Path,
    first: impl IntoIterator<Item = chock_testkit::Reply>,
    second: impl IntoIterator<Item = chock_testkit::Reply>,
) -> (FakeModel, FakeModel) {
    let (first, second) = (FakeModel::with(first), FakeModel::with(second));
    write_config(
        state,
        &format!(
            ".{{\n    .providers = .{{\n        .fake = .{{ .kind = .openai, .base_url = \"{}\" }},\n        .second = .{{ .kind = .openai, .base_url = \"{}\" }},\n    }},\n    .model = \"fake/m\",\n}}\n",
            first.openai_url(),
            second.openai_url()
        ),
    );
    (first, second)
}

/// The `── ` line of the last prompt: the status line as it was written.
fn last_status(screen: &str) -> String {
    screen
        .lines()
        .rev()
        .find(|l| l.starts_with("── "))
        .unwrap_or_default()
        .to_owned()
}

/// The notices of `subject` in the session's log.
fn notices<'a>(events: &'a [Value], subject: &str) -> Vec<&'a Value> {
    all_of(events, "notice")
        .into_iter()
        .filter(|e| e["subject"] == subject)
        .collect()
}

#[test]
fn slash_model_sends_the_next_turn_to_the_other_instance() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let (first, second) = two_models(
        state.path(),
        [Turn::text("Hello from the first.").into()],
        [Turn::text("Hello from the second.").into()],
    );
    let tmux = open(state.path(), project.path(), 160, &[]);
    say(&tmux, "hello");
    at_prompt(&tmux, 2);
    say(&tmux, "/model");
    let screen = at_prompt(&tmux, 3);
    assert!(
        screen.contains("the model is fake/m; /model <instance>/<model> switches"),
        "{screen}"
    );
    say(&tmux, "/model second/m");
    let screen = at_prompt(&tmux, 4);
    assert!(screen.contains("the next turns go to second/m"), "{screen}");
    assert!(
        last_status(&screen).contains(" · second/m · "),
        "the status line shows the new model: {screen}"
    );
    say(&tmux, "and again");
    let screen = at_prompt(&tmux, 5);
    assert!(screen.contains("Hello from the second."), "{screen}");
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_for_exit(), 0);

    assert_eq!(first.requests().len(), 1, "the first turn only");
    let sent = second.wait_for_requests(1, WITHIN)[0].json();
    assert_eq!(sent["model"], "m", "{sent}");
    assert!(sent.to_string().contains("and again"), "{sent}");
    assert!(
        sent.to_string().contains("Hello from the first."),
        "the conversation goes on with the new model: {sent}"
    );
    let events = log_values(&only_log(state.path()));
    let switched = notices(&events, "model");
    assert_eq!(switched.len(), 1, "{switched:#?}");
    let text = switched[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("the model is now second/m (was fake/m), switched by the person with /model; model.select allow ("),
        "{text}"
    );
    let answers = all_of(&events, "assistant.message");
    assert_eq!(answers[0].get("model"), None, "the session's own model");
    assert_eq!(answers[1]["model"], "second/m");
}

#[test]
fn slash_model_refused_by_the_policy_keeps_the_model() {
    let state = tempfile::tempdir().unwrap();
    let project = project_with(&[("provider.second.m", "deny")]);
    let (first, second) = two_models(
        state.path(),
        [
            Turn::text("First answer.").into(),
            Turn::text("Still the first.").into(),
        ],
        [],
    );
    let tmux = open(state.path(), project.path(), 400, &[]);
    say(&tmux, "hello");
    at_prompt(&tmux, 2);
    say(&tmux, "/model second/m");
    let screen = at_prompt(&tmux, 3);
    assert!(
        screen.contains(
            "chock: the policy does not let this session use the model 'second/m': model.select answers deny (project chock.zon rule .{ .action = \"provider.second.m\", .decision = .deny } at "
        ),
        "{screen}"
    );
    assert!(
        screen.contains("the session keeps fake/m. Pick another model"),
        "{screen}"
    );
    assert!(last_status(&screen).contains(" · fake/m · "), "{screen}");
    say(&tmux, "go on");
    let screen = at_prompt(&tmux, 4);
    assert!(screen.contains("Still the first."), "{screen}");
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_for_exit(), 0);
    assert_eq!(first.requests().len(), 2);
    assert!(second.requests().is_empty());
    let events = log_values(&only_log(state.path()));
    assert!(notices(&events, "model").is_empty(), "nothing switched");
}

#[test]
fn slash_model_naming_an_unknown_instance_keeps_the_model() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let (first, second) = two_models(state.path(), [Turn::text("Still the first.").into()], []);
    let tmux = open(state.path(), project.path(), 400, &[]);
    say(&tmux, "/model nowhere/m");
    let screen = at_prompt(&tmux, 2);
    assert!(
        screen
            .contains("chock: the model 'nowhere/m' names the provider instance 'nowhere', which "),
        "{screen}"
    );
    assert!(
        screen.contains("(instances: fake, second); the session keeps fake/m"),
        "{screen}"
    );
    say(&tmux, "/model second");
    let screen = at_prompt(&tmux, 3);
    assert!(
        screen.contains(
            "chock: the model 'second' does not name an instance: write it as <instance>/<model>"
        ),
        "{screen}"
    );
    say(&tmux, "hello");
    let screen = at_prompt(&tmux, 4);
    assert!(screen.contains("Still the first."), "{screen}");
    assert!(last_status(&screen).contains(" · fake/m · "), "{screen}");
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_for_exit(), 0);
    assert_eq!(first.requests().len(), 1);
    assert!(second.requests().is_empty());
}

#[test]
fn slash_compact_summarises_and_the_next_request_carries_the_summary() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = super::kit::fake_model(
        state.path(),
        [
            Turn::text("Writing it.")
                .call(
                    "w1",
                    "write_file",
                    &json!({"path": "hello.txt", "content": "hello\n"}),
                )
                .into(),
            Turn::text("Wrote hello.txt.").into(),
            Turn::text("SUMMARY: the person asked for hello.txt and it was written.").into(),
            Turn::text("Carrying on.").into(),
        ],
    );
    let tmux = open(state.path(), project.path(), 160, &[]);
    say(&tmux, "write hello.txt");
    at_prompt(&tmux, 2);
    say(&tmux, "/compact");
    let screen = at_prompt(&tmux, 3);
    assert!(
        screen.contains("compacted: 3 messages (about "),
        "how much was summarised: {screen}"
    );
    say(&tmux, "what next?");
    let screen = at_prompt(&tmux, 4);
    assert!(screen.contains("Carrying on."), "{screen}");
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_for_exit(), 0);

    let requests = fake.wait_for_requests(4, WITHIN);
    let summarising = requests[2].json().to_string();
    assert!(summarising.contains("write hello.txt"), "{summarising}");
    let next = requests[3].json();
    let messages = next["messages"].as_array().unwrap();
    assert!(
        messages.iter().any(|m| m["content"]
            .as_str()
            .is_some_and(|c| c.contains("SUMMARY: the person asked for hello.txt"))),
        "{next}"
    );
    assert!(
        !next.to_string().contains("Writing it."),
        "the summarised answer is not sent: {next}"
    );
    assert!(next.to_string().contains("Wrote hello.txt."), "{next}");
    let events = log_values(&only_log(state.path()));
    let compactions = all_of(&events, "compaction");
    assert_eq!(compactions.len(), 1);
    assert!(
        compactions[0]["summary"]
            .as_str()
            .unwrap()
            .starts_with("SUMMARY:")
    );
    let said = notices(&events, "compaction");
    assert_eq!(said.len(), 1, "{said:#?}");
    assert!(
        said[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("compacted at the person's /compact: 3 messages")
    );
}

#[test]
fn slash_compact_with_too_little_is_refused() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = super::kit::fake_model(state.path(), [Turn::text("Hello.").into()]);
    let tmux = open(state.path(), project.path(), 400, &[]);
    say(&tmux, "/compact");
    let screen = at_prompt(&tmux, 2);
    assert!(
        screen.contains("chock: there is too little to compact: the conversation holds 0 messages"),
        "{screen}"
    );
    say(&tmux, "hello");
    at_prompt(&tmux, 3);
    say(&tmux, "/compact");
    let screen = at_prompt(&tmux, 4);
    assert!(
        screen.contains("chock: there is too little to compact: the conversation holds 2 messages"),
        "{screen}"
    );
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_for_exit(), 0);
    assert_eq!(fake.requests().len(), 1, "no summary was asked for");
    let events = log_values(&only_log(state.path()));
    assert!(all_of(&events, "compaction").is_empty());
}
