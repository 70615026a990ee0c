//! `chock sync` into fixture configs of every client: the result is the
//! checked-in `after` fixture byte for byte, a second run is a no-op, and
//! `--check` sees it. Invalid configs are refused and left untouched.

use std::fs;
use std::path::{Path, PathBuf};

use chock_gate::Agent;
use chock_gate::sync::{self, Row, State, SyncRequest};

use super::{fixtures, repo};

/// (fixture dir, path inside the project) for clients with a `before` fixture.
const SEEDED: [(&str, &str); 5] = [
    ("claude-code", ".claude/settings.json"),
    ("codex", ".codex/hooks.json"),
    ("gemini", ".gemini/settings.json"),
    ("cursor", ".cursor/hooks.json"),
    ("windsurf", ".windsurf/hooks.json"),
];

struct World {
    _root: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
}

fn world() -> World {
    let root = tempfile::tempdir().unwrap();
    let project = repo(root.path(), "shop");
    let home = root.path().join("home");
    fs::create_dir_all(&home).unwrap();
    World {
        _root: root,
        project,
        home,
    }
}

fn seed(w: &World) {
    for (client, rel) in SEEDED {
        let to = w.project.join(rel);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        let name = Path::new(rel).file_name().unwrap();
        fs::copy(fixtures().join("sync").join(client).join(name), to).unwrap();
    }
}

fn run(w: &World, check: bool, user_level: bool) -> Vec<Row> {
    sync::run(&SyncRequest {
        project: &w.project,
        home: &w.home,
        clients: Vec::new(),
        user_level,
        check,
        git: false,
    })
}

