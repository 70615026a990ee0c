//! The router's benchmark, ignored by default (speed is never asserted):
//! a 100 MB download and a tiny request's latency, direct over the host's
//! loopback against curl inside a sandbox through the router, in the same
//! run. Run with:
//!
//!     cargo test --release -p chock-sandbox --test all -- --ignored --nocapture bench
//!
//! Figures are in docs/performance.md (`## Sandbox network`).

use std::io::{Read, Write};
use std::time::Instant;

use chock_sandbox::{Sandbox, SandboxSpec, Stdio};

use super::{Rt, config, foreground, http_server};

const SIZE: usize = 100 * 1024 * 1024;
const RUNS: usize = 11;
const PINGS: usize = 30;

/// Serves `SIZE` bytes at `/big` and nothing at any other path.
fn big_origin() -> u16 {
    http_server(|head, s| {
        let len = if head.starts_with(b"GET /big") {
            SIZE
        } else {
            0
        };
        let _ = s.write_all(
            format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        );
        let block = vec![b'x'; 1024 * 1024];
        let mut left = len;
        while left > 0 {
            let n = left.min(block.len());
            if s.write_all(&block[..n]).is_err() {
                return;
            }
            left -= n;
        }
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `curl -w` over `n` runs, in a sandbox with the router or directly:
/// returns the total times in seconds.
fn times(rt: &Rt, ws: &std::path::Path, sandboxed: bool, url: &str, n: usize) -> Vec<f64> {
    let script = format!(
        "for i in $(seq {n}); do curl -sS -o /dev/null -w '%{{time_total}}\\n' {url}; done"
    );
    let out = if sandboxed {
        let mut spec = SandboxSpec::new(ws).with_router();
        spec.stdout = Stdio::Piped;
        spec.stderr = Stdio::Inherit;
        spec.stdin = Stdio::Null;
        let sandbox = Sandbox::new(spec).unwrap();
        let mut child = sandbox.spawn(&["sh", "-c", &script]).unwrap();
        let link = child.take_router().unwrap();
        let proxy = chock_sandbox::net::Proxy::new(foreground(ws, None), config());
        let task = rt.serve_on(link.listener().unwrap(), proxy);
        let mut out = String::new();
        std::fs::File::from(child.stdout.take().unwrap())
            .read_to_string(&mut out)
            .unwrap();
        assert!(child.wait().unwrap().success());
        task.abort();
        out
    } else {
        let out = std::process::Command::new("sh")
            .args(["-c", &script])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    out.lines()
        .map(|l| l.trim().parse::<f64>().unwrap())
        .collect()
}

#[test]
#[ignore = "benchmark: run explicitly, see the module comment"]
fn bench_router_against_direct_loopback() {
    let ws = tempfile::tempdir().unwrap();
    let rt = Rt::new();
    let port = big_origin();
    let direct_big = format!("http://127.0.0.1:{port}/big");
    let routed_big = format!("http://allowed.test:{port}/big");
    let direct_small = format!("http://127.0.0.1:{port}/small");
    let routed_small = format!("http://allowed.test:{port}/small");
    let start = Instant::now();
    let mut d = Vec::new();
    let mut r = Vec::new();
    // Taking turns, so a busy moment of the machine hits both.
    for _ in 0..RUNS {
        d.extend(times(&rt, ws.path(), false, &direct_big, 1));
        r.extend(times(&rt, ws.path(), true, &routed_big, 1));
    }
    let mb = SIZE as f64 / 1e6;
    let (dt, rtm) = (median(d), median(r));
    let dl = median(times(&rt, ws.path(), false, &direct_small, PINGS));
    let rl = median(times(&rt, ws.path(), true, &routed_small, PINGS));
    println!("100 MB download, median of {RUNS}:");
    println!("  direct loopback: {dt:.3} s, {:.0} MB/s", mb / dt);
    println!("  through router:  {rtm:.3} s, {:.0} MB/s", mb / rtm);
    println!("  ratio (router / direct throughput): {:.2}", dt / rtm);
    println!("tiny request, median of {PINGS} (curl time_total):");
    println!("  direct loopback: {:.3} ms", dl * 1e3);
    println!(
        "  through router:  {:.3} ms (+{:.3} ms)",
        rl * 1e3,
        (rl - dl) * 1e3
    );
    println!("(whole run {:.1} s)", start.elapsed().as_secs_f64());
}
