//! What a new user trips on: exit codes that say what happened, output into
//! a pipe whose reader has gone, and the signals a terminal or a service
//! manager sends.

use std::process::{Output, Stdio};

use super::Machine;

/// `command` run with its stdout a pipe whose reading end is already
/// closed: every write to it fails with EPIPE.
fn into_a_closed_pipe(mut command: std::process::Command) -> Output {
    let (read, write) = rustix::pipe::pipe().unwrap();
    drop(read);
    command
        .stdout(Stdio::from(write))
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn assert_no_panic(out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn output_into_a_closed_pipe_ends_nothing_and_keeps_the_exit_code() {
    let (m, repo) = Machine::with_shop();
    let mut stop = m.chock(&repo);
    stop.args(["stop", "--reason", "piped"]);
    let out = into_a_closed_pipe(stop);
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "the stop was written");
    assert!(repo.join(".chock/stop.json").is_file());

    // Nothing is wired: --check says so with 3, whoever reads its output.
    let mut check = m.chock(&repo);
    check.args(["sync", "--check"]);
    let out = into_a_closed_pipe(check);
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(3));

    let mut decisions = m.chock(&repo);
    decisions.arg("decisions");
    let out = into_a_closed_pipe(decisions);
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_command_line_that_does_not_say_what_to_do_exits_2() {
    let (m, repo) = Machine::with_shop();
    for (args, says) in [
        (
            &["run", "."][..],
            "give the message, or run `chock run <project dir>` on a terminal",
        ),
        (&["serve", "--daemon", "bogus::"], "is not a daemon address"),
        (
            &["detach", "--daemon", "bogus::"],
            "is not a daemon address",
        ),
    ] {
        let out = m.run(&repo, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[test]
fn sigterm_and_sighup_end_a_session_interrupted_with_the_signal_named_and_its_sockets_gone() {
    use chock_log::StateDir;
    use chock_log::event::EndReason;

    use super::kit::{assert_ended, log_values};
    use super::stop_session::{held_then_echo, start, wait_held};

    for (signal, name) in [
        (rustix::process::Signal::TERM, "SIGTERM"),
        (rustix::process::Signal::HUP, "SIGHUP"),
    ] {
        let (m, repo) = Machine::with_shop();
        let _fake = held_then_echo(&m);
        let session = start(&m, &repo);
        let (id, log, workspace) = wait_held(&m);
        let pid = rustix::process::Pid::from_raw(i32::try_from(session.id()).unwrap()).unwrap();
        rustix::process::kill_process(pid, signal).unwrap();
        let out = session.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("interrupted by {name}; the turn was abandoned")),
            "{name}: {stderr}"
        );
        assert_ended(&log, EndReason::Interrupted);
        let end = log_values(&log).pop().unwrap();
        assert!(end["detail"].as_str().unwrap().contains(name), "{end}");
        let state = StateDir::at(m.state());
        assert!(
            !state.approve_socket(&id).exists(),
            "{name}: approve.sock left"
        );
        assert!(
            !state.handover_socket(&id).exists(),
            "{name}: handover.sock left"
        );
        assert!(workspace.is_dir(), "{name}: the workspace is kept");
    }
}

#[test]
fn a_daemon_that_fails_after_binding_leaves_no_socket_file() {
    let (m, repo) = Machine::with_shop();
    let socket = m.root.path().join("d.sock");
    let out = m.run(
        &repo,
        &[
            "daemon",
            "--socket",
            socket.to_str().unwrap(),
            "--host",
            "203.0.113.1",
            "--port",
            "7780",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!socket.exists(), "the daemon left {}", socket.display());
}

#[test]
fn sandbox_net_background_publishes_a_port_where_only_net_serve_allows_as_a_session_would() {
    let (m, repo) = Machine::with_shop();
    let port = super::run_network::free_port();
    std::fs::write(
        repo.join("chock.zon"),
        super::kit::rules_zon(&[(&format!("net.serve.{port}"), "allow")]),
    )
    .unwrap();
    let out = m.run(&repo, &["sandbox", "--net", "--background", "--", "true"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("no router"), "{stderr}");
    assert!(
        stderr.contains(&format!("published 127.0.0.1:{port}")),
        "{stderr}"
    );
    // In the foreground the same policy gives no router, and says where a
    // port is published instead.
    let out = m.run(&repo, &["sandbox", "--net", "--", "true"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no router"), "{stderr}");
    assert!(stderr.contains("only for a background command"), "{stderr}");
}
