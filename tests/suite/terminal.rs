//! The interactive terminal, through a real pseudo-terminal (tmux): a
//! person typing messages, answering in place, pressing Ctrl-C, pasting,
//! resizing and closing the window; and the one-shot run a script sees.
//! The model is the scripted fake; everything else is the real `chock`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chock_log::event::EndReason;
use chock_log::fold::Status;
use chock_log::fold_log;
use chock_testkit::{FakeModel, TempProject, Tmux, Turn, wait_for};
use serde_json::json;

use super::chock_bin;
use super::kit::{
    all_of, approve, ask_write_project, assert_ended, fake_model, finish, first_of, log_values,
    only_log, sessions, start_daemon, start_session,
};

pub(super) const WITHIN: Duration = Duration::from_secs(30);

/// `chock run <project>` with no message in a tmux window of `cols`
/// columns, as a person opens it; `extra` environment besides the state
/// directory and config.
pub(super) fn open(state: &Path, project: &Path, cols: u16, extra: &[(&str, &Path)]) -> Tmux {
    let config = state.join("config");
    let mut env = vec![
        ("CHOCK_STATE_DIR", state),
        ("XDG_CONFIG_HOME", config.as_path()),
    ];
    env.extend_from_slice(extra);
    let project = project.to_string_lossy().into_owned();
    let tmux = Tmux::start(&chock_bin(), &["run", &project], &env, state, cols, 40);
    at_prompt(&tmux, 1);
    tmux
}

/// Waits until the prompt is up for the `n`th time (a person types once
/// they see it; what is typed before is the terminal's, not the prompt's).
pub(super) fn at_prompt(tmux: &Tmux, n: usize) -> String {
    tmux.until(&format!("prompt number {n}"), || {
        let screen = tmux.screen();
        let prompts = screen.lines().filter(|l| l.starts_with("── ")).count();
        let last = screen.lines().rev().find(|l| !l.trim().is_empty())?;
        (prompts >= n && last.trim_end() == "›").then_some(screen)
    })
}

/// Types `message` and Enter at the prompt.
pub(super) fn say(tmux: &Tmux, message: &str) {
    tmux.type_text(message);
    tmux.keys(&["Enter"]);
}

/// The last user message the model was sent in request `n`.
fn last_user_text(fake: &FakeModel, n: usize) -> String {
    let requests = fake.wait_for_requests(n + 1, WITHIN);
    let messages = requests[n].json()["messages"].as_array().unwrap().clone();
    messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// The session's log, once the session has made it.
fn the_log(state: &Path) -> PathBuf {
    wait_for(WITHIN, "the session's log", || {
        (sessions(state).len() == 1).then(|| only_log(state))
    })
}

/// The screen with what changes from run to run put as words (the
/// session's id, the state directory) or left out (the notices, which name
/// the machine's sandbox layers and a commit; tmux's own last line), for
/// the capture kept in docs/.
fn steady(screen: &str, state: &Path, id: &str) -> String {
    let text = screen
        .replace(id, "<session id>")
        .replace(&state.display().to_string(), "<state>");
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| {
            !l.starts_with("  ! ") && !l.starts_with("Pane is dead") && !l.starts_with("[exited ")
        })
        .collect();
    let mut text = lines.join("\n");
    text.truncate(text.trim_end().len());
    text.push('\n');
    text
}

