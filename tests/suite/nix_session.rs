//! Nix in real `chock run` sessions, with this machine's Nix (Debian's
//! nix-bin: a single-user store, no nixpkgs, no network) and derivations of
//! builtins only: a dev shell from a closure file (a program in it runs as
//! exec.devshell, one outside asks as exec.nix.store), closure files that
//! cannot be used, nix_eval's bounds, and provide_tool behind nix.build
//! with its fetches decided at nix.net.
//!
//! Where Nix is missing these fail with the line that installs it: .ci/run
//! installs nix-bin, so a machine without it is a machine set up wrongly.

use std::path::{Path, PathBuf};
use std::process::Command;

use chock_testkit::{TempProject, Turn};
use serde_json::{Value, json};

use super::chock;
use super::kit::{
    all_of, answer_pending, fake_model, log_values, one_call_a_turn, only_log, project_with,
    result_of, run_ok, start_session, write_config,
};

/// The builds these tests make run with Nix's own sandbox off (only
/// /bin/sh exists inside it here) and no binary cache (no network).
const NIX_CONFIG: &str = "sandbox = false\nsubstituters =\n";

fn nix_present() {
    let found = Command::new("nix-build").arg("--version").output();
    assert!(
        found.is_ok_and(|out| out.status.success()),
        "Nix is not installed: apt-get install nix-bin (.ci/run does this)"
    );
}

/// A derivation of builtins whose `bin/<name>` prints `says`; its store
/// path.
fn tool(name: &str, says: &str) -> PathBuf {
    nix_present();
    let expr = format!(
        r#"derivation {{
            name = "{name}"; system = "x86_64-linux"; builder = "/bin/sh";
            args = [ "-c" "/bin/mkdir -p $out/bin; printf '#!/bin/sh\necho {says}\n' > $out/bin/{name}; /bin/chmod +x $out/bin/{name}" ];
        }}"#
    );
    let out = Command::new("nix-build")
        .args(["--no-out-link", "-E", &expr])
        .env("NIX_CONFIG", NIX_CONFIG)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn closure_file(dir: &Path, root: &Path) -> PathBuf {
    let out = Command::new("nix-store")
        .args(["--query", "--requisites"])
        .arg(root)
        .output()
        .unwrap();
    assert!(out.status.success());
    let file = dir.join("store-paths");
    std::fs::write(&file, out.stdout).unwrap();
    file
}

/// The operator's config: the fake model, and `extra` fields.
fn config_with(state: &Path, fake: &chock_testkit::FakeModel, extra: &str) {
    let base = fake.config_zon(chock_testkit::Wire::OpenAi, "m");
    let base = base.trim_end().strip_suffix('}').unwrap();
    write_config(state, &format!("{base}    {extra}\n}}\n"));
}

fn text_of(result: &Value) -> &str {
    result["output"].as_str().unwrap_or_default()
}

fn chock_nix(state: &Path) -> Command {
    let mut cmd = chock(state);
    cmd.env("NIX_CONFIG", NIX_CONFIG);
    cmd
}

