//! Secrets in real `chock run` sessions (docs/secrets.md): a secret from
//! each source (the person's environment, a file only they can read, a
//! command's output) bound into one run_command's environment, foreground
//! and background, the command echoing it and the model, the log and every
//! other file of the state directory seeing `[secret NAME]` only; a use a
//! person refuses through `chock approve` refusing the call; and each bad
//! input refusing the call with its reason rather than running it without.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use chock_testkit::{FakeModel, TempProject, Turn, Wire};
use serde_json::{Value, json};

use super::chock;
use super::kit::{
    all_of, answer_pending, assert_done, assert_success, call_turn, failed, finish, log_values,
    of_call, only_log, result_of, workspace_file, write_config,
};

const ENV_VALUE: &str = "env-value-5521";
const FILE_VALUE: &str = "file-value-8812";
const CMD_VALUE: &str = "cmd-value-7731";

/// A chock.zon with `secrets` (the inside of `.secrets = .{ ... }`) and
/// `rules`.
fn zon(secrets: &str, rules: &[(&str, &str)]) -> String {
    let rules: String = rules
        .iter()
        .map(|(a, d)| format!("        .{{ .action = \"{a}\", .decision = .{d} }},\n"))
        .collect();
    let secrets = if secrets.is_empty() {
        String::new()
    } else {
        format!("    .secrets = .{{\n{secrets}    }},\n")
    };
    format!(".{{\n{secrets}    .policy = .{{ .rules = .{{\n{rules}    }} }},\n}}\n")
}

/// Adds `secrets` (the inside of `.secrets = .{ ... }`) to the operator's
/// config.zon in `state`: a file or command source is the person's own
/// word, never a project's.
fn operator_secrets(state: &Path, secrets: &str) {
    let path = state.join("config/chock/config.zon");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replacen(
        ".{",
        &format!(".{{\n    .secrets = .{{\n{secrets}    }},"),
        1,
    );
    std::fs::write(&path, text).unwrap();
}

fn project(zon: &str) -> TempProject {
    let project = TempProject::git();
    project.write_chock_zon(zon);
    project.commit_all("secrets");
    project
}

/// A file holding `value` with `mode`.
fn secret_file(dir: &Path, name: &str, value: &str, mode: u32) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("{value}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path.display().to_string()
}

fn model(state: &Path, calls: &[(&str, &str, Value)]) -> FakeModel {
    let mut turns: Vec<chock_testkit::Reply> = calls
        .iter()
        .map(|(id, tool, args)| call_turn(id, tool, args.clone()))
        .collect();
    turns.push(Turn::text("Done.").into());
    let fake = FakeModel::with(turns);
    write_config(state, &fake.config_zon(Wire::OpenAi, "m"));
    fake
}

fn command(argv: &[&str], secrets: &[&str]) -> Value {
    json!({"command": argv, "secrets": secrets})
}

fn output(events: &[Value], call: &str) -> (bool, String) {
    let r = result_of(events, call);
    (
        r["ok"].as_bool().unwrap(),
        r["output"].as_str().unwrap().to_owned(),
    )
}

/// Every file under `dir` whose bytes hold `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file()
                && let Ok(bytes) = std::fs::read(&path)
                && String::from_utf8_lossy(&bytes).contains(needle)
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

