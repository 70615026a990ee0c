//! What Chock ships, and a project rule over it.

use pretty_assertions::assert_eq;

use super::prelude::*;

#[test]
fn what_chock_ships() {
    let none = Policy::shipped();
    let hash = "0123456789abcdfghijklmnpqrsvwxyz";
    let store = format!("exec.nix.store.{hash}");
    use LayerKind::{Default as D, None as N};
    let mut cases: Vec<(&str, &Policy, &str, Decision, LayerKind)> = vec![
        (
            "exec.devshell.* allow",
            &none,
            "exec.devshell.cargo",
            Allow,
            D,
        ),
        (
            "exec.nix.store.* is the one shipped rule that is not an allow",
            &none,
            &store,
            Ask,
            D,
        ),
        (
            "exec.workspace.* allow",
            &none,
            "exec.workspace.scripts/build.sh",
            Allow,
            D,
        ),
        ("exec.path.* allow", &none, "exec.path.git", Allow, D),
        (
            "exec.unparsed holds no shipped rule, so it asks",
            &none,
            "exec.unparsed",
            Ask,
            N,
        ),
        (
            "net.connect.*: none, so ask",
            &none,
            "net.connect.com.github",
            Ask,
            N,
        ),
        (
            "net.serve.<port>: none, so ask",
            &none,
            "net.serve.3000",
            Ask,
            N,
        ),
        (
            "net.fetch.*: none, so ask",
            &none,
            "net.fetch.org.ziglang.docs",
            Ask,
            N,
        ),
        ("web.search ships as ask", &none, "web.search", Ask, D),
        (
            "skill.read.operator ships as allow",
            &none,
            "skill.read.operator",
            Allow,
            D,
        ),
        (
            "skill.read.project ships as ask",
            &none,
            "skill.read.project",
            Ask,
            D,
        ),
        (
            "skill.read.packaged ships as ask",
            &none,
            "skill.read.packaged",
            Ask,
            D,
        ),
        (
            "nothing ships for secret.use",
            &none,
            "secret.use.GITHUB_TOKEN",
            Ask,
            N,
        ),
        (
            "nix.build.*: none, so ask",
            &none,
            "nix.build.packages.x86_64-linux.hello",
            Ask,
            N,
        ),
        (
            "nix.net.*: none, so ask",
            &none,
            "nix.net.org.nixos.cache",
            Ask,
            N,
        ),
        (
            "nix.net.build.opaque allow",
            &none,
            "nix.net.build.opaque",
            Allow,
            D,
        ),
        (
            "git.commit among the workspace-only allows",
            &none,
            "git.commit",
            Allow,
            D,
        ),
        ("none for git.push", &none, "git.push", Ask, N),
        ("none for git.clone", &none, "git.clone", Ask, N),
        ("none for git.fetch", &none, "git.fetch", Ask, N),
        ("none for git.pull", &none, "git.pull", Ask, N),
        ("none for git.unknown", &none, "git.unknown", Ask, N),
        (
            "a subcommand the shim does not know asks under its own name",
            &none,
            "git.frobnicate",
            Ask,
            N,
        ),
        ("lsp.* allow", &none, "lsp.zls", Allow, D),
        ("style.parse: none, so ask", &none, "style.parse", Ask, N),
        (
            "device.*: none, so ask",
            &none,
            "device.usb.1d50.6018",
            Ask,
            N,
        ),
        (
            "device.tty.serial: none, so ask",
            &none,
            "device.tty.serial.A9XYZ",
            Ask,
            N,
        ),
        (
            "mcp.*: none, so ask",
            &none,
            "mcp.time.tool.get_current_time",
            Ask,
            N,
        ),
        (
            "plugin.*: none, so ask",
            &none,
            "plugin.hello.tool.greet",
            Ask,
            N,
        ),
        (
            "sandbox.jit: only allow turns the rule off",
            &none,
            "sandbox.jit",
            Ask,
            N,
        ),
        (
            "workspace.integrate: a row nobody wrote answers allow",
            &none,
            "workspace.integrate",
            Allow,
            D,
        ),
        (
            "provider.<instance> reads as a capability",
            &none,
            "provider.openai",
            Allow,
            D,
        ),
        (
            "provider.<instance>.<model> likewise",
            &none,
            "provider.openai.gpt-4.1",
            Allow,
            D,
        ),
        (
            "workspace.apply is a question",
            &none,
            "workspace.apply",
            Ask,
            N,
        ),
        ("policy.widen is a question", &none, "policy.widen", Ask, N),
        (
            "nothing in a session asks file.write, and nothing ships for it",
            &none,
            "file.write",
            Ask,
            N,
        ),
    ];
    let calls: Vec<String> = chock_policy::defaults::ALLOWED_CALLS
        .iter()
        .map(|t| format!("call.{t}"))
        .collect();
    for c in &calls {
        cases.push(("these ship as allow", &none, c, Allow, D));
    }
    check(&cases);
    assert_eq!(chock_policy::defaults::ALLOWED_CALLS.len(), 12);
}

#[test]
fn a_call_rule_for_a_tool_decided_elsewhere_is_refused() {
    for tool in [
        "run_command",
        "spawn_agent",
        "update_plan",
        "restrict_self",
        "fetch_url",
        "ask_user",
        "set_title",
        "request_action",
    ] {
        let err = Action::call(tool).unwrap_err().to_string();
        assert!(err.contains("decides nothing"), "{tool}: {err}");
    }
}

#[test]
fn a_project_rule_that_matches_wins_over_the_shipped_defaults() {
    let write_ask = project(&[(Some("call.write_file"), Ask)]);
    let wide_deny = project(&[(Some("call.*"), Deny)]);
    let catch_all = project(&[(None, Ask)]);
    use LayerKind::{Default as D, Project as P};
    check(&[
        (
            "call.write_file set to ask puts that call back behind a prompt",
            &write_ask,
            "call.write_file",
            Ask,
            P,
        ),
        (
            "the other calls still read the defaults",
            &write_ask,
            "call.read_file",
            Allow,
            D,
        ),
        (
            "whatever it names and however wide it is",
            &wide_deny,
            "call.read_file",
            Deny,
            P,
        ),
        (
            "a catch-all is a project rule that matches",
            &catch_all,
            "exec.path.git",
            Ask,
            P,
        ),
    ]);
}

#[test]
fn store_paths_are_named_by_hash_not_by_the_package() {
    let hash = "0123456789abcdfghijklmnpqrsvwxyz";
    assert_eq!(
        Action::exec(ExecClass::NixStore, hash).unwrap().as_str(),
        format!("exec.nix.store.{hash}")
    );
    assert!(Action::exec(ExecClass::NixStore, "hello-2.12").is_err());
    let p = project(&[(Some(&format!("exec.nix.store.{hash}") as &str), Allow)]);
    assert_eq!(
        p.decision(&Action::exec(ExecClass::NixStore, hash).unwrap()),
        Allow
    );
}
