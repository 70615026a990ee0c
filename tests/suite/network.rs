//! `chock sandbox --net`: the router as the workspace's policy gives it,
//! against local servers only (test names resolve to 127.0.0.1 through
//! `--resolve`, and the rules name 127.0.0.1).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::chock;

/// A local HTTP server answering `body` to every request.
fn origin(body: &'static str) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

fn project(net: &str, rules: &[(&str, &str)]) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let mut text = format!(".{{ .policy = .{{ {net} .rules = .{{\n");
    for (a, d) in rules {
        text.push_str(&format!(
            "    .{{ .action = \"{a}\", .decision = .{d} }},\n"
        ));
    }
    text.push_str("} } }\n");
    std::fs::write(ws.path().join("chock.zon"), text).unwrap();
    ws
}

const RULES: &[(&str, &str)] = &[
    ("net.connect.test.allowed", "allow"),
    ("net.connect.test.denied", "deny"),
    ("net.connect.127.0.0.1", "allow"),
];

fn sandbox(ws: &std::path::Path, flags: &[&str], command: &[&str]) -> std::process::Command {
    let state = tempfile::tempdir().unwrap();
    let mut cmd = chock(state.path());
    cmd.args(["sandbox", "--workspace"])
        .arg(ws)
        .arg("--net")
        .args([
            "--resolve",
            "allowed.test=127.0.0.1",
            "--resolve",
            "denied.test=127.0.0.1",
        ])
        .args(["--resolve", "asked.test=127.0.0.1"])
        .args(flags)
        .arg("--")
        .args(command);
    cmd
}

fn curl(ws: &std::path::Path, flags: &[&str], url: &str) -> (i32, String, String) {
    let out = sandbox(ws, flags, &["curl", "-sS", "--max-time", "20", url])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_allowed_host_is_reached_and_a_denied_one_names_the_rule() {
    let port = origin("hello through chock");
    let ws = project("", RULES);
    let (code, out, err) = curl(ws.path(), &[], &format!("http://allowed.test:{port}/"));
    assert_eq!((code, out.as_str()), (0, "hello through chock"), "{err}");
    let (_, out, err) = curl(ws.path(), &[], &format!("http://denied.test:{port}/"));
    assert!(
        out.contains("net.connect.test.denied refused: the policy answers deny"),
        "{out}"
    );
    assert!(
        err.contains("refused: net.connect.test.denied"),
        "the log line: {err}"
    );
}

#[test]
fn no_permitting_rule_or_router_none_means_no_router() {
    let port = origin("unreachable");
    let url = format!("http://allowed.test:{port}/");
    // .auto with only a deny: no router.
    let ws = project("", &[("net.connect.test.denied", "deny")]);
    let (code, _, err) = curl(ws.path(), &[], &url);
    assert_ne!(code, 0);
    assert!(
        err.contains("chock: no router: .policy.net.router is .auto"),
        "{err}"
    );
    // .none refuses a router whatever the rules say.
    let ws = project(".net = .{ .router = .none },", RULES);
    let (code, _, err) = curl(ws.path(), &[], &url);
    assert_ne!(code, 0);
    assert!(err.contains(".policy.net.router is .none"), "{err}");
    // .filtered gives one with nothing permitted, and it reaches nothing.
    let ws = project(".net = .{ .router = .filtered },", &[]);
    let (_, out, _) = curl(ws.path(), &[], &url);
    assert!(out.contains("net.connect.test.allowed refused"), "{out}");
}

#[test]
fn a_background_command_is_refused_what_would_have_asked() {
    let port = origin("background");
    let ws = project("", RULES);
    let (_, out, _) = curl(
        ws.path(),
        &["--background"],
        &format!("http://asked.test:{port}/"),
    );
    assert!(
        out.contains("a background command gets only what is allowed outright"),
        "{out}"
    );
    let (_, out, _) = curl(ws.path(), &[], &format!("http://asked.test:{port}/"));
    assert!(out.contains("nobody can be asked here"), "{out}");
    let (code, out, _) = curl(
        ws.path(),
        &["--background"],
        &format!("http://allowed.test:{port}/"),
    );
    assert_eq!((code, out.as_str()), (0, "background"));
}

#[test]
fn net_serve_allow_publishes_the_port_on_the_hosts_loopback() {
    let port = super::run_network::free_port();
    let serve = format!("net.serve.{port}");
    let ws = project(
        "",
        &[("net.connect.test.allowed", "allow"), (&serve, "allow")],
    );
    std::fs::write(ws.path().join("index.html"), "published page").unwrap();
    let mut child = sandbox(
        ws.path(),
        &[],
        &[
            "python3",
            "-m",
            "http.server",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let end = Instant::now() + Duration::from_secs(30);
    let mut got = String::new();
    while Instant::now() < end && !got.ends_with("published page") {
        got.clear();
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = s.write_all(b"GET /index.html HTTP/1.0\r\n\r\n");
            let _ = s.read_to_string(&mut got);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        TcpStream::connect(("127.0.0.2", port)).is_err(),
        "listening beyond 127.0.0.1"
    );
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(got.ends_with("published page"), "{got}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("chock: published 127.0.0.1:{port}")),
        "{err}"
    );
}

#[test]
fn fake_resolver_carries_a_program_that_ignores_the_proxy_and_logs_the_refusal() {
    let port = origin("hello through a fake address");
    let ws = project(
        &format!(".net = .{{ .resolver_ports = .{{ {port} }} }},"),
        RULES,
    );
    let direct = |host: &str| {
        format!("curl -sS --max-time 20 --noproxy '*' http://{host}:{port}/; echo \" rc=$?\"")
    };
    let script = format!(
        "getent hosts allowed.test; {}; {}",
        direct("allowed.test"),
        direct("denied.test")
    );
    let out = sandbox(ws.path(), &["--fake-resolver"], &["sh", "-c", &script])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}{stderr}");
    assert!(lines[0].starts_with("127.77.0.1 "), "{stdout}");
    assert_eq!(lines[1], "hello through a fake address rc=0", "{stderr}");
    assert_ne!(lines[2], " rc=0", "{stdout}");
    assert!(
        stderr.contains("refused: net.connect.test.denied refused: the policy answers deny"),
        "the log line: {stderr}"
    );
    // Without the flag (and .resolver unset) there is no resolver.
    let out = sandbox(
        ws.path(),
        &[],
        &["sh", "-c", "getent hosts allowed.test || echo unresolved"],
    )
    .output()
    .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "unresolved\n");
}
