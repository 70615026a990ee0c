//! A plugin's cost at a session's start and per call, beside the same work
//! done natively in the same run. Run with:
//!
//! ```text
//! cargo test --release -p chock-plugins --test bench -- --ignored --nocapture
//! ```
//!
//! The start is what a session pays for one plugin once an earlier session
//! compiled its module: an engine, the module loaded from the cache, an
//! instance linked with its host functions. The call is one `greet` (it
//! logs a line and answers a greeting with its arguments); the peer builds
//! the same answer and the same log line in Rust, so the ratio is what the
//! WebAssembly boundary (copying in, fuel, copying out) costs.

use std::collections::BTreeSet;
use std::hint::black_box;
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use chock_plugins::{Bounds, Capability, Engine, Manifest};

struct NoFiles;

impl chock_plugins::Files for NoFiles {
    fn read(&self, _: &str) -> Result<Vec<u8>, String> {
        Err("none".to_owned())
    }
    fn write(&self, _: &str, _: &[u8]) -> Result<(), String> {
        Err("none".to_owned())
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[test]
#[ignore = "a measurement: prints figures, run by hand"]
fn plugin_costs() {
    let dir = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/plugins/hello.wat");
    let module_path = dir.path().join("hello.wasm");
    std::fs::write(&module_path, wat::parse_file(source).unwrap()).unwrap();
    let manifest = Manifest::parse(
        r#"{"name": "hello", "version": "1.0.0", "module": "hello.wasm", "tools": [{"name": "greet", "capabilities": ["log"]}]}"#,
    )
    .unwrap();
    let cache = dir.path().join("cache");
    let caps: BTreeSet<Capability> = [Capability::Log].into_iter().collect();

    let cold = Instant::now();
    Engine::new(Some(cache.clone()))
        .unwrap()
        .module(&module_path, &manifest)
        .unwrap();
    let cold = cold.elapsed();

    let mut starts = Vec::new();
    for _ in 0..50 {
        let t = Instant::now();
        let engine = Engine::new(Some(cache.clone())).unwrap();
        let module = engine.module(&module_path, &manifest).unwrap();
        let instance = engine
            .instantiate(&module, &caps, Rc::new(NoFiles), Bounds::default())
            .unwrap();
        starts.push(t.elapsed());
        drop(instance);
    }

    let engine = Engine::new(Some(cache)).unwrap();
    let module = engine.module(&module_path, &manifest).unwrap();
    let mut instance = engine
        .instantiate(&module, &caps, Rc::new(NoFiles), Bounds::default())
        .unwrap();
    let arguments = r#"{"who":"ada"}"#;
    let calls: Vec<Duration> = (0..5000)
        .map(|_| {
            let t = Instant::now();
            let called = instance.call("greet", black_box(arguments));
            black_box(&called);
            t.elapsed()
        })
        .collect();
    let natives: Vec<Duration> = (0..5000)
        .map(|_| {
            let t = Instant::now();
            let said = vec!["the hello plugin was called".to_owned()];
            let answer = format!("hello from the plugin, given {}", black_box(arguments));
            black_box((&said, &answer));
            t.elapsed()
        })
        .collect();

    let (start, call, native) = (median(starts), median(calls), median(natives));
    println!(
        "compile, cold (once; kept for later sessions): {:.2} ms",
        cold.as_secs_f64() * 1e3
    );
    println!(
        "start from the cache (engine, module, instance), median of 50: {:.3} ms",
        start.as_secs_f64() * 1e3
    );
    println!(
        "one call (greet), median of 5000: {:.2} us",
        call.as_secs_f64() * 1e6
    );
    println!(
        "the same work in Rust, median of 5000: {:.2} us",
        native.as_secs_f64() * 1e6
    );
    println!(
        "the call's overhead: {:.2} us",
        (call.saturating_sub(native)).as_secs_f64() * 1e6
    );
}
