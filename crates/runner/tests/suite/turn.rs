//! The turn driver against the fake model and a real temp project: tools
//! run, results go back to the model, and every bad model behaviour ends in
//! a bounded, recorded way.

use std::convert::Infallible;

use chock_runner::provider::{AssistantTurn, Message, ProviderError, RetryWait, ToolCall};
use chock_runner::tools::{Call, Commands, SessionTools, ToolOutput, Unparsed, Workspace};
use chock_runner::turn::{Gate, TurnContext, TurnEnd, TurnHooks, TurnLimits, run_turn};
use chock_testkit::{FakeModel, Reply, TempProject, Turn};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::{BOTH, Kind, provider, write_args};

#[derive(Debug, Default)]
pub(crate) struct Recorded {
    pub(crate) steps: Vec<String>,
    pub(crate) refuse: Option<&'static str>,
}

impl TurnHooks for Recorded {
    type Error = Infallible;

    async fn provider_wait(&mut self, wait: &RetryWait) -> Result<(), Infallible> {
        self.steps.push(format!("wait: {wait}"));
        Ok(())
    }

    async fn assistant(&mut self, turn: &AssistantTurn) -> Result<(), Infallible> {
        let calls: Vec<_> = turn.calls.iter().map(|call| call.name.as_str()).collect();
        self.steps
            .push(format!("assistant {:?} {calls:?}", turn.text));
        Ok(())
    }

    async fn before_tool(
        &mut self,
        call: &ToolCall,
        _parsed: &Result<Call, Unparsed>,
    ) -> Result<Gate, Infallible> {
        Ok(match self.refuse {
            Some(name) if name == call.name => Gate::Refuse(format!("{name} is denied by policy")),
            _ => Gate::Run,
        })
    }

    async fn tool_result(
        &mut self,
        call: &ToolCall,
        output: &ToolOutput,
    ) -> Result<(), Infallible> {
        let mark = if output.is_error { "error" } else { "ok" };
        self.steps
            .push(format!("{} {mark}: {}", call.name, output.text));
        Ok(())
    }
}

/// One turn with hooks that refuse nothing and the default limits.
async fn default_turn(
    kind: Kind,
    fake: &FakeModel,
    project: &TempProject,
) -> (TurnEnd, Vec<Message>, Vec<String>) {
    turn(
        kind,
        fake,
        project,
        Recorded::default(),
        TurnLimits::default(),
    )
    .await
}

/// One turn in `project` against `fake`: how it ended, the conversation,
/// and the steps the hooks recorded.
pub(crate) async fn turn(
    kind: Kind,
    fake: &FakeModel,
    project: &TempProject,
    hooks: Recorded,
    limits: TurnLimits,
) -> (TurnEnd, Vec<Message>, Vec<String>) {
    turn_with(&provider(kind, fake), project, hooks, limits).await
}

/// One turn with `provider`, as [`turn`].
pub(crate) async fn turn_with(
    provider: &chock_runner::provider::Provider,
    project: &TempProject,
    mut hooks: Recorded,
    limits: TurnLimits,
) -> (TurnEnd, Vec<Message>, Vec<String>) {
    let workspace = Workspace::new(project.path()).unwrap();
    let commands = Commands::new(workspace.root(), false);
    let policy = chock_policy::Policy::shipped();
    let memory = project.path().join(".memory.md");
    let tools = SessionTools::new(&policy, memory, None, provider.image_support());
    let cx = TurnContext {
        provider,
        model: "m",
        system: "you are a test",
        workspace: &workspace,
        commands: &commands,
        tools: &tools,
        limits,
    };
    let mut conversation = vec![Message::User { text: "go".into() }];
    let Ok(end) = run_turn(&cx, &mut conversation, &mut hooks).await;
    (end, conversation, hooks.steps)
}

#[tokio::test]
async fn a_turn_runs_the_tools_and_feeds_their_results_back() {
    for kind in BOTH {
        let project = TempProject::git();
        let fake = FakeModel::with([
            Turn::text("Writing.")
                .call("w", "write_file", &write_args("hello.txt", "hi\n"))
                .into(),
            Turn::text("")
                .call("r", "read_file", &json!({"path": "hello.txt"}))
                .into(),
            Turn::text("All done.").into(),
        ]);
        let (end, conversation, steps) = default_turn(kind, &fake, &project).await;
        assert!(matches!(end, TurnEnd::Done), "{kind:?}: {end:?}");
        assert_eq!(project.read("hello.txt"), "hi\n");
        assert_eq!(
            steps,
            vec![
                "assistant \"Writing.\" [\"write_file\"]",
                "write_file ok: created hello.txt (3 bytes, 1 line)",
                "assistant \"\" [\"read_file\"]",
                "read_file ok: hi\n",
                "assistant \"All done.\" []",
            ],
            "{kind:?}"
        );
        assert_eq!(conversation.len(), 6);
        // The third request carried both results back to the model.
        let third = fake.requests()[2].json().to_string();
        assert!(
            third.contains("created hello.txt (3 bytes, 1 line)"),
            "{third}"
        );
        assert!(third.contains("hi\\n"), "{third}");
    }
}

