//! The engine with real modules, written as WebAssembly text in
//! tests/plugins and compiled by the wat crate: what a call answers, what
//! it logs, and each bound and refusal.

#![expect(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use chock_plugins::{Bounds, CallError, Capability, Engine, Files, LoadError, Manifest};

/// Files in memory, as a workspace would give them.
#[derive(Default)]
struct Memory(RefCell<HashMap<String, Vec<u8>>>);

impl Files for Memory {
    fn read(&self, path: &str) -> Result<Vec<u8>, String> {
        self.0
            .borrow()
            .get(path)
            .cloned()
            .ok_or_else(|| "no such file".to_owned())
    }
    fn write(&self, path: &str, data: &[u8]) -> Result<(), String> {
        self.0.borrow_mut().insert(path.to_owned(), data.to_vec());
        Ok(())
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/plugins")
        .join(format!("{name}.wat"))
}

/// `name`'s module compiled into `dir`, and a manifest naming `tools`.
fn plugin(dir: &Path, name: &str, tools: &[(&str, &[&str])]) -> (PathBuf, Manifest) {
    let wasm = wat::parse_file(fixture(name)).unwrap();
    let path = dir.join(format!("{name}.wasm"));
    std::fs::write(&path, wasm).unwrap();
    let tools: Vec<serde_json::Value> = tools
        .iter()
        .map(|(tool, caps)| serde_json::json!({"name": tool, "capabilities": caps}))
        .collect();
    let manifest = Manifest::parse(
        &serde_json::json!({"name": name, "version": "1.0.0", "module": format!("{name}.wasm"), "tools": tools})
            .to_string(),
    )
    .unwrap();
    (path, manifest)
}

fn caps(list: &[Capability]) -> BTreeSet<Capability> {
    list.iter().copied().collect()
}

#[test]
fn a_tool_answers_its_text_and_what_it_logged() {
    let dir = tempfile::tempdir().unwrap();
    let (path, manifest) = plugin(dir.path(), "hello", &[("greet", &["log"])]);
    let engine = Engine::new(None).unwrap();
    let module = engine.module(&path, &manifest).unwrap();
    let mut instance = engine
        .instantiate(
            &module,
            &caps(&[Capability::Log]),
            Rc::new(Memory::default()),
            Bounds::default(),
        )
        .unwrap();
    let called = instance.call("greet", r#"{"who":"ada"}"#);
    assert_eq!(
        called.result.unwrap(),
        r#"hello from the plugin, given {"who":"ada"}"#
    );
    assert_eq!(called.said, ["the hello plugin was called"]);
    // The instance lives on: a second call answers too.
    assert!(instance.call("greet", "{}").result.is_ok());
}

#[test]
fn a_loop_a_bad_result_and_a_grown_memory_are_each_bounded_and_the_instance_carries_on() {
    let dir = tempfile::tempdir().unwrap();
    let (path, manifest) = plugin(
        dir.path(),
        "hello",
        &[
            ("greet", &["log"]),
            ("spin", &[]),
            ("garbage", &[]),
            ("huge", &[]),
            ("grow", &[]),
        ],
    );
    let engine = Engine::new(None).unwrap();
    let module = engine.module(&path, &manifest).unwrap();
    let bounds = Bounds {
        fuel: 5_000_000,
        ..Bounds::default()
    };
    let mut instance = engine
        .instantiate(
            &module,
            &caps(&[Capability::Log]),
            Rc::new(Memory::default()),
            bounds,
        )
        .unwrap();
    assert_eq!(
        instance.call("spin", "{}").result,
        Err(CallError::OutOfFuel(5_000_000))
    );
    assert_eq!(
        instance.call("garbage", "{}").result,
        Err(CallError::NotText)
    );
    assert!(matches!(
        instance.call("huge", "{}").result,
        Err(CallError::TooLong(0x7fff_ffff, _))
    ));
    let grown = instance.call("grow", "{}").result.unwrap_err();
    assert!(
        matches!(grown, CallError::Trapped(ref why) if why.contains("unreachable")),
        "{grown:?}"
    );
    assert!(instance.call("greet", "{}").result.is_ok());
}

#[test]
fn a_module_that_imports_a_host_function_it_was_not_given_is_never_instantiated() {
    let dir = tempfile::tempdir().unwrap();
    let (path, manifest) = plugin(dir.path(), "sneaky", &[("peek", &["log"])]);
    let engine = Engine::new(None).unwrap();
    let module = engine.module(&path, &manifest).unwrap();
    let err = engine
        .instantiate(
            &module,
            &caps(&[Capability::Log]),
            Rc::new(Memory::default()),
            Bounds::default(),
        )
        .unwrap_err();
    assert_eq!(
        err,
        LoadError::Instantiate(
            "it imports chock.fs_read, the host function of the capability fs.read, which no offered tool of it was allowed".to_owned()
        )
    );
}

#[test]
fn a_module_that_is_not_webassembly_or_not_its_manifests_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (path, manifest) = plugin(dir.path(), "hello", &[("greet", &["log"]), ("absent", &[])]);
    let engine = Engine::new(None).unwrap();
    let err = engine.module(&path, &manifest).unwrap_err().to_string();
    assert!(
        err.contains("does not match its manifest") && err.contains("exports no tool.absent"),
        "{err}"
    );
    let text = dir.path().join("text.wasm");
    std::fs::write(&text, "(module)").unwrap();
    let err = engine.module(&text, &manifest).unwrap_err().to_string();
    assert!(err.contains("is not a WebAssembly module"), "{err}");
    let mut broken = wat::parse_file(fixture("hello")).unwrap();
    broken.truncate(broken.len() / 2);
    std::fs::write(&text, broken).unwrap();
    let err = engine.module(&text, &manifest).unwrap_err().to_string();
    assert!(err.contains("is not a WebAssembly module"), "{err}");
}

#[test]
fn files_are_read_and_written_through_the_host_alone() {
    let dir = tempfile::tempdir().unwrap();
    let files = Rc::new(Memory::default());
    files.write("notes.txt", b"remember the milk").unwrap();
    let engine = Engine::new(None).unwrap();
    let (path, manifest) = plugin(dir.path(), "notes", &[("read_notes", &["fs.read"])]);
    let module = engine.module(&path, &manifest).unwrap();
    let mut notes = engine
        .instantiate(
            &module,
            &caps(&[Capability::FsRead]),
            files.clone(),
            Bounds::default(),
        )
        .unwrap();
    assert_eq!(
        notes.call("read_notes", "{}").result.unwrap(),
        "remember the milk"
    );
    let (path, manifest) = plugin(dir.path(), "writer", &[("save", &["fs.write"])]);
    let module = engine.module(&path, &manifest).unwrap();
    let mut writer = engine
        .instantiate(
            &module,
            &caps(&[Capability::FsWrite]),
            files.clone(),
            Bounds::default(),
        )
        .unwrap();
    assert_eq!(
        writer.call("save", "written by a plugin").result.unwrap(),
        "saved"
    );
    assert_eq!(files.read("out.txt").unwrap(), b"written by a plugin");
}

#[test]
fn a_compiled_module_is_kept_and_loaded_by_the_next_engine() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let (path, manifest) = plugin(dir.path(), "hello", &[("greet", &["log"])]);
    Engine::new(Some(cache.clone()))
        .unwrap()
        .module(&path, &manifest)
        .unwrap();
    let kept: Vec<_> = std::fs::read_dir(&cache).unwrap().flatten().collect();
    assert_eq!(kept.len(), 1);
    assert!(kept[0].file_name().to_string_lossy().ends_with(".cwasm"));
    // A cached file that is not a compiled module is compiled over.
    std::fs::write(kept[0].path(), b"not compiled code").unwrap();
    let engine = Engine::new(Some(cache)).unwrap();
    let module = engine.module(&path, &manifest).unwrap();
    let mut instance = engine
        .instantiate(
            &module,
            &caps(&[Capability::Log]),
            Rc::new(Memory::default()),
            Bounds::default(),
        )
        .unwrap();
    assert!(instance.call("greet", "{}").result.is_ok());
}
