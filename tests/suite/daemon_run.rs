//! The daemon with the real `chock run` as its child: `start` answers with
//! the session the child writes, and a watch sees that session to its end.

use std::time::Duration;

use chock_control::Client;
use chock_testkit::{FakeModel, TempProject, Turn, Wire};

use super::chock;
use super::kit::Running;

#[tokio::test(flavor = "multi_thread")]
async fn start_runs_a_real_session_that_a_watch_follows_to_its_end() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = FakeModel::with([Turn::text("Hello from the daemon's child.").into()]);
    let config = state.path().join("config").join("chock");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.zon"),
        fake.config_zon(Wire::OpenAi, "tiny"),
    )
    .unwrap();

    let mut command = chock(state.path());
    command.arg("daemon");
    let mut daemon = Running::spawn(command);
    let address = daemon.address();
    let client = Client::new(address).with_timeout(Duration::from_secs(60));

    let started = client.start(project.path(), "say hello").await.unwrap();
    assert!(started.log.ends_with("log.jsonl"), "{started:?}");

    let mut watch = client
        .watch(project.path(), &started.session, 0)
        .await
        .unwrap();
    let mut types = Vec::new();
    let mut ids = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(60), watch.next_event())
        .await
        .expect("the session ends within a minute")
        .unwrap()
    {
        let value: serde_json::Value = serde_json::from_str(&event.line).unwrap();
        types.push(value["type"].as_str().unwrap().to_owned());
        ids.push(event.id);
        if value["type"] == "session.end" {
            assert_eq!(value["reason"], "done", "{}", event.line);
        }
    }
    assert_eq!(
        ids,
        (1..=ids.len() as u64).collect::<Vec<_>>(),
        "no gap, no repeat"
    );
    for expected in [
        "session.open",
        "user.message",
        "assistant.message",
        "turn.end",
        "session.end",
    ] {
        assert!(
            types.iter().any(|t| t == expected),
            "{expected} missing from {types:?}"
        );
    }
    assert_eq!(types.last().map(String::as_str), Some("session.end"));

    let rows = client.list(project.path()).await.unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
}

/// A question the model asks (`ask_user`) in a session the daemon owns is
/// answered with the daemon's `reply` verb; a yes through `answer` is
/// refused by the session, which takes only text for a question.
#[tokio::test(flavor = "multi_thread")]
async fn a_question_is_answered_through_the_daemons_reply_verb() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = FakeModel::with([
        Turn::text("")
            .call(
                "q1",
                "ask_user",
                &serde_json::json!({"question": "which branch?"}),
            )
            .into(),
        Turn::text("Thanks.").into(),
    ]);
    let config = state.path().join("config").join("chock");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.zon"),
        fake.config_zon(Wire::OpenAi, "m"),
    )
    .unwrap();
    let mut command = chock(state.path());
    command.arg("daemon");
    let mut daemon = Running::spawn(command);
    let client = Client::new(daemon.address()).with_timeout(Duration::from_secs(60));

    let started = client.start(project.path(), "tidy up").await.unwrap();
    let mut watch = client
        .watch(project.path(), &started.session, 0)
        .await
        .unwrap();
    let mut request = None;
    let mut answer = None;
    while let Some(event) = tokio::time::timeout(Duration::from_secs(60), watch.next_event())
        .await
        .expect("the session goes on within a minute")
        .unwrap()
    {
        let value: serde_json::Value = serde_json::from_str(&event.line).unwrap();
        match value["type"].as_str() {
            Some("approval.request") => {
                assert_eq!(value["kind"], "question", "{}", event.line);
                let id = value["request_id"].as_str().unwrap().to_owned();
                let err = client
                    .answer(
                        project.path(),
                        &started.session,
                        &id,
                        chock_control::Answer::Yes,
                    )
                    .await
                    .unwrap_err();
                assert!(err.to_string().contains("did not take the answer"), "{err}");
                client
                    .reply(project.path(), &started.session, &id, "main,\nplease")
                    .await
                    .unwrap();
                request = Some(id);
            }
            Some("approval.answer") => answer = Some(value),
            _ => {}
        }
    }
    let request = request.expect("the question was asked");
    let answer = answer.expect("the answer was recorded");
    assert_eq!(answer["request_id"], request.as_str());
    assert_eq!(answer["text"], "main, please");
    let second = fake.requests()[1].json();
    assert!(
        second
            .to_string()
            .contains("the person answered: main, please"),
        "{second}"
    );
}