#[tokio::test]
async fn unknown_tools_bad_json_and_wrong_types_are_answered_for_the_model_to_read() {
    let fake = FakeModel::with([
        Turn::text("")
            .call("a", "launch_rockets", &json!({}))
            .raw_call("b", "read_file", "{\"path\": ")
            .call("c", "read_file", &json!({"path": 7}))
            .into(),
        Turn::text("I see.").into(),
    ]);
    let (end, _, steps) = default_turn(Kind::OpenAi, &fake, &TempProject::git()).await;
    assert!(matches!(end, TurnEnd::Done), "{end:?}");
    assert!(steps[1].starts_with("launch_rockets error: there is no tool named 'launch_rockets'"));
    assert!(
        steps[2].starts_with("read_file error: the arguments for read_file are not valid: EOF")
    );
    assert!(steps[3].starts_with(
        "read_file error: the arguments for read_file are not valid: invalid type: integer `7`"
    ));
    let second = fake.requests()[1].json();
    let results: Vec<_> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["tool_call_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(results, ["a", "b", "c"], "every call was answered");
}

#[tokio::test]
async fn a_model_repeating_a_failing_call_is_stopped() {
    let again = || -> Reply {
        Turn::text("")
            .call("x", "read_file", &json!({"path": "missing.txt"}))
            .into()
    };
    let fake = FakeModel::with([again(), again(), again(), again(), again()]);
    let (end, conversation, steps) =
        default_turn(Kind::Anthropic, &fake, &TempProject::git()).await;
    match end {
        TurnEnd::Stuck(why) => assert_eq!(
            why,
            "the model called read_file with the same arguments 3 times in a row and it failed each time; the turn was stopped"
        ),
        other => panic!("expected stuck, got {other:?}"),
    }
    assert_eq!(fake.requests().len(), 3);
    assert!(steps[3].ends_with(
        "This exact call has now failed 2 times. Repeating it will end the turn: change the arguments or try another approach."
    ));
    assert!(matches!(
        conversation.last(),
        Some(Message::ToolResult { .. })
    ));
}

#[tokio::test]
async fn a_turn_that_never_stops_calling_tools_ends_at_its_budget() {
    let fake = FakeModel::start();
    for n in 0..4 {
        fake.push(Turn::text("").call("l", "list_directory", &json!({"depth": n % 2 + 1})));
    }
    let limits = TurnLimits {
        max_model_calls: 3,
        ..TurnLimits::default()
    };
    let (end, _, _) = turn(
        Kind::OpenAi,
        &fake,
        &TempProject::git(),
        Recorded::default(),
        limits,
    )
    .await;
    assert!(matches!(end, TurnEnd::Budget(3)), "{end:?}");
    assert_eq!(fake.remaining(), 1);
}

#[tokio::test]
async fn a_refused_call_does_not_run_and_the_model_is_told() {
    let project = TempProject::git();
    let fake = FakeModel::with([
        Turn::text("")
            .call("w", "write_file", &write_args("x.txt", "x"))
            .into(),
        Turn::text("Understood.").into(),
    ]);
    let refusing = Recorded {
        refuse: Some("write_file"),
        ..Recorded::default()
    };
    let (end, _, steps) = turn(
        Kind::OpenAi,
        &fake,
        &project,
        refusing,
        TurnLimits::default(),
    )
    .await;
    assert!(matches!(end, TurnEnd::Done));
    assert_eq!(steps[1], "write_file error: write_file is denied by policy");
    assert!(!project.join("x.txt").exists());
}

#[tokio::test]
async fn a_provider_failure_ends_the_turn_with_the_error() {
    let fake = FakeModel::with([
        Turn::text("")
            .call("l", "list_directory", &json!({}))
            .into(),
        Reply::error(400, "upstream down"),
    ]);
    let (end, conversation, _) = default_turn(Kind::OpenAi, &fake, &TempProject::git()).await;
    match end {
        TurnEnd::Provider(ProviderError::Status {
            status: 400, body, ..
        }) => assert_eq!(body, "upstream down"),
        other => panic!("expected the provider error, got {other:?}"),
    }
    assert_eq!(
        conversation.len(),
        3,
        "what happened before the failure is kept"
    );
}

#[tokio::test]
async fn an_image_reaches_the_model_the_way_each_wire_carries_it() {
    for kind in BOTH {
        let project = TempProject::git();
        std::fs::write(project.join("shot.png"), b"\x89PNG\r\n\x1a\nfake").unwrap();
        let fake = FakeModel::with([
            Turn::text("")
                .call("i", "read_image", &json!({"path": "shot.png"}))
                .call("r", "read_memory", &json!({}))
                .into(),
            Turn::text("I see it.").into(),
        ]);
        let (end, _, _) = default_turn(kind, &fake, &project).await;
        assert!(matches!(end, TurnEnd::Done), "{kind:?}: {end:?}");
        let second = fake.requests()[1].json();
        let messages = second["messages"].as_array().unwrap();
        let data = "iVBORw0KGgpmYWtl";
        match kind {
            Kind::OpenAi => {
                // Both tool results first, then one user message with the
                // image as a data URL.
                let roles: Vec<_> = messages
                    .iter()
                    .map(|m| m["role"].as_str().unwrap())
                    .collect();
                assert_eq!(
                    roles,
                    ["system", "user", "assistant", "tool", "tool", "user"]
                );
                assert_eq!(
                    messages[5]["content"][1]["image_url"]["url"],
                    format!("data:image/png;base64,{data}")
                );
            }
            Kind::Responses => panic!("run over BOTH only"),
            Kind::Anthropic => {
                // Inside the tool's own result block.
                let blocks = messages[2]["content"].as_array().unwrap();
                assert_eq!(blocks[0]["type"], "tool_result");
                assert_eq!(blocks[0]["content"][1]["type"], "image");
                assert_eq!(blocks[0]["content"][1]["source"]["data"], data);
                assert_eq!(blocks[1]["type"], "tool_result");
            }
        }
    }
}