/// Sync wires `client` alone into the project (no user level, no check).
fn sync_client(w: &World, client: Agent) -> Vec<Row> {
    sync::run(&SyncRequest {
        project: &w.project,
        home: &w.home,
        clients: vec![client],
        user_level: false,
        check: false,
        git: false,
    })
}

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((path.clone(), fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn sync_matches_the_after_fixtures_byte_for_byte_and_is_idempotent() {
    let w = world();
    seed(&w);
    let rows = run(&w, false, false);
    assert_eq!(rows.len(), 8, "{rows:?}");
    assert!(rows.iter().all(|r| r.changed), "{rows:?}");
    for (client, rel) in SEEDED {
        let name = Path::new(rel).file_name().unwrap().to_str().unwrap();
        let expected = fixtures()
            .join("sync")
            .join(client)
            .join(format!("after.{name}"));
        let actual = fs::read_to_string(w.project.join(rel)).unwrap();
        if std::env::var_os("CHOCK_BLESS").is_some() {
            fs::write(&expected, &actual).unwrap();
        }
        pretty_assertions::assert_eq!(actual, fs::read_to_string(&expected).unwrap(), "{client}");
    }
    let before = snapshot(&w.project);
    let again = run(&w, false, false);
    assert!(again.iter().all(|r| !r.changed), "{again:?}");
    assert_eq!(
        snapshot(&w.project),
        before,
        "a second sync changes no byte"
    );
}

#[test]
fn sync_keeps_every_original_byte_around_the_insertion() {
    let w = world();
    seed(&w);
    run(&w, false, false);
    for (client, rel) in SEEDED {
        let name = Path::new(rel).file_name().unwrap();
        let original = fs::read_to_string(fixtures().join("sync").join(client).join(name)).unwrap();
        let edited = fs::read_to_string(w.project.join(rel)).unwrap();
        // The edit is insertions only: the original is a subsequence of the
        // result, in order, char for char.
        let mut rest = edited.chars();
        for c in original.chars() {
            assert!(rest.any(|e| e == c), "{client}: lost {c:?}");
        }
    }
}

#[test]
fn check_reports_missing_then_wired_and_pending_trust_for_codex_and_gemini() {
    let w = world();
    let rows = run(&w, true, false);
    assert!(rows.iter().all(|r| r.state == State::Missing), "{rows:?}");
    assert!(
        snapshot(&w.project)
            .iter()
            .all(|(p, _)| !p.starts_with(w.project.join(".claude"))),
        "check writes nothing"
    );
    run(&w, false, false);
    for row in run(&w, true, false) {
        match row.client {
            "codex" | "gemini" => assert!(matches!(row.state, State::PendingTrust(_)), "{row:?}"),
            _ => assert_eq!(row.state, State::Wired, "{row:?}"),
        }
    }
}

#[test]
fn trust_granted_in_codex_and_gemini_turns_pending_into_wired() {
    let w = world();
    run(&w, false, false);
    let project = w.project.display().to_string();
    let hooks = w.project.join(".codex/hooks.json").display().to_string();
    fs::create_dir_all(w.home.join(".codex")).unwrap();
    fs::write(
        w.home.join(".codex/config.toml"),
        format!(
            "model = \"gpt-5\"\n\n[projects.\"{project}\"]\ntrust_level = \"trusted\"\n\n[hooks.state.\"{hooks}:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:00\"\n"
        ),
    )
    .unwrap();
    fs::create_dir_all(w.home.join(".gemini")).unwrap();
    fs::write(
        w.home.join(".gemini/trustedFolders.json"),
        format!("{{\"{project}\": \"TRUST_FOLDER\"}}"),
    )
    .unwrap();
    let rows = run(&w, true, false);
    assert!(rows.iter().all(|r| r.state == State::Wired), "{rows:?}");
}

#[test]
fn user_level_installs_in_the_home_configs_too() {
    let w = world();
    let rows = run(&w, false, true);
    assert_eq!(rows.len(), 16);
    for rel in [
        ".claude/settings.json",
        ".codex/hooks.json",
        ".gemini/settings.json",
        ".cursor/hooks.json",
        ".agents/plugins/chock/hooks/hooks.json",
        ".agents/plugins/chock/plugin.json",
        "Documents/Cline/Hooks/PreToolUse",
        ".codeium/windsurf/hooks.json",
        ".config/opencode/plugins/chock-stop.js",
    ] {
        assert!(w.home.join(rel).is_file(), "{rel}");
    }
    let gemini_user = rows
        .iter()
        .find(|r| r.client == "gemini" && r.level == sync::Level::User)
        .unwrap();
    assert_eq!(
        gemini_user.state,
        State::Wired,
        "Gemini reads user settings without folder trust"
    );
}

/// A file sync must refuse and leave as it is: the client, where the file
/// is (from the project or the home), what it holds, and what the refusal
/// must say.
type Unusable = (Agent, fn(&World) -> PathBuf, &'static str, fn(&str) -> bool);

#[test]
fn a_config_sync_cannot_use_is_refused_with_its_position_and_left_untouched() {
    let cases: [Unusable; 3] = [
        // Invalid JSON: line and column.
        (
            Agent::ClaudeCode,
            |w| w.project.join(".claude/settings.json"),
            "{\n  \"model\": \"opus\",\n  \"hooks\": {},\n}\n",
            |msg| msg.contains("line 5, column 1") || msg.contains("line 4"),
        ),
        // Invalid TOML in Codex's own config: its line.
        (
            Agent::Codex,
            |w| w.home.join(".codex/config.toml"),
            "model = \"gpt-5\"\n[projects\ntrust = 1\n",
            |msg| msg.contains("not valid TOML") && msg.contains("line 2"),
        ),
        // A Cline hook somebody else wrote is not overwritten.
        (
            Agent::Cline,
            |w| w.project.join(".clinerules/hooks/PreToolUse"),
            "#!/bin/sh\necho '{\"cancel\":false}'\n",
            |msg| msg.contains("not written by chock"),
        ),
    ];
    for (client, place, text, says) in cases {
        let w = world();
        let path = place(&w);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        let rows = sync_client(&w, client);
        match &rows[0].state {
            State::Invalid(msg) => assert!(says(msg), "{client:?}: {msg}"),
            other => panic!("{client:?}: {other:?}"),
        }
        assert_eq!(fs::read_to_string(&path).unwrap(), text, "{client:?}");
    }
}

#[test]
fn a_symlinked_config_is_edited_at_its_target_and_stays_a_symlink() {
    let w = world();
    let real = w.home.join("dotfiles/claude.json");
    fs::create_dir_all(real.parent().unwrap()).unwrap();
    fs::write(&real, "{\"model\": \"opus\"}\n").unwrap();
    let link = w.project.join(".claude/settings.json");
    fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    sync_client(&w, Agent::ClaudeCode);
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        fs::read_to_string(&real)
            .unwrap()
            .contains("chock gate stop-check --client claude-code")
    );
}