#[test]
fn a_secret_from_each_source_reaches_one_command_and_reads_as_its_name_everywhere_else() {
    let state = tempfile::tempdir().unwrap();
    let keys = tempfile::tempdir().unwrap();
    let file = secret_file(keys.path(), "token", FILE_VALUE, 0o600);
    let secrets = "        .FROM_ENV = .{ .from = .{ .env = \"CHOCK_TEST_SECRET_SOURCE\" }, .bind = .{ .env = \"GIVEN_ENV\" } },\n";
    let ours = format!(
        "        .FROM_FILE = .{{ .from = .{{ .file = \"{file}\" }}, .bind = .{{ .env = \"GIVEN_FILE\" }} }},\n\
         .FROM_CMD = .{{ .from = .{{ .command = .{{ \"printf\", \"%s%s\", \"cmd-value-\", \"7731\" }} }}, .bind = .{{ .env = \"GIVEN_CMD\" }} }},\n"
    );
    let project = project(&zon(secrets, &[("secret.use.*", "allow")]));
    let fake = model(
        state.path(),
        &[
            (
                "c1",
                "run_command",
                command(&["sh", "-c", "echo env=$GIVEN_ENV"], &["FROM_ENV"]),
            ),
            (
                "c2",
                "run_command",
                command(&["sh", "-c", "echo file=$GIVEN_FILE"], &["FROM_FILE"]),
            ),
            (
                "c3",
                "run_command",
                command(&["sh", "-c", "echo cmd=$GIVEN_CMD"], &["FROM_CMD"]),
            ),
            (
                "c4",
                "run_command",
                json!({"command": ["sh", "-c", "echo bg=$GIVEN_ENV"], "background": true, "secrets": ["FROM_ENV"]}),
            ),
            ("c5", "job_output", json!({"job": "1", "wait_secs": 10})),
            (
                "c6",
                "run_command",
                command(&["sh", "-c", "echo none=$GIVEN_ENV."], &[]),
            ),
        ],
    );
    operator_secrets(state.path(), &ours);
    let out = chock(state.path())
        .env("CHOCK_TEST_SECRET_SOURCE", ENV_VALUE)
        .arg("run")
        .arg(project.path())
        .arg("use the secrets")
        .output()
        .unwrap();
    assert_success(&out);
    let log = only_log(state.path());
    assert_done(&log);
    let events = log_values(&log);
    let (ok, text) = output(&events, "c1");
    assert!(ok && text.contains("env=[secret FROM_ENV]\n"), "{text}");
    let (ok, text) = output(&events, "c2");
    assert!(ok && text.contains("file=[secret FROM_FILE]\n"), "{text}");
    let (ok, text) = output(&events, "c3");
    assert!(ok && text.contains("cmd=[secret FROM_CMD]\n"), "{text}");
    let (_, text) = output(&events, "c5");
    assert!(
        text.contains("bg=[secret FROM_ENV]"),
        "a background job's output too: {text}"
    );
    let (ok, text) = output(&events, "c6");
    assert!(
        ok && text.contains("none=.\n"),
        "a call that names none is given none: {text}"
    );
    // The log says which secret was given to which call, never the value.
    let given: Vec<&str> = all_of(&events, "notice")
        .iter()
        .filter(|n| n["subject"] == "secret")
        .filter_map(|n| n["text"].as_str())
        .collect();
    assert_eq!(
        given,
        [
            "secret FROM_ENV was given to call c1 as $GIVEN_ENV",
            "secret FROM_FILE was given to call c2 as $GIVEN_FILE",
            "secret FROM_CMD was given to call c3 as $GIVEN_CMD",
            "secret FROM_ENV was given to call c4 as $GIVEN_ENV",
        ]
    );
    let decided: Vec<&str> = all_of(&events, "decision")
        .iter()
        .filter_map(|d| d["action"].as_str())
        .filter(|a| a.starts_with("secret."))
        .collect();
    assert_eq!(
        decided,
        [
            "secret.use.FROM_ENV",
            "secret.use.FROM_FILE",
            "secret.use.FROM_CMD",
            "secret.use.FROM_ENV"
        ]
    );
    // Not the model, not the log, not the decision log, not any file the
    // state directory holds.
    let bodies: String = fake
        .requests()
        .iter()
        .map(|r| r.json().to_string())
        .collect();
    assert!(bodies.contains("[secret FROM_CMD]"));
    for value in [ENV_VALUE, FILE_VALUE, CMD_VALUE] {
        assert!(!bodies.contains(value), "{value} reached the model");
        assert_eq!(
            files_holding(state.path(), value),
            Vec::<String>::new(),
            "{value}"
        );
    }
    // The model was told which secrets exist, by name and variable (the
    // person's config.zon first).
    let instructions = super::skills::first_instructions(&fake);
    assert!(
        instructions.contains(
            "FROM_FILE (as $GIVEN_FILE), FROM_CMD (as $GIVEN_CMD), FROM_ENV (as $GIVEN_ENV)"
        ),
        "{instructions}"
    );
}