fn run_nix(state: &Path, project: &Path) -> std::process::Output {
    chock_nix(state)
        .arg("run")
        .arg(project)
        .arg("go")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The decision events' actions and decisions, in order.
fn decisions(events: &[Value]) -> Vec<(String, String)> {
    all_of(events, "decision")
        .iter()
        .map(|d| {
            (
                d["action"].as_str().unwrap_or_default().to_owned(),
                d["decision"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_dev_shell_program_runs_as_exec_devshell_and_another_store_path_asks() {
    let inside = tool("shell-tool", "shell-tool-ok");
    let outside = tool("stray-tool", "stray-tool-ok");
    let outside_hash = &outside.file_name().unwrap().to_str().unwrap()[..32];
    let state = tempfile::tempdir().unwrap();
    let closure = closure_file(state.path(), &inside);
    let env = state.path().join("env.json");
    std::fs::write(
        &env,
        json!({"variables": {
            "PATH": {"type": "exported", "value": format!("{}/bin", inside.display())},
            "SHELL_GREETING": {"type": "exported", "value": "hello from the shell"},
            "HOME": {"type": "exported", "value": "/homeless-shelter"},
        }})
        .to_string(),
    )
    .unwrap();
    let fake = chock_testkit::FakeModel::with(one_call_a_turn(&[
        ("bare", "run_command", json!({"command": ["shell-tool"]})),
        (
            "env",
            "run_command",
            json!({"command": ["sh", "-c", "echo $SHELL_GREETING; echo $HOME"]}),
        ),
        (
            "stray",
            "run_command",
            json!({"command": [format!("{}/bin/stray-tool", outside.display())]}),
        ),
    ]));
    config_with(
        state.path(),
        &fake,
        &format!(
            ".devshell = .{{ .closure = \"{}\", .env = \"{}\" }},",
            closure.display(),
            env.display()
        ),
    );
    let project = TempProject::git();
    let child = start_session(state.path(), project.path(), "go");
    let stray = format!("exec.nix.store.{outside_hash}");
    let (_, approved) = answer_pending(state.path(), &stray, "n\n");
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let events = log_values(&only_log(state.path()));
    let first_notice = all_of(&events, "notice")[0];
    assert_eq!(first_notice["subject"], "devshell", "{first_notice}");
    let said = first_notice["text"].as_str().unwrap();
    assert!(said.contains(&closure.display().to_string()), "{said}");
    assert!(said.contains("1 store path mounted read-only"), "{said}");

    assert!(text_of(result_of(&events, "bare")).contains("shell-tool-ok"));
    let env_out = text_of(result_of(&events, "env"));
    assert!(env_out.contains("hello from the shell"), "{env_out}");
    assert!(
        !env_out.contains("homeless-shelter"),
        "the sandbox keeps its HOME: {env_out}"
    );
    let stray_result = result_of(&events, "stray");
    assert!(
        !text_of(stray_result).contains("stray-tool-ok"),
        "{stray_result}"
    );

    let decided = decisions(&events);
    assert!(
        decided.contains(&("exec.devshell.shell-tool".to_owned(), "allow".to_owned())),
        "{decided:?}"
    );
    assert!(decided.contains(&(stray, "ask".to_owned())), "{decided:?}");
}

#[test]
fn chock_sandbox_runs_a_command_in_a_dev_shell() {
    let inside = tool("shell-tool", "shell-tool-ok");
    let state = tempfile::tempdir().unwrap();
    let closure = closure_file(state.path(), &inside);
    let ws = tempfile::tempdir().unwrap();
    let out = chock(state.path())
        .arg("sandbox")
        .arg("--workspace")
        .arg(ws.path())
        .arg("--dev-shell")
        .arg(&closure)
        .args(["--", "shell-tool"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "shell-tool-ok");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("dev shell from the closure file"),
        "{stderr}"
    );
}

#[test]
fn a_closure_file_that_cannot_be_used_is_said_at_the_start_and_the_session_runs_without_it() {
    nix_present();
    let state = tempfile::tempdir().unwrap();
    let dir = state.path();
    std::fs::write(dir.join("not-store"), "/usr/bin\n").unwrap();
    std::fs::write(
        dir.join("gone"),
        "/nix/store/0123456789abcdfghijklmnpqrsvwxyz-long-gone\n",
    )
    .unwrap();
    std::fs::write(dir.join("empty"), "\n").unwrap();
    let cases: [(PathBuf, &str); 5] = [
        (dir.join("missing"), "cannot be read: No such file"),
        (dir.to_owned(), "cannot be read: it is not a regular file"),
        (
            dir.join("not-store"),
            "line 1 of the dev shell's closure file",
        ),
        (dir.join("gone"), "which is not in this machine's store"),
        (dir.join("empty"), "lists no store path"),
    ];
    for (file, says) in cases {
        let fake = chock_testkit::FakeModel::with([Turn::text("Done.").into()]);
        config_with(
            dir,
            &fake,
            &format!(".devshell = .{{ .closure = \"{}\" }},", file.display()),
        );
        let project = TempProject::git();
        let out = run_nix(dir, project.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(stderr.contains(says), "{says}: {stderr}");
        assert!(
            stderr.contains("this session runs without a dev shell"),
            "{stderr}"
        );
    }
}

#[test]
fn nix_eval_answers_a_value_and_bounds_files_the_network_and_loops() {
    nix_present();
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    project.write("a.nix", "{ x = 41; }\n");
    project.commit_all("a.nix");
    let loop_expr = "builtins.foldl' (a: b: a + b) 0 (builtins.genList (x: x) 2000000000)";
    let _fake = fake_model(
        state.path(),
        one_call_a_turn(&[
            (
                "value",
                "nix_eval",
                json!({"expression": "(import /workspace/a.nix).x + 1"}),
            ),
            (
                "file",
                "nix_eval",
                json!({"expression": "builtins.readFile /etc/shadow"}),
            ),
            (
                "net",
                "nix_eval",
                json!({"expression": "builtins.fetchurl \"http://127.0.0.1:9/x\""}),
            ),
            (
                "loop",
                "nix_eval",
                json!({"expression": loop_expr, "timeout_secs": 2}),
            ),
            ("empty", "nix_eval", json!({"expression": "  "})),
        ]),
    );
    run_ok(state.path(), project.path(), "go");
    let events = log_values(&only_log(state.path()));
    let value = result_of(&events, "value");
    assert_eq!(text_of(value), "42", "{value}");
    let file = text_of(result_of(&events, "file"));
    assert!(file.contains("forbidden in restricted mode"), "{file}");
    let net = text_of(result_of(&events, "net"));
    assert!(
        net.contains("access to URI") && net.contains("forbidden"),
        "{net}"
    );
    let looped = text_of(result_of(&events, "loop"));
    assert!(looped.contains("ran past its bound of 2 s"), "{looped}");
    let empty = text_of(result_of(&events, "empty"));
    assert!(empty.contains("the expression is empty"), "{empty}");
    let decided = decisions(&events);
    assert!(
        decided.contains(&("call.nix_eval".to_owned(), "allow".to_owned())),
        "{decided:?}"
    );
}

/// A project whose committed flake.nix has `packages.x86_64-linux.<name>`
/// for each (name, derivation body) and whose chock.zon holds `rules`.
fn flake_project(packages: &[(&str, String)], rules: &[(&str, &str)]) -> TempProject {
    let project = project_with(rules);
    let body: String = packages
        .iter()
        .map(|(name, drv)| format!("      {name} = {drv};\n"))
        .collect();
    project.write(
        "flake.nix",
        &format!(
            "{{\n  outputs = {{ self }}: {{\n    packages.x86_64-linux = {{\n{body}    }};\n  }};\n}}\n"
        ),
    );
    project.commit_all("flake");
    project
}

/// A derivation of builtins, as flake.nix text, whose `bin/<name>` prints
/// `says` (a unique word, so each test builds its own).
fn tool_drv(name: &str, says: &str) -> String {
    format!(
        r#"derivation {{ name = "{name}"; system = "x86_64-linux"; builder = "/bin/sh"; args = [ "-c" "/bin/mkdir -p $out/bin; printf '#!/bin/sh\necho {says}\n' > $out/bin/{name}; /bin/chmod +x $out/bin/{name}" ]; }}"#
    )
}

fn unique(word: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{word}-{nanos}")
}

#[test]
fn provide_tool_builds_the_projects_attribute_and_its_program_runs_as_a_store_path() {
    nix_present();
    let says = unique("provided");
    let broken = r#"derivation { name = "broken"; system = "x86_64-linux"; builder = "/bin/sh"; args = [ "-c" "echo BROKEN-BUILD-SAYS-WHY; exit 3" ]; }"#;
    let project = flake_project(
        &[
            ("hello-tool", tool_drv("hello-tool", &says)),
            ("broken", broken.to_owned()),
        ],
        &[
            ("nix.build.packages.x86_64-linux.*", "allow"),
            ("exec.nix.store.*", "allow"),
        ],
    );
    let state = tempfile::tempdir().unwrap();
    let _fake = fake_model(
        state.path(),
        one_call_a_turn(&[
            (
                "provide",
                "provide_tool",
                json!({"attribute": ".#hello-tool"}),
            ),
            ("run", "run_command", json!({"command": ["hello-tool"]})),
            (
                "nope",
                "provide_tool",
                json!({"attribute": ".#no-such-tool"}),
            ),
            ("broken", "provide_tool", json!({"attribute": ".#broken"})),
            ("bad", "provide_tool", json!({"attribute": "ripgrep"})),
        ]),
    );
    let out = run_nix(state.path(), project.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = log_values(&only_log(state.path()));
    let provided = text_of(result_of(&events, "provide"));
    assert!(
        provided.starts_with("built .#hello-tool: /nix/store/"),
        "{provided}"
    );
    assert!(provided.contains("(hello-tool)"), "{provided}");
    let ran = text_of(result_of(&events, "run"));
    assert!(ran.contains(&says), "{ran}");
    let nope = text_of(result_of(&events, "nope"));
    assert!(
        nope.contains("could not be evaluated") && nope.contains("no-such-tool"),
        "{nope}"
    );
    let broken = text_of(result_of(&events, "broken"));
    assert!(
        broken.contains("the build failed") && broken.contains("BROKEN-BUILD-SAYS-WHY"),
        "{broken}"
    );
    let bad = text_of(result_of(&events, "bad"));
    assert!(bad.contains("names no flake"), "{bad}");
    let decided = decisions(&events);
    assert!(
        decided.contains(&(
            "nix.build.packages.x86_64-linux.hello-tool".to_owned(),
            "allow".to_owned()
        )),
        "{decided:?}"
    );
    assert!(
        decided.contains(&("nix.net.build.opaque".to_owned(), "allow".to_owned())),
        "{decided:?}"
    );
    assert!(
        decided
            .iter()
            .any(|(a, d)| a.starts_with("exec.nix.store.") && d == "allow"),
        "{decided:?}"
    );
}

#[test]
fn provide_tool_is_offered_only_where_a_nix_build_rule_permits() {
    nix_present();
    let project = flake_project(&[("hello-tool", tool_drv("hello-tool", "x"))], &[]);
    let state = tempfile::tempdir().unwrap();
    let fake = fake_model(
        state.path(),
        one_call_a_turn(&[(
            "provide",
            "provide_tool",
            json!({"attribute": ".#hello-tool"}),
        )]),
    );
    let out = run_nix(state.path(), project.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let offered: Vec<String> = fake.requests()[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(!offered.contains(&"provide_tool".to_owned()), "{offered:?}");
    assert!(offered.contains(&"nix_eval".to_owned()), "{offered:?}");
    let events = log_values(&only_log(state.path()));
    let refused = text_of(result_of(&events, "provide"));
    assert!(refused.contains("provide_tool is not offered"), "{refused}");
}

/// A loopback HTTP server for one file; its port. Killed when dropped.
struct Served {
    child: std::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve_file(name: &str, contents: &str) -> Served {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), contents).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("python3")
        .args([
            "-m",
            "http.server",
            "--bind",
            "127.0.0.1",
            &port.to_string(),
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    chock_testkit::wait_for(
        std::time::Duration::from_secs(10),
        "the file server",
        || std::net::TcpStream::connect(("127.0.0.1", port)).ok(),
    );
    Served {
        child,
        port,
        _dir: dir,
    }
}

fn sha256_hex(text: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn a_fixed_output_fetch_is_decided_at_its_host_and_refused_without_a_rule() {
    nix_present();
    let contents = unique("fetched");
    let served = serve_file("f.txt", &contents);
    let url = format!("http://127.0.0.1:{}/f.txt", served.port);
    let fetched = format!(
        r#"derivation {{ name = "f.txt"; system = "builtin"; builder = "builtin:fetchurl"; url = "{url}"; outputHashAlgo = "sha256"; outputHashMode = "flat"; outputHash = "{}"; executable = false; unpack = false; urls = [ "{url}" ]; preferLocalBuild = true; }}"#,
        sha256_hex(&contents)
    );
    let packages = [("fetched", fetched)];
    // No rule for the host: refused before the build, naming the rule.
    let refusing = flake_project(&packages, &[("nix.build.packages.x86_64-linux.*", "allow")]);
    let state = tempfile::tempdir().unwrap();
    let _fake = fake_model(
        state.path(),
        one_call_a_turn(&[("get", "provide_tool", json!({"attribute": ".#fetched"}))]),
    );
    let out = run_nix(state.path(), refusing.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = log_values(&only_log(state.path()));
    let refused = text_of(result_of(&events, "get"));
    assert!(refused.contains("was not started"), "{refused}");
    assert!(refused.contains(&url), "{refused}");
    assert!(
        refused.contains(r#".action = "nix.net.127.0.0.1", .decision = .allow"#),
        "{refused}"
    );

    // With the rule: fetched from the loopback server.
    let allowing = flake_project(
        &packages,
        &[
            ("nix.build.packages.x86_64-linux.*", "allow"),
            ("nix.net.127.0.0.1", "allow"),
        ],
    );
    let state = tempfile::tempdir().unwrap();
    let _fake = fake_model(
        state.path(),
        one_call_a_turn(&[("get", "provide_tool", json!({"attribute": ".#fetched"}))]),
    );
    let out = run_nix(state.path(), allowing.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = log_values(&only_log(state.path()));
    let built = text_of(result_of(&events, "get"));
    assert!(built.starts_with("built .#fetched: /nix/store/"), "{built}");
    let path = built
        .trim_start_matches("built .#fetched: ")
        .split(';')
        .next()
        .unwrap();
    assert_eq!(std::fs::read_to_string(path).unwrap(), contents);
    let decided = decisions(&events);
    assert!(
        decided.contains(&("nix.net.127.0.0.1".to_owned(), "allow".to_owned())),
        "{decided:?}"
    );
}

/// A dev shell derivation as Nix text: `PATH` leads with `tool`'s bin and
/// `MY_VAR` is set, as a `mkShell` sets its variables.
fn shell_drv(tool: &Path) -> String {
    format!(
        r#"derivation {{ name = "shell"; system = "x86_64-linux"; builder = "/bin/bash"; outputs = [ "out" ]; PATH = "{}/bin:/usr/bin:/bin"; MY_VAR = "from-the-project"; args = [ "-c" "exit 1" ]; }}"#,
        tool.display()
    )
}

#[test]
fn the_projects_flake_or_shell_nix_is_the_dev_shell_where_config_zon_allows_it() {
    let tool_path = tool("project-tool", "project-tool-ok");
    let flake = TempProject::git();
    flake.write(
        "flake.nix",
        &format!(
            "{{ outputs = {{ self }}: {{ devShells.x86_64-linux.default = {}; }}; }}\n",
            shell_drv(&tool_path)
        ),
    );
    flake.commit_all("flake");
    let shell = TempProject::git();
    shell.write("shell.nix", &format!("{}\n", shell_drv(&tool_path)));
    shell.commit_all("shell.nix");
    for (project, file) in [(&flake, "flake.nix"), (&shell, "shell.nix")] {
        let state = tempfile::tempdir().unwrap();
        let fake = chock_testkit::FakeModel::with(one_call_a_turn(&[(
            "run",
            "run_command",
            json!({"command": ["sh", "-c", "project-tool; echo $MY_VAR"]}),
        )]));
        config_with(state.path(), &fake, ".devshell = .{ .project = true },");
        let out = run_nix(state.path(), project.path());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let events = log_values(&only_log(state.path()));
        let notice = all_of(&events, "notice")[0];
        let said = notice["text"].as_str().unwrap();
        assert!(
            said.contains(&format!("the project's {}", project.join(file).display())),
            "{said}"
        );
        let ran = text_of(result_of(&events, "run"));
        assert!(
            ran.contains("project-tool-ok") && ran.contains("from-the-project"),
            "{ran}"
        );
    }
    // Without `.project = true` the project's shell is never evaluated.
    let state = tempfile::tempdir().unwrap();
    let _fake = fake_model(state.path(), [Turn::text("Done.").into()]);
    let out = run_nix(state.path(), flake.path());
    assert!(out.status.success());
    let events = log_values(&only_log(state.path()));
    assert!(
        all_of(&events, "notice")
            .iter()
            .all(|n| n["subject"] != "devshell")
    );
}

#[test]
fn a_project_shell_that_fails_to_evaluate_is_said_and_the_session_runs_without_it() {
    nix_present();
    let project = TempProject::git();
    project.write("shell.nix", "throw \"THE-SHELL-REFUSES\"\n");
    project.commit_all("shell.nix");
    let state = tempfile::tempdir().unwrap();
    let fake = chock_testkit::FakeModel::with([Turn::text("Done.").into()]);
    config_with(state.path(), &fake, ".devshell = .{ .project = true },");
    let out = run_nix(state.path(), project.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("THE-SHELL-REFUSES"), "{stderr}");
    assert!(
        stderr.contains("this session runs without a dev shell"),
        "{stderr}"
    );
}

#[test]
fn a_misspelt_devshell_field_is_refused_at_its_line_and_column() {
    let state = tempfile::tempdir().unwrap();
    let fake = chock_testkit::FakeModel::with([Turn::text("Done.").into()]);
    config_with(state.path(), &fake, ".devshell = .{ .closur = \"/x\" },");
    let config = state.path().join("config/chock/config.zon");
    let out = chock(state.path())
        .args(["policy", "check"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(":6:") && said.contains("unknown field `closur`, expected one of `closure`"),
        "{said}"
    );
}
