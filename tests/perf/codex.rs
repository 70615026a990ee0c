//! A whole session, side by side with Codex's native binary: both clients
//! run the same scripted conversations against the testkit's fake model in
//! the same run, Chock over the OpenAI Chat Completions wire it is
//! configured with and Codex over the Responses API (its only wire):
//!
//! - two turns: one shell call (`true`), then "done";
//! - fifty shell calls of `true`, then "done".
//!
//! Each client is one process started from here and reaped with `wait4`,
//! whose rusage gives that process tree's own CPU time and its largest
//! resident set (not the driver's). Figures: median wall time, CPU time
//! and peak RSS over [`RUNS`] runs, and Chock's over Codex's.
//!
//! Codex is the binary inside npm's `@openai/codex-linux-x64` package;
//! set `CHOCK_PERF_CODEX` to it (docs/performance.md gives the install
//! command). Codex runs with `--dangerously-bypass-approvals-and-sandbox`
//! (its Linux sandbox needs user namespaces this container's seccomp
//! profile may refuse; and a command that needs no approval is the case
//! measured), `--ephemeral` and its own empty `CODEX_HOME`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chock_testkit::{FakeModel, Reply, TempProject, Turn};
use serde_json::json;

use super::first_request::{chock_bin, fake_model, median, ms};

const RUNS: usize = 5;

#[derive(Clone, Copy, Debug, Default)]
struct Cost {
    wall: Duration,
    cpu: Duration,
    rss_kib: i64,
}

/// Runs `cmd` and reaps it with `wait4`: its wall time, its tree's CPU
/// time and its peak resident set.
fn measured(mut cmd: Command) -> Cost {
    let start = Instant::now();
    let child = cmd.spawn().unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet reaped (the `Child` is dropped
    // without a wait); `status` and `usage` are valid for writes.
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = start.elapsed();
    drop(child);
    assert_eq!(got, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{cmd:?} failed: status {status}"
    );
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    Cost {
        wall,
        cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
        rss_kib: usage.ru_maxrss,
    }
}

fn script(
    calls: usize,
    argv: &[&str],
    name: &str,
    args: impl Fn(&[&str]) -> serde_json::Value,
) -> Vec<Reply> {
    let mut turns: Vec<Reply> = (0..calls)
        .map(|n| {
            Turn::text("")
                .call(&format!("c{n}"), name, &args(argv))
                .into()
        })
        .collect();
    turns.push(Turn::text("done").into());
    turns
}

fn chock_once(calls: usize) -> Cost {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = fake_model(
        state.path(),
        script(
            calls,
            &["true"],
            "run_command",
            |argv| json!({ "command": argv }),
        ),
    );
    // A turn of fifty calls is past the default bound on model calls.
    let config = state.path().join("config/chock/config.zon");
    let zon = std::fs::read_to_string(&config).unwrap();
    let zon = zon.replacen(".{\n", ".{\n    .max_model_calls = 100,\n", 1);
    std::fs::write(&config, zon).unwrap();
    let mut cmd = Command::new(chock_bin());
    cmd.env("CHOCK_STATE_DIR", state.path())
        .env("XDG_CONFIG_HOME", state.path().join("config"))
        .env_remove("CHOCK_LOG")
        .arg("run")
        .arg(project.path())
        .arg("go")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let cost = measured(cmd);
    assert_eq!(fake.requests().len(), calls + 1);
    cost
}

fn codex_config(home: &Path, fake: &FakeModel) {
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model = \"m\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"{}\"\nwire_api = \"responses\"\nrequires_openai_auth = false\n",
            fake.openai_url()
        ),
    )
    .unwrap();
}

fn codex_once(codex: &Path, calls: usize) -> Cost {
    let home = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = FakeModel::with(script(
        calls,
        &["true"],
        "exec_command",
        |argv| json!({ "cmd": argv.join(" ") }),
    ));
    codex_config(home.path(), &fake);
    let mut cmd = Command::new(codex);
    cmd.env("CODEX_HOME", home.path())
        .env("HOME", home.path())
        .env_remove("OPENAI_API_KEY")
        .args([
            "exec",
            "--ephemeral",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "-C",
        ])
        .arg(project.path())
        .arg("go")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    if std::env::var_os("CHOCK_PERF_CODEX_VERBOSE").is_none() {
        cmd.stderr(Stdio::null());
    }
    let cost = measured(cmd);
    let requests = fake.requests();
    if std::env::var_os("CHOCK_PERF_CODEX_VERBOSE").is_some() {
        for r in &requests {
            eprintln!(
                "{} {} {}",
                r.method,
                r.path,
                &r.body[r.body.len().saturating_sub(300)..]
            );
        }
    }
    let to_model = requests
        .iter()
        .filter(|r| r.path.ends_with("/responses"))
        .count();
    assert_eq!(to_model, calls + 1, "codex made {to_model} model requests");
    cost
}

fn medians(costs: &[Cost]) -> Cost {
    let mut rss: Vec<i64> = costs.iter().map(|c| c.rss_kib).collect();
    rss.sort();
    Cost {
        wall: median(costs.iter().map(|c| c.wall).collect()),
        cpu: median(costs.iter().map(|c| c.cpu).collect()),
        rss_kib: rss[rss.len() / 2],
    }
}

#[test]
#[ignore = "a measurement; run by hand, see the module docs"]
fn whole_session_against_codex() {
    let Some(codex) = std::env::var_os("CHOCK_PERF_CODEX") else {
        panic!("set CHOCK_PERF_CODEX to Codex's native binary (see docs/performance.md)");
    };
    let codex = Path::new(&codex);
    for (what, calls) in [("2 turns (1 shell call)", 1), ("50 shell calls", 50)] {
        let mut chock = Vec::new();
        let mut peer = Vec::new();
        for _ in 0..RUNS {
            chock.push(chock_once(calls));
            peer.push(codex_once(codex, calls));
        }
        let (c, p) = (medians(&chock), medians(&peer));
        println!(
            "{what}: chock wall {:.1} ms, cpu {:.1} ms, peak rss {:.1} MB; codex wall {:.1} ms, cpu {:.1} ms, peak rss {:.1} MB; \
             ratios (chock/codex) wall {:.3}, cpu {:.3}, rss {:.3}",
            ms(c.wall),
            ms(c.cpu),
            c.rss_kib as f64 / 1024.0,
            ms(p.wall),
            ms(p.cpu),
            p.rss_kib as f64 / 1024.0,
            p.wall.as_secs_f64().recip() * c.wall.as_secs_f64(),
            c.cpu.as_secs_f64() / p.cpu.as_secs_f64(),
            c.rss_kib as f64 / p.rss_kib as f64,
        );
    }
}