#[test]
fn a_use_refused_through_chock_approve_or_granted_by_nobody_refuses_the_call() {
    let state = tempfile::tempdir().unwrap();
    let secrets = "        .ASKED = .{ .from = .{ .env = \"CHOCK_TEST_SECRET_SOURCE\" }, .bind = .{ .env = \"GIVEN\" } },\n\
                   .NOBODY = .{ .from = .{ .env = \"CHOCK_TEST_SECRET_SOURCE\" }, .bind = .{ .env = \"GIVEN\" } },\n";
    let project = project(&zon(secrets, &[("secret.use.ASKED", "ask")]));
    let _fake = model(
        state.path(),
        &[
            (
                "asked",
                "run_command",
                command(&["sh", "-c", "echo $GIVEN > ran-asked"], &["ASKED"]),
            ),
            (
                "nobody",
                "run_command",
                command(&["sh", "-c", "echo $GIVEN > ran-nobody"], &["NOBODY"]),
            ),
            (
                "unknown",
                "run_command",
                command(&["sh", "-c", "echo > ran-unknown"], &["NO_SUCH"]),
            ),
            (
                "yes",
                "run_command",
                command(&["sh", "-c", "echo given=$GIVEN"], &["ASKED"]),
            ),
        ],
    );
    let child = chock(state.path())
        .env("CHOCK_TEST_SECRET_SOURCE", ENV_VALUE)
        .arg("run")
        .arg(project.path())
        .arg("use them")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (_, out) = answer_pending(state.path(), "secret.use.ASKED", "n\n");
    assert_success(&out);
    // The next use asks again, and a yes gives it to that call.
    let log = only_log(state.path());
    chock_testkit::wait_for(
        std::time::Duration::from_secs(30),
        "the second question",
        || {
            let folded = chock_log::fold_log(&log).ok()?;
            let asked = log_values(&log)
                .iter()
                .filter(|e| e["type"] == "approval.request")
                .count();
            (asked == 2 && !folded.state.pending_approvals.is_empty()).then_some(())
        },
    );
    let (_, out) = answer_pending(state.path(), "secret.use.ASKED", "y\n");
    assert_success(&out);
    finish(child);
    let log = only_log(state.path());
    let events = log_values(&log);
    let (ok, text) = output(&events, "asked");
    assert!(
        !ok && text.contains("it is not run without the secret ASKED"),
        "{text}"
    );
    let (ok, text) = output(&events, "nobody");
    assert!(
        !ok && text.contains(
            "no rule grants secret.use.NOBODY, and a secret nobody granted cannot be asked for"
        ),
        "{text}"
    );
    let (ok, text) = output(&events, "unknown");
    assert!(
        !ok && text.contains("there is no secret named NO_SUCH"),
        "{text}"
    );
    // Only the one a rule makes a question was asked; none of them ran.
    assert_eq!(all_of(&events, "approval.request").len(), 2);
    let (ok, text) = output(&events, "yes");
    assert!(ok && text.contains("given=[secret ASKED]\n"), "{text}");
    for call in ["asked", "nobody", "unknown"] {
        assert!(
            of_call(&events, "tool.call", call).is_none(),
            "{call} was not run"
        );
    }
    for file in ["ran-asked", "ran-nobody", "ran-unknown"] {
        assert_eq!(workspace_file(&log, file), None, "{file}");
    }
    assert!(files_holding(state.path(), ENV_VALUE).is_empty());
}