#[test]
fn an_interactive_session_takes_two_messages_and_shows_each_step() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = fake_model(
        state.path(),
        [
            Turn::text("Writing the greeting.")
                .call("w1", "write_file", &json!({"path": "hello.txt", "content": "hello, world\n"}))
                .into(),
            Turn::text("## Done\n\n- wrote `hello.txt`\n- nothing else\n").into(),
            Turn::text("Checking it.")
                .call(
                    "c1",
                    "run_command",
                    &json!({"command": ["sh", "-c", "for n in 1 2 3 4 5 6 7; do echo line $n; done"]}),
                )
                .into(),
            Turn::text("It says **hello**, as it should.").into(),
        ],
    );
    let tmux = open(state.path(), project.path(), 100, &[]);
    say(&tmux, "write a greeting");
    let screen = at_prompt(&tmux, 2);
    assert!(screen.contains("● write_file hello.txt"), "{screen}");
    assert!(screen.contains("    + hello, world"), "the diff: {screen}");
    assert!(screen.contains("  ✓ created hello.txt"), "{screen}");
    assert!(
        screen.contains("• wrote hello.txt"),
        "markdown rendered: {screen}"
    );
    assert!(!screen.contains("## Done"), "{screen}");

    say(&tmux, "now check it");
    let screen = at_prompt(&tmux, 3);
    assert!(screen.contains("● run_command sh -c 'for n in"), "{screen}");
    assert!(screen.contains("  ✓ exit status 0"), "{screen}");
    assert!(
        screen.contains("line 1\n") && screen.contains("line 7\n"),
        "{screen}"
    );
    assert!(screen.contains("… 3 more lines …"), "{screen}");
    assert!(!screen.contains("line 4"), "the middle is folded: {screen}");

    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_for_exit(), 0);
    let log = only_log(state.path());
    let events = log_values(&log);
    assert_eq!(all_of(&events, "user.message").len(), 2);
    assert_eq!(all_of(&events, "turn.end").len(), 2, "one turn.end a turn");
    assert_eq!(all_of(&events, "session.open").len(), 1, "one session");
    assert_ended(&log, EndReason::Done);
    assert_eq!(fake.requests().len(), 4);
    assert_eq!(last_user_text(&fake, 2), "now check it");

    // The capture in docs/ is this screen; CHOCK_UPDATE_CAPTURE=1 rewrites it.
    let id = log
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let shown = steady(&tmux.screen(), state.path(), &id);
    let kept = super::here().join("../docs/terminal-session.txt");
    if std::env::var_os("CHOCK_UPDATE_CAPTURE").is_some() {
        std::fs::write(&kept, &shown).unwrap();
    }
    let kept = std::fs::read_to_string(&kept).unwrap_or_default();
    pretty_assertions::assert_eq!(
        kept,
        shown,
        "docs/terminal-session.txt is out of date: run this test with CHOCK_UPDATE_CAPTURE=1"
    );
}

#[test]
fn an_approval_is_answered_in_place_with_the_diff_above_it() {
    let state = tempfile::tempdir().unwrap();
    let project = ask_write_project();
    let _fake = fake_model(
        state.path(),
        [
            super::kit::write_x("w1").into(),
            Turn::text("Wrote x.").into(),
        ],
    );
    let tmux = open(state.path(), project.path(), 120, &[]);
    say(&tmux, "write x");
    let screen = tmux.wait_for("allow it? [y/n]");
    let diff = screen.find("    + x").expect("the diff is shown");
    let question = screen.find("chock asks: allow call.write_file?").unwrap();
    assert!(diff < question, "the diff is above the question: {screen}");
    assert!(
        screen.contains("● write_file x.txt · call.write_file ask (project rule"),
        "{screen}"
    );
    tmux.type_text("y");
    tmux.keys(&["Enter"]);
    let screen = at_prompt(&tmux, 2);
    assert!(screen.contains("Wrote x."), "{screen}");
    assert!(screen.contains("↳ allowed (by terminal)"), "{screen}");
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_for_exit(), 0);
    let events = log_values(&only_log(state.path()));
    assert_eq!(first_of(&events, "approval.answer")["by"], "terminal");
    assert!(events.iter().any(|e| e["type"] == "tool.call"));
}

#[test]
fn ctrl_c_cuts_a_slow_command_short_and_the_session_goes_on() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let marker = format!("sleep 600 # {}", state.path().display());
    let fake = fake_model(
        state.path(),
        [
            Turn::text("Waiting a while.")
                .call(
                    "s1",
                    "run_command",
                    &json!({"command": ["sh", "-c", marker]}),
                )
                .into(),
            Turn::text("Carrying on after the interruption.").into(),
        ],
    );
    let tmux = open(state.path(), project.path(), 100, &[]);
    say(&tmux, "wait");
    let log = the_log(state.path());
    // Ctrl-C is SIGINT to the terminal's foreground group: pressed while
    // the sandbox is being built, it stops the helpers building it too.
    wait_for(WITHIN, "the command to run", || {
        running_with(&marker).then_some(())
    });
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("the turn was abandoned and the session goes on");
    assert!(screen.contains("✗ this call was cut short"), "{screen}");
    wait_for(WITHIN, "the command to be killed", || {
        (!running_with(&marker)).then_some(())
    });

    at_prompt(&tmux, 2);
    say(&tmux, "go on");
    let screen = at_prompt(&tmux, 3);
    assert!(
        screen.contains("Carrying on after the interruption."),
        "{screen}"
    );
    // The request after the cut carries the call's result, so the model's
    // conversation is whole.
    let sent = fake.wait_for_requests(2, WITHIN)[1].json();
    let messages = sent["messages"].as_array().unwrap();
    assert!(
        messages.iter().any(|m| m["role"] == "tool"
            && m["content"]
                .as_str()
                .is_some_and(|c| c.contains("cut short"))),
        "{messages:?}"
    );
    // A second Ctrl-C in a row at the prompt leaves.
    tmux.keys(&["C-c"]);
    tmux.wait_for("Ctrl-C again");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_for_exit(), 0);
    let events = log_values(&log);
    let notice = all_of(&events, "notice")
        .into_iter()
        .find(|n| n["subject"] == "turn")
        .expect("the cut is said in the log");
    assert!(
        notice["text"]
            .as_str()
            .unwrap()
            .contains("interrupted by the person")
    );
    assert_eq!(all_of(&events, "turn.end").len(), 2);
    assert_ended(&log, EndReason::Done);
}

