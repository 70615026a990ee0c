//! The `script` provider through the public API: a file of turns, found
//! relative to the project, played back by conversation position.

use chock_runner::config::{ProviderConfig, ScriptProviderConfig};
use chock_runner::provider::{Message, Provider, ProviderError, StopReason, ToolCall};
use chock_testkit::TempProject;
use pretty_assertions::assert_eq;

use super::{answer, plain_request};

fn script_provider(project: &TempProject) -> Result<Provider, ProviderError> {
    let config = ProviderConfig::Script(ScriptProviderConfig {
        path: "examples/demo.script".into(),
    });
    Provider::new("demo", &config, project.path())
}

#[tokio::test]
async fn a_script_plays_its_turns_in_conversation_order() {
    let project = TempProject::new();
    project.write(
        "examples/demo.script",
        concat!(
            "# a demo session\n",
            "{\"text\": \"I will write the file.\", \"tool_calls\": [{\"id\": \"w1\", \"name\": \"write_file\", \"arguments\": {\"path\": \"hello.txt\", \"content\": \"hello\\n\"}}]}\n",
            "{\"text\": \"Done.\", \"usage\": {\"input_tokens\": 20, \"output_tokens\": 3}}\n",
        ),
    );
    let provider = script_provider(&project).unwrap();
    let mut messages = vec![Message::User {
        text: "write hello.txt".into(),
    }];
    let first = answer(&provider, &plain_request("any", &messages))
        .await
        .unwrap();
    assert_eq!(
        first.calls,
        vec![ToolCall {
            id: "w1".into(),
            name: "write_file".into(),
            arguments: r#"{"content":"hello\n","path":"hello.txt"}"#.into(),
        }]
    );
    assert_eq!(first.stop, StopReason::ToolUse);
    messages.push(Message::Assistant {
        text: first.text,
        calls: first.calls,
    });
    messages.push(Message::ToolResult {
        call_id: "w1".into(),
        name: "write_file".into(),
        content: "created hello.txt".into(),
        is_error: false,
    });
    let second = answer(&provider, &plain_request("any", &messages))
        .await
        .unwrap();
    assert_eq!(second.text, "Done.");
    assert_eq!(second.stop, StopReason::EndTurn);
    messages.push(Message::Assistant {
        text: second.text,
        calls: vec![],
    });
    let err = provider
        .start(&plain_request("any", &messages))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ProviderError::ScriptExhausted {
                turns: 2,
                asked: 3,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_missing_or_broken_script_is_reported_before_the_session_starts() {
    let project = TempProject::new();
    let missing = script_provider(&project).unwrap_err();
    assert!(
        missing.to_string().starts_with(&format!(
            "cannot read the script {}",
            project.join("examples/demo.script").display()
        )),
        "{missing}"
    );
    project.write(
        "examples/demo.script",
        "{\"text\": \"ok\"}\n{\"text\": 5}\n",
    );
    let broken = script_provider(&project).unwrap_err();
    assert!(
        broken
            .to_string()
            .contains("examples/demo.script:2: not a script turn: invalid type: integer `5`"),
        "{broken}"
    );
}
