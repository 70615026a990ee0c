//! The stop reader is on the path of every tool call: how long does one
//! answer take with no stop, with a repository stop, and for a hook that
//! names no project while 100 registry entries are in force?
#![expect(
    clippy::unwrap_used,
    reason = "benchmark setup: a failure to set up must abort the run"
)]

use std::hint::black_box;
use std::path::Path;
use std::process::Command;

use chock_gate::reader::{Caller, read};
use chock_gate::repo::discover;
use chock_gate::stopfile::{Scope, StopFile, write_repo_stop};
use chock_gate::{Agent, StopPaths};
use criterion::{Criterion, criterion_group, criterion_main};

fn git_repo(dir: &Path) {
    std::fs::create_dir_all(dir.join("src/deep")).unwrap();
    let ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .status()
        .unwrap()
        .success();
    assert!(ok, "git init");
}

fn stop() -> StopFile {
    StopFile {
        version: 1,
        scope: Scope::Repo,
        reason: "bench".into(),
        who: "ada@example.org".into(),
        when: "2026-11-29T12:00:00Z".into(),
        repo: None,
        agent: None,
    }
}

fn bench(c: &mut Criterion) {
    let root = tempfile::tempdir().unwrap();
    let clear_repo = root.path().join("clear");
    let stopped_repo = root.path().join("stopped");
    git_repo(&clear_repo);
    git_repo(&stopped_repo);
    let paths = StopPaths::under_home(&root.path().join("home"));
    let repo = discover(&stopped_repo).unwrap().unwrap();
    write_repo_stop(&paths, &repo, &stop()).unwrap();
    let deep = clear_repo.join("src/deep");

    c.bench_function("read/no stop, cwd two levels below the repo root", |b| {
        b.iter(|| {
            read(
                black_box(&paths),
                &Caller {
                    project: Some(&deep),
                    agent: Some(Agent::ClaudeCode),
                },
            )
        });
    });
    c.bench_function("read/repository stop in force", |b| {
        b.iter(|| {
            read(
                black_box(&paths),
                &Caller {
                    project: Some(&stopped_repo),
                    agent: Some(Agent::ClaudeCode),
                },
            )
        });
    });

    let many = StopPaths::under_home(&root.path().join("home-many"));
    for i in 0..100 {
        let dir = root.path().join(format!("r{i}"));
        git_repo(&dir);
        write_repo_stop(&many, &discover(&dir).unwrap().unwrap(), &stop()).unwrap();
    }
    c.bench_function("read/no project, 100 registry entries", |b| {
        b.iter(|| {
            read(
                black_box(&many),
                &Caller {
                    project: None,
                    agent: None,
                },
            )
        });
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