/// Whether a process whose command line holds `marker` is running.
fn running_with(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline")).is_ok_and(|cmd| {
            String::from_utf8_lossy(&cmd)
                .replace('\0', " ")
                .contains(marker)
        })
    })
}

#[test]
fn slash_detach_hands_the_session_to_the_daemon() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(state.path(), [Turn::text("Looked around.").into()]);
    let (_daemon, _address) = start_daemon(state.path());
    let tmux = open(state.path(), project.path(), 120, &[]);
    say(&tmux, "look around");
    at_prompt(&tmux, 2);
    say(&tmux, "/detach");
    assert_eq!(tmux.wait_for_exit(), 8, "{}", tmux.screen());
    let screen = tmux.wait_for("handed over");
    assert!(
        screen.contains("handing the session to the daemon"),
        "{screen}"
    );
    let log = only_log(state.path());
    let carried_on = || {
        let events = log_values(&log);
        all_of(&events, "session.open").len() == 2
            && matches!(fold_log(&log).unwrap().state.status, Status::Ended { .. })
    };
    let deadline = std::time::Instant::now() + WITHIN;
    while !carried_on() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let events = log_values(&log);
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert!(
        carried_on(),
        "the daemon carries the session on and ends it: {kinds:?}\n{}",
        tmux.screen()
    );
    assert_eq!(all_of(&events, "handover").len(), 1, "{kinds:?}");
}

#[test]
fn help_plan_usage_and_show_answer_at_the_prompt() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(
        state.path(),
        [
            Turn::text("")
                .call(
                    "p1",
                    "update_plan",
                    &json!({"items": [{"step": "read", "status": "done"}, {"step": "write", "status": "in_progress"}]}),
                )
                .into(),
            Turn::text("")
                .call("c1", "run_command", &json!({"command": ["sh", "-c", "seq 1 20"]}))
                .into(),
            Turn::text("Planned.").into(),
        ],
    );
    let tmux = open(state.path(), project.path(), 120, &[]);
    say(&tmux, "plan it");
    let screen = at_prompt(&tmux, 2);
    assert!(
        screen.contains("[x] read") && screen.contains("[>] write"),
        "{screen}"
    );
    for (n, command) in ["/help", "/plan", "/usage", "/show 2", "/nope"]
        .iter()
        .enumerate()
    {
        say(&tmux, command);
        at_prompt(&tmux, n + 3);
    }
    let screen = at_prompt(&tmux, 7);
    assert!(screen.contains("/nope is not a command here"), "{screen}");
    assert!(
        screen.contains("/detach      hand the session to the daemon"),
        "{screen}"
    );
    assert_eq!(screen.matches("[>] write").count(), 2, "{screen}");
    assert!(screen.contains("3 model calls"), "{screen}");
    assert!(
        screen.contains("    11\n"),
        "/show prints the whole output: {screen}"
    );
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_for_exit(), 0);
}

#[test]
fn a_one_shot_run_prints_each_step_as_a_line_with_no_escape_codes() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(
        state.path(),
        [
            Turn::text("Writing.")
                .call(
                    "w1",
                    "write_file",
                    &json!({"path": "a.txt", "content": "a\n"}),
                )
                .into(),
            Turn::text("Done.").into(),
        ],
    );
    let out = super::kit::run_ok(state.path(), project.path(), "write a");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stdout, "Writing.\nDone.\n",
        "the model's text alone, a line apart"
    );
    assert!(
        stderr.starts_with("chock: session "),
        "the id first: {stderr}"
    );
    assert!(stderr.contains("● write_file a.txt\n"), "{stderr}");
    assert!(stderr.contains("    + a\n"), "{stderr}");
    assert!(stderr.contains("  ✓ created a.txt"), "{stderr}");
    for text in [&stdout, &stderr] {
        assert!(!text.contains('\x1b'), "no escape codes: {text:?}");
    }
}

