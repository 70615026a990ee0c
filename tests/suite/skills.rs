//! Skills in real `chock run` sessions: one skill in each layer (the
//! operator's directory, the project's .chock/skills, a packaged directory
//! on $CHOCK_SKILLS_PATH and a profile's share/chock/skills on PATH), listed
//! by name and description in the first request and read with read_skill,
//! decided at skill.read.<layer>; the skills that cannot be offered said
//! once at the start; and `chock skills`.

use std::path::Path;

use chock_testkit::{FakeModel, TempProject, Turn, Wire};
use serde_json::{Value, json};

use super::chock;
use super::kit::{
    all_of, answer_pending, assert_done, assert_success, call_turn, finish, log_values, only_log,
    result_of, write_config,
};

/// Writes a skill directory `dir/<name>` whose SKILL.md has `front` as its
/// front matter lines and `body` after it.
fn skill(dir: &Path, name: &str, front: &str, body: &str) {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("SKILL.md"), format!("---\n{front}\n---\n{body}")).unwrap();
}

fn good(dir: &Path, name: &str, description: &str, body: &str) {
    skill(
        dir,
        name,
        &format!("name: {name}\ndescription: {description}"),
        body,
    );
}

/// The instructions of the first request the model received.
pub(crate) fn first_instructions(fake: &FakeModel) -> String {
    let request = fake.requests()[0].json();
    request["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The names of the tools the first request offered.
pub(crate) fn first_tools(fake: &FakeModel) -> Vec<String> {
    fake.requests()[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The layers' directories of one test machine: the operator's (where
/// config.zon's directory puts it), a packaged one, and a profile whose bin
/// is on PATH.
struct Layers {
    state: tempfile::TempDir,
    packaged: tempfile::TempDir,
    profile: tempfile::TempDir,
}

impl Layers {
    fn new() -> Layers {
        let layers = Layers {
            state: tempfile::tempdir().unwrap(),
            packaged: tempfile::tempdir().unwrap(),
            profile: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(layers.profile.path().join("bin")).unwrap();
        layers
    }

    fn operator(&self) -> std::path::PathBuf {
        self.state.path().join("config/chock/skills")
    }

    fn profile_skills(&self) -> std::path::PathBuf {
        self.profile.path().join("share/chock/skills")
    }

    fn chock(&self) -> std::process::Command {
        let mut cmd = chock(self.state.path());
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.env("CHOCK_SKILLS_PATH", self.packaged.path()).env(
            "PATH",
            format!("{}/bin:{path}", self.profile.path().display()),
        );
        cmd
    }
}

fn model(layers: &Layers, calls: &[(&str, Value)]) -> FakeModel {
    let mut turns: Vec<chock_testkit::Reply> = calls
        .iter()
        .map(|(id, args)| call_turn(id, "read_skill", args.clone()))
        .collect();
    turns.push(Turn::text("Done.").into());
    let fake = FakeModel::with(turns);
    write_config(layers.state.path(), &fake.config_zon(Wire::OpenAi, "m"));
    fake
}

#[test]
fn a_skill_of_each_layer_is_listed_at_the_start_and_read_at_its_layer() {
    let layers = Layers::new();
    good(
        &layers.operator(),
        "release",
        "How to cut a release",
        "OPERATOR BODY: tag, then push.\n",
    );
    std::fs::write(
        layers.operator().join("release/checklist.md"),
        "OPERATOR FILE\n",
    )
    .unwrap();
    // Two that cannot be offered: said once, the others still offered.
    skill(&layers.operator(), "nofront", "", "");
    std::fs::write(
        layers.operator().join("nofront/SKILL.md"),
        "# No front matter\n",
    )
    .unwrap();
    skill(
        &layers.operator(),
        "dotted",
        "name: a.b\ndescription: two labels",
        "x",
    );
    good(
        layers.packaged.path(),
        "lint",
        "The house lint rules",
        "PACKAGED BODY\n",
    );
    good(
        &layers.profile_skills(),
        "fmt",
        "How the profile formats code",
        "PROFILE BODY\n",
    );
    let project = TempProject::git();
    good(
        &project.join(".chock/skills"),
        "layout",
        "Where the code of this project lives",
        "PROJECT BODY\n",
    );
    project.write_chock_zon(&super::kit::rules_zon(&[("skill.read.packaged", "allow")]));
    project.commit_all("a project skill");
    let fake = model(
        &layers,
        &[
            ("op", json!({"name": "release"})),
            ("opfile", json!({"name": "release", "file": "checklist.md"})),
            (
                "escape",
                json!({"name": "release", "file": "../../AGENTS.md"}),
            ),
            ("proj", json!({"name": "layout"})),
            ("pkg", json!({"name": "lint"})),
            ("prof", json!({"name": "fmt"})),
            ("none", json!({"name": "nosuch"})),
        ],
    );
    let child = layers
        .chock()
        .arg("run")
        .arg(project.path())
        .arg("use the skills")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (_, out) = answer_pending(layers.state.path(), "skill.read.project", "y\n");
    assert_success(&out);
    let out = finish(child);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Each skipped skill is said once at the start, with what to do.
    assert_eq!(
        stderr
            .matches("nofront/SKILL.md is skipped: it has no front matter")
            .count(),
        1,
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("its name 'a.b' is not one label").count(),
        1,
        "{stderr}"
    );

    let instructions = first_instructions(&fake);
    for line in [
        "- release (operator): How to cut a release",
        "- layout (project): Where the code of this project lives",
        "- lint (packaged): The house lint rules",
        "- fmt (packaged): How the profile formats code",
    ] {
        assert!(instructions.contains(line), "{line} in {instructions}");
    }
    assert!(
        !instructions.contains("BODY"),
        "no body costs context: {instructions}"
    );
    assert!(!instructions.contains("nofront") && !instructions.contains("a.b"));
    assert!(first_tools(&fake).contains(&"read_skill".to_owned()));

    let log = only_log(layers.state.path());
    assert_done(&log);
    let events = log_values(&log);
    let read = |id: &str| {
        let r = result_of(&events, id);
        (
            r["ok"].as_bool().unwrap(),
            r["output"].as_str().unwrap().to_owned(),
        )
    };
    assert_eq!(
        read("op"),
        (true, "OPERATOR BODY: tag, then push.\n".to_owned())
    );
    assert_eq!(read("opfile"), (true, "OPERATOR FILE\n".to_owned()));
    let (ok, text) = read("escape");
    assert!(
        !ok && text.contains("not a path inside the skill"),
        "{text}"
    );
    assert_eq!(read("proj"), (true, "PROJECT BODY\n".to_owned()));
    assert_eq!(read("pkg"), (true, "PACKAGED BODY\n".to_owned()));
    assert_eq!(read("prof"), (true, "PROFILE BODY\n".to_owned()));
    let (ok, text) = read("none");
    assert!(
        !ok && text.contains("there is no skill named 'nosuch'"),
        "{text}"
    );
    // Decided at the layer, never at the skill's name.
    let decided: Vec<&str> = all_of(&events, "decision")
        .iter()
        .filter_map(|d| d["action"].as_str())
        .filter(|a| a.starts_with("skill."))
        .collect();
    assert_eq!(
        decided,
        [
            "skill.read.operator",
            "skill.read.operator",
            "skill.read.operator",
            "skill.read.project",
            "skill.read.packaged",
            "skill.read.packaged"
        ]
    );
    let notices: Vec<&str> = all_of(&events, "notice")
        .iter()
        .filter(|n| n["subject"] == "start")
        .filter_map(|n| n["text"].as_str())
        .collect();
    assert_eq!(notices.len(), 2, "{notices:?}");
}

#[test]
fn a_project_skill_a_rule_denies_is_not_read() {
    let layers = Layers::new();
    let project = TempProject::git();
    good(
        &project.join(".chock/skills"),
        "layout",
        "Where the code lives",
        "SECRET PLAN\n",
    );
    project.write_chock_zon(&super::kit::rules_zon(&[("skill.read.project", "deny")]));
    project.commit_all("a denied skill");
    let fake = model(&layers, &[("proj", json!({"name": "layout"}))]);
    let out = layers
        .chock()
        .arg("run")
        .arg(project.path())
        .arg("read it")
        .output()
        .unwrap();
    assert_success(&out);
    assert!(first_instructions(&fake).contains("- layout (project): Where the code lives"));
    let events = log_values(&only_log(layers.state.path()));
    let result = result_of(&events, "proj");
    assert_eq!(result["ok"], false);
    assert!(
        !result["output"].as_str().unwrap().contains("SECRET PLAN"),
        "{result}"
    );
    assert!(
        result["output"]
            .as_str()
            .unwrap()
            .contains("skill.read.project"),
        "{result}"
    );
}

#[test]
fn an_unreadable_skills_directory_is_said_and_the_other_layers_are_offered() {
    use std::os::unix::fs::PermissionsExt;
    let layers = Layers::new();
    good(
        &layers.operator(),
        "release",
        "How to cut a release",
        "body\n",
    );
    let root = rustix::process::geteuid().is_root();
    if root {
        // Root reads a directory of mode 000 all the same: a file where the
        // directory should be cannot be read as one by anybody.
        std::fs::remove_dir_all(layers.operator()).unwrap();
        std::fs::write(layers.operator(), "release").unwrap();
    } else {
        std::fs::set_permissions(layers.operator(), std::fs::Permissions::from_mode(0o000))
            .unwrap();
    }
    let project = TempProject::git();
    good(
        &project.join(".chock/skills"),
        "layout",
        "Where the code lives",
        "body\n",
    );
    project.commit_all("a skill");
    let fake = model(&layers, &[]);
    let out = layers
        .chock()
        .arg("run")
        .arg(project.path())
        .arg("hi")
        .output()
        .unwrap();
    if !root {
        std::fs::set_permissions(layers.operator(), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    assert_success(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("the operator skills directory").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("cannot be read"), "{stderr}");
    let instructions = first_instructions(&fake);
    assert!(
        instructions.contains("- layout (project)"),
        "{instructions}"
    );
    assert!(!instructions.contains("release"), "{instructions}");
}

#[test]
fn chock_skills_lists_each_layer_and_the_skill_a_name_in_an_earlier_layer_hides() {
    let layers = Layers::new();
    good(
        &layers.operator(),
        "release",
        "The operator's release",
        "b\n",
    );
    good(
        layers.packaged.path(),
        "release",
        "A package's release",
        "b\n",
    );
    good(
        layers.packaged.path(),
        "lint",
        "The house lint rules",
        "b\n",
    );
    let project = TempProject::git();
    good(
        &project.join(".chock/skills"),
        "layout",
        "Where the code lives",
        "b\n",
    );
    let out = layers
        .chock()
        .args(["skills", "--project"])
        .arg(project.path())
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "operator:");
    assert!(
        lines[1].starts_with("  release  The operator's release  ("),
        "{text}"
    );
    assert_eq!(lines[2], "project:");
    assert!(
        lines[3].starts_with("  layout  Where the code lives"),
        "{text}"
    );
    assert_eq!(lines[4], "packaged:");
    assert!(
        lines[5].starts_with("  lint  The house lint rules"),
        "{text}"
    );
    assert!(
        lines[6].starts_with("  release  A package's release")
            && lines[6].ends_with("hidden: an earlier layer has a skill of this name"),
        "{text}"
    );

    let out = layers
        .chock()
        .args(["skills", "--json", "--project"])
        .arg(project.path())
        .output()
        .unwrap();
    assert_success(&out);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names = |key: &str| -> Vec<(String, String)> {
        report[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().unwrap().to_owned(),
                    s["layer"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let pair = |n: &str, l: &str| (n.to_owned(), l.to_owned());
    assert_eq!(
        names("offered"),
        [
            pair("release", "operator"),
            pair("layout", "project"),
            pair("lint", "packaged")
        ]
    );
    assert_eq!(names("hidden"), [pair("release", "packaged")]);
}
