//! Loading the three files from disk: absent files are absent, broken ones
//! stop the session (project, operator) or refuse everything (org), and
//! nothing on disk is changed by a failed load.

use std::path::{Path, PathBuf};

use chock_policy::{Action, Decision, LayerKind, LoadError, Policy, Sources};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn sources(dir: &Path) -> Sources {
    Sources {
        org: Some(dir.join("org.zon")),
        org_required: false,
        operator: Some(dir.join("config.zon")),
        project: Some(dir.join("chock.zon")),
    }
}

fn a(name: &str) -> Action {
    Action::parse(name).unwrap()
}

#[test]
fn no_files_at_all_is_the_shipped_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let p = Policy::load_from(&sources(dir.path())).unwrap();
    assert_eq!(p.decision(&a("call.read_file")), Decision::Allow);
    assert_eq!(p.decision(&a("net.fetch.org.ziglang.docs")), Decision::Ask);
}

#[test]
fn three_layers_fold_from_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("org.zon"), dir.path().join("org.zon")).unwrap();
    std::fs::copy(fixture("operator.zon"), dir.path().join("config.zon")).unwrap();
    std::fs::copy(fixture("reference.zon"), dir.path().join("chock.zon")).unwrap();
    let p = Policy::load_from(&sources(dir.path())).unwrap();
    let v = p.decide(&a("net.connect.com.github"));
    assert_eq!(
        (v.decision, v.layer),
        (Decision::Deny, LayerKind::Operator),
        "{}",
        v.render()
    );
    let v = p.decide(&a("lsp.zls"));
    assert_eq!((v.decision, v.layer), (Decision::Deny, LayerKind::Org));
    assert_eq!(
        v.rule.as_ref().unwrap().file.as_deref(),
        Some(dir.path().join("org.zon").as_path())
    );
    assert_eq!(v.rule.as_ref().unwrap().line, Some(5));
    let v = p.decide(&a("net.fetch.org.ziglang.docs"));
    assert_eq!((v.decision, v.layer), (Decision::Allow, LayerKind::Project));
    assert_eq!(p.published_ports(), vec![3000]);
    assert!(p.could_permit("net.serve"));
    assert!(
        !p.wants_router(),
        "the operator denies every net.connect host"
    );
    assert_eq!(p.net_background_mode(), chock_policy::NetMode::None);
}

#[test]
fn a_broken_project_file_stops_the_session_and_is_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chock.zon");
    std::fs::copy(fixture("problems.zon"), &path).unwrap();
    let before = std::fs::read(&path).unwrap();
    let err = Policy::load_from(&sources(dir.path())).unwrap_err();
    let LoadError::Invalid { problems, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(problems.len(), 11);
    let text = err.to_string();
    assert!(
        text.contains(&format!("{}:6:56: unknown decision", path.display())),
        "{text}"
    );
    assert!(text.contains("chock policy check"), "{text}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_broken_operator_file_stops_the_session() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.zon"),
        ".{ .policy = .{ .rules = .{ .{ .decision = .perhaps } } } }",
    )
    .unwrap();
    let err = Policy::load_from(&sources(dir.path())).unwrap_err();
    assert!(
        err.to_string().contains("1:44: unknown decision `perhaps`"),
        "{err}"
    );
}

#[test]
fn an_unreadable_project_file_is_an_error_not_an_absence() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("chock.zon")).unwrap();
    let err = Policy::load_from(&sources(dir.path())).unwrap_err();
    assert!(matches!(err, LoadError::Read { .. }), "{err}");
    assert!(
        err.to_string().contains("cannot read the policy file"),
        "{err}"
    );
}

#[test]
fn a_non_utf8_project_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("chock.zon"), [0xff, 0xfe, b'.', b'{', b'}']).unwrap();
    assert!(Policy::load_from(&sources(dir.path())).is_err());
}

#[test]
fn an_org_bundle_that_cannot_be_used_refuses_everything() {
    for broken in ["dir", "parse", "problem", "required-missing"] {
        let dir = tempfile::tempdir().unwrap();
        let org = dir.path().join("org.zon");
        let mut s = sources(dir.path());
        match broken {
            "dir" => std::fs::create_dir(&org).unwrap(),
            "parse" => std::fs::write(&org, ".{ .policy = ").unwrap(),
            "problem" => std::fs::write(
                &org,
                ".{ .policy = .{ .rules = .{ .{ .action = \"lsp.*\", .decision = .never } } } }",
            )
            .unwrap(),
            _ => s.org_required = true,
        }
        std::fs::write(
            dir.path().join("chock.zon"),
            ".{ .policy = .{ .rules = .{ .{ .decision = .allow } } } }",
        )
        .unwrap();
        let p = Policy::load_from(&s).unwrap();
        for name in ["call.read_file", "workspace.integrate", "provider.openai"] {
            let v = p.decide(&a(name));
            assert_eq!(
                (v.decision, v.layer),
                (Decision::Deny, LayerKind::Org),
                "{broken}: {name}"
            );
            assert!(
                v.notes.iter().any(|n| n.contains("could not be read")),
                "{broken}: {}",
                v.render()
            );
            assert!(v.render().contains(&org.display().to_string()), "{broken}");
        }
    }
}

#[test]
fn an_absent_org_bundle_at_the_default_path_is_no_ceiling() {
    let dir = tempfile::tempdir().unwrap();
    let p = Policy::load_from(&sources(dir.path())).unwrap();
    assert_eq!(p.decide(&a("call.read_file")).layer, LayerKind::Default);
}

#[test]
fn discover_reads_the_environment_paths() {
    let s = Sources::discover(Path::new("/p"));
    assert_eq!(s.project.as_deref(), Some(Path::new("/p/chock.zon")));
    assert!(s.org.is_some());
}