#[test]
fn no_color_keeps_the_terminal_free_of_colour() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(
        state.path(),
        [Turn::text("# Title\n\n**bold** `code`\n").into()],
    );
    let tmux = open(
        state.path(),
        project.path(),
        100,
        &[("NO_COLOR", Path::new("1"))],
    );
    say(&tmux, "hi");
    tmux.wait_for("bold");
    let screen = tmux.screen_with_escapes();
    assert!(
        !screen.contains("\x1b[3") && !screen.contains("\x1b[1m"),
        "{screen:?}"
    );
    assert!(
        screen.contains("**bold** `code`"),
        "written as it came: {screen}"
    );
}

#[test]
fn with_stdin_not_a_terminal_an_approval_says_how_to_answer_it_once() {
    let state = tempfile::tempdir().unwrap();
    let project = ask_write_project();
    let _fake = fake_model(
        state.path(),
        [super::kit::write_x("w1").into(), Turn::text("Done.").into()],
    );
    let child = start_session(state.path(), project.path(), "write x");
    let (id, _, _) = super::kit::wait_for_pending(state.path());
    let answered = approve(state.path(), id.as_str(), "y\n");
    assert!(answered.status.success());
    let out = finish(child);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = format!(
        "answer from another terminal with `chock approve {}`",
        id.as_str()
    );
    assert_eq!(stderr.matches(&line).count(), 1, "said once: {stderr}");
    assert!(
        stderr.contains(&format!(
            "session {} is waiting for an answer: allow call.write_file?",
            id.as_str()
        )),
        "{stderr}"
    );
}

#[test]
fn a_command_cannot_move_the_cursor_or_retitle_the_window() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(
        state.path(),
        [
            Turn::text("")
                .call(
                    "e1",
                    "run_command",
                    &json!({"command": ["printf", "\\033]0;pwned\\007\\033[2J\\033[Hclean\\n"]}),
                )
                .into(),
            Turn::text("Printed.").into(),
        ],
    );
    let tmux = open(state.path(), project.path(), 100, &[]);
    say(&tmux, "print");
    let screen = tmux.wait_for("Printed.");
    assert!(
        screen.contains("^[]0;pwned^G^[[2J^[[Hclean"),
        "shown: {screen}"
    );
    assert!(
        screen.contains("› print"),
        "the screen was not cleared: {screen}"
    );
    let title = tmux.run(&["display-message", "-p", "-t", "0", "#{pane_title}"]);
    assert!(!title.contains("pwned"), "the window was retitled: {title}");
}

#[test]
fn a_narrow_and_resized_terminal_keeps_working() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(
        state.path(),
        [Turn::text("")
            .call("c1", "run_command", &json!({"command": ["sh", "-c", "echo a long line of output that is wider than the window"]}))
            .into(), Turn::text("Answered in a narrow window.").into()],
    );
    let tmux = open(state.path(), project.path(), 100, &[]);
    tmux.resize(16, 20);
    say(&tmux, "a message longer than the window is wide");
    tmux.wait_for("window.");
    tmux.resize(100, 40);
    at_prompt(&tmux, 2);
    say(&tmux, "/usage");
    tmux.wait_for("2 model calls");
    at_prompt(&tmux, 3);
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_for_exit(), 0);
}

#[test]
fn a_closed_terminal_ends_the_session_interrupted_and_keeps_its_log_and_workspace() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(state.path(), [Turn::text("First answer.").into()]);
    let tmux = open(state.path(), project.path(), 100, &[]);
    say(&tmux, "hello");
    at_prompt(&tmux, 2);
    let log = only_log(state.path());
    tmux.close();
    wait_for(WITHIN, "the session to end", || {
        matches!(fold_log(&log).ok()?.state.status, Status::Ended { .. }).then_some(())
    });
    assert_ended(&log, EndReason::Interrupted);
    let folded = fold_log(&log).unwrap();
    assert_eq!(
        folded.problems.len(),
        0,
        "the log is whole: {:?}",
        folded.problems
    );
    let workspace = folded.state.workspace.expect("a workspace").dir;
    assert!(workspace.is_dir(), "the workspace is kept");
}

#[test]
fn a_paste_of_a_megabyte_is_refused_and_the_line_kept() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = fake_model(state.path(), [Turn::text("Got it.").into()]);
    let tmux = open(state.path(), project.path(), 100, &[]);
    tmux.type_text("keep ");
    tmux.paste(&"x".repeat(1 << 20));
    tmux.wait_for("the paste of 1048576 bytes was not added");
    say(&tmux, "this");
    tmux.wait_for("Got it.");
    assert_eq!(last_user_text(&fake, 0), "keep this");
}