#[test]
fn a_source_that_cannot_give_a_value_refuses_the_call_with_the_reason() {
    let state = tempfile::tempdir().unwrap();
    let keys = tempfile::tempdir().unwrap();
    let open = secret_file(keys.path(), "open", FILE_VALUE, 0o644);
    let ours = format!(
        "        .OPEN_FILE = .{{ .from = .{{ .file = \"{open}\" }}, .bind = .{{ .env = \"V\" }} }},\n\
         .FAILS = .{{ .from = .{{ .command = .{{ \"sh\", \"-c\", \"echo locked >&2; exit 3\" }} }}, .bind = .{{ .env = \"V\" }} }},\n\
         .SLOW = .{{ .from = .{{ .command = .{{ \"sleep\", \"30\" }} }}, .timeout_secs = 1, .bind = .{{ .env = \"V\" }} }},\n"
    );
    let secrets = "        .EMPTY = .{ .from = .{ .env = \"CHOCK_TEST_EMPTY\" }, .bind = .{ .env = \"V\" } },\n\
         .UNSET = .{ .from = .{ .env = \"CHOCK_TEST_UNSET\" }, .bind = .{ .env = \"V\" } },\n";
    let project = project(&zon(secrets, &[("secret.use.*", "allow")]));
    let names = ["OPEN_FILE", "FAILS", "SLOW", "EMPTY", "UNSET"];
    let calls: Vec<(&str, &str, Value)> = names
        .iter()
        .map(|n| {
            (
                *n,
                "run_command",
                command(&["sh", "-c", &format!("echo $V > ran-{n}")], &[n]),
            )
        })
        .collect();
    let _fake = model(state.path(), &calls);
    operator_secrets(state.path(), &ours);
    let out = chock(state.path())
        .env("CHOCK_TEST_EMPTY", "")
        .env_remove("CHOCK_TEST_UNSET")
        .arg("run")
        .arg(project.path())
        .arg("use them")
        .output()
        .unwrap();
    assert_success(&out);
    let log = only_log(state.path());
    let events = log_values(&log);
    for (name, says) in [
        (
            "OPEN_FILE",
            format!(
                "{open} can be read or written by others (mode 644), so it is not used: run `chmod 600 {open}`"
            ),
        ),
        (
            "FAILS",
            "the command `sh -c echo locked >&2; exit 3` failed (exit status: 3): locked"
                .to_owned(),
        ),
        (
            "SLOW",
            "the command `sleep 30` did not finish within 1 s and was killed".to_owned(),
        ),
        (
            "EMPTY",
            "its value from the environment variable CHOCK_TEST_EMPTY is empty".to_owned(),
        ),
        (
            "UNSET",
            "the environment variable CHOCK_TEST_UNSET is not set".to_owned(),
        ),
    ] {
        let (ok, text) = output(&events, name);
        assert!(!ok, "{name}: {text}");
        assert!(
            text.starts_with(&format!("the secret {name} could not be read: ")),
            "{name}: {text}"
        );
        assert!(text.contains(&says), "{name}: {text}");
        assert!(
            text.ends_with("the call was not run without it"),
            "{name}: {text}"
        );
        assert_eq!(
            workspace_file(&log, &format!("ran-{name}")),
            None,
            "{name} ran"
        );
    }
    assert!(files_holding(state.path(), FILE_VALUE).is_empty());
}

#[test]
fn a_secret_name_with_a_dot_is_a_problem_and_no_session_starts_under_it() {
    let state = tempfile::tempdir().unwrap();
    let text = ".{\n    .secrets = .{\n        .@\"GH.TOKEN\" = .{ .from = .{ .env = \"X\" }, .bind = .{ .env = \"Y\" } },\n    },\n}\n";
    let project = project(text);
    let out = chock(state.path())
        .current_dir(project.path())
        .args(["policy", "check", "chock.zon"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.starts_with(
            "chock.zon:3:9: the secret name `GH.TOKEN` may hold only letters, digits and '_'"
        ),
        "{stdout}"
    );
    let _fake = model(state.path(), &[]);
    let out = chock(state.path())
        .arg("run")
        .arg(project.path())
        .arg("hi")
        .output()
        .unwrap();
    let stderr = failed(&out);
    assert!(
        stderr.contains("3:9: the secret name `GH.TOKEN`"),
        "{stderr}"
    );
}

#[test]
fn a_secret_bound_to_an_unnamed_mcp_server_or_a_plugin_refuses_the_session_at_its_start() {
    for (bind, says) in [
        (
            ".mcp = \"github\"",
            "is bound to the MCP server github, which neither chock.zon nor config.zon names",
        ),
        (
            ".plugin = \"hello\"",
            "is bound to the plugin hello, and a plugin has no environment to be given it in",
        ),
    ] {
        let state = tempfile::tempdir().unwrap();
        let secrets = format!(
            "        .GH = .{{ .from = .{{ .env = \"X\" }}, .bind = .{{ .env = \"T\", {bind} }} }},\n"
        );
        let project = project(&zon(&secrets, &[]));
        let fake = model(state.path(), &[]);
        let out = chock(state.path())
            .arg("run")
            .arg(project.path())
            .arg("hi")
            .output()
            .unwrap();
        let stderr = failed(&out);
        assert!(
            stderr.contains(&format!(
                "chock.zon:3:9: the secret GH {says}, so it could not be given as promised"
            )),
            "{stderr}"
        );
        assert!(fake.requests().is_empty(), "nothing reached the model");
    }
}

/// Runs `program args` with `env`, asserting it succeeds.
fn run_with(env: &[(&str, &Path)], program: &str, args: &[&str], stdin: &str) {
    use std::io::Write as _;
    let mut cmd = std::process::Command::new(program);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| {
            panic!("{program} did not start ({err}): .ci/run installs it (apt-get install pass)")
        });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_success(&out);
}