#[test]
fn slash_diff_and_apply_run_the_workspace_commands_on_the_terminal() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(
        state.path(),
        [
            Turn::text("")
                .call(
                    "w1",
                    "write_file",
                    &json!({"path": "README.md", "content": "hello from the session\n"}),
                )
                .into(),
            Turn::text("Wrote it.").into(),
        ],
    );
    let tmux = open(state.path(), project.path(), 120, &[]);
    say(&tmux, "write hello");
    at_prompt(&tmux, 2);
    say(&tmux, "/diff");
    let screen = at_prompt(&tmux, 3);
    assert!(
        screen.contains("+hello from the session") && screen.contains("-# test project"),
        "chock workspace diff ran here: {screen}"
    );
    say(&tmux, "/apply");
    let screen = at_prompt(&tmux, 4);
    let said = &screen[screen.rfind("› /apply").unwrap()..];
    assert!(
        said.contains("chock"),
        "chock workspace apply ran here: {said}"
    );
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_for_exit(), 0, "{screen}");
}

#[test]
fn two_ctrl_c_in_a_row_during_a_turn_cut_it_and_leave() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let marker = format!("sleep 600 # {}", state.path().display());
    let _fake = fake_model(
        state.path(),
        [Turn::text("")
            .call(
                "s1",
                "run_command",
                &json!({"command": ["sh", "-c", marker]}),
            )
            .into()],
    );
    let tmux = open(state.path(), project.path(), 100, &[]);
    say(&tmux, "wait");
    let log = the_log(state.path());
    wait_for(WITHIN, "the command to run", || {
        running_with(&marker).then_some(())
    });
    tmux.keys(&["C-c"]);
    // The second, as soon as the cut is in the log: whether or not the
    // prompt is up yet, it is not lost. (Two SIGINTs closer together than
    // the session takes to see the first are one signal to the kernel.)
    wait_for(WITHIN, "the cut in the log", || {
        log_values(&log)
            .iter()
            .any(|e| e["type"] == "notice" && e["subject"] == "turn")
            .then_some(())
    });
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_for_exit(), 0);
    let events = log_values(&log);
    assert!(
        all_of(&events, "tool.result")
            .iter()
            .any(|r| r["output"].as_str().unwrap().contains("cut short")),
        "{events:?}"
    );
    assert_ended(&log, EndReason::Done);
}

#[test]
fn ask_user_is_answered_by_typing_in_place() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = fake_model(
        state.path(),
        [
            Turn::text("")
                .call(
                    "q1",
                    "ask_user",
                    &json!({"question": "Which name should the greeting use?"}),
                )
                .into(),
            Turn::text("Greeting Ada.").into(),
        ],
    );
    let tmux = open(state.path(), project.path(), 120, &[]);
    say(&tmux, "greet someone");
    let screen = tmux.wait_for("your answer: ");
    assert!(
        screen.contains("Which name should the greeting use?"),
        "{screen}"
    );
    say(&tmux, "Ada");
    let screen = at_prompt(&tmux, 2);
    assert!(screen.contains("↳ answered: Ada (by terminal)"), "{screen}");
    let sent = fake.wait_for_requests(2, WITHIN)[1].json();
    assert!(
        sent.to_string().contains("Ada"),
        "the model reads the answer: {sent}"
    );
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_for_exit(), 0);
}

#[test]
fn chock_approve_from_another_terminal_wins_and_this_one_is_told() {
    let state = tempfile::tempdir().unwrap();
    let project = ask_write_project();
    let _fake = fake_model(
        state.path(),
        [
            super::kit::write_x("w1").into(),
            Turn::text("Wrote x.").into(),
        ],
    );
    let tmux = open(state.path(), project.path(), 120, &[]);
    say(&tmux, "write x");
    tmux.wait_for("allow it? [y/n]");
    let (id, _, _) = super::kit::wait_for_pending(state.path());
    let answered = approve(state.path(), id.as_str(), "y\n");
    assert!(
        answered.status.success(),
        "{}",
        String::from_utf8_lossy(&answered.stderr)
    );
    let screen = at_prompt(&tmux, 2);
    assert!(
        screen.contains("(answered through approve.sock)"),
        "{screen}"
    );
    assert!(screen.contains("↳ allowed (by approve.sock)"), "{screen}");
    assert!(screen.contains("Wrote x."), "{screen}");
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_for_exit(), 0);
    let events = log_values(&only_log(state.path()));
    assert_eq!(first_of(&events, "approval.answer")["by"], "approve.sock");
}