#[test]
fn a_secret_kept_in_pass_reaches_the_command_and_reads_as_its_name() {
    const PASS_VALUE: &str = "pass-value-4471";
    let state = tempfile::tempdir().unwrap();
    let keys = tempfile::tempdir().unwrap();
    let gnupg = keys.path().join("gnupg");
    let store = keys.path().join("store");
    std::fs::create_dir(&gnupg).unwrap();
    std::fs::set_permissions(&gnupg, std::fs::Permissions::from_mode(0o700)).unwrap();
    let env = [
        ("GNUPGHOME", gnupg.as_path()),
        ("PASSWORD_STORE_DIR", store.as_path()),
    ];
    run_with(
        &env,
        "gpg",
        &[
            "--batch",
            "--pinentry-mode",
            "loopback",
            "--passphrase",
            "",
            "--quick-gen-key",
            "chock-test@example.invalid",
            "future-default",
            "default",
            "never",
        ],
        "",
    );
    run_with(&env, "pass", &["init", "chock-test@example.invalid"], "");
    run_with(
        &env,
        "pass",
        &["insert", "--multiline", "shop/db"],
        &format!("{PASS_VALUE}\n"),
    );
    let secrets = "        .DB = .{ .from = .{ .command = .{ \"pass\", \"show\", \"shop/db\" } }, .bind = .{ .env = \"PGPASSWORD\" } },\n";
    let project = project(&zon("", &[("secret.use.DB", "allow")]));
    let fake = model(
        state.path(),
        &[(
            "c1",
            "run_command",
            command(&["sh", "-c", "echo db=$PGPASSWORD"], &["DB"]),
        )],
    );
    operator_secrets(state.path(), secrets);
    let out = chock(state.path())
        .env("GNUPGHOME", &gnupg)
        .env("PASSWORD_STORE_DIR", &store)
        .arg("run")
        .arg(project.path())
        .arg("use the database")
        .output()
        .unwrap();
    run_with(&env, "gpgconf", &["--kill", "gpg-agent"], "");
    assert_success(&out);
    let events = log_values(&only_log(state.path()));
    let (ok, text) = output(&events, "c1");
    assert!(ok && text.contains("db=[secret DB]\n"), "{text}");
    let bodies: String = fake
        .requests()
        .iter()
        .map(|r| r.json().to_string())
        .collect();
    assert!(!bodies.contains(PASS_VALUE));
    assert!(files_holding(state.path(), PASS_VALUE).is_empty());
}

#[test]
fn a_projects_chock_zon_may_not_take_a_secret_from_a_file_or_a_command() {
    let state = tempfile::tempdir().unwrap();
    let secrets = "        .KEY = .{ .from = .{ .file = \"~/.ssh/id_ed25519\" }, .bind = .{ .env = \"K\" } },\n\
         .RUN = .{ .from = .{ .command = .{ \"sh\", \"-c\", \"touch /tmp/ran\" } }, .bind = .{ .env = \"R\" } },\n";
    let project = project(&zon(secrets, &[("secret.use.*", "allow")]));
    let out = chock(state.path())
        .current_dir(project.path())
        .args(["policy", "check", "chock.zon"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("chock.zon:3:30: a project's chock.zon may not take the secret KEY from a .file: Chock would read a file of yours"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "may not take the secret RUN from a .command: Chock would run a program on your machine"
        ),
        "{stdout}"
    );
    // The same sources in the person's own config.zon are theirs to name.
    let _fake = model(state.path(), &[]);
    operator_secrets(
        state.path(),
        "        .RUN = .{ .from = .{ .command = .{ \"printf\", \"x\" } }, .bind = .{ .env = \"R\" } },\n",
    );
    let config = state.path().join("config/chock/config.zon");
    let out = chock(state.path())
        .args(["policy", "check"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
