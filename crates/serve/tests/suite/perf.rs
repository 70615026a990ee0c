//! The figures docs/performance.md records under "Serve": the page's first
//! load size, and the time to the first event of a 10,000-event session as
//! the page asks for it (the session's row, then a watch from its last
//! page). Ignored by default; run with
//! `cargo test -p chock-serve --release --test all -- --ignored --nocapture perf`.

use std::time::Instant;

use super::{Harness, HasTestDirs, S1};

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement, not a check: run by hand for docs/performance.md"]
async fn perf_first_load_and_time_to_first_event() {
    let h = Harness::boot().await;
    let mut log = h.live_log(S1);
    let text = "x".repeat(200);
    for _ in 1..10_000 {
        log.say(&text);
    }
    println!(
        "first load: {} bytes (html + js + css)",
        chock_serve::page::FIRST_LOAD_BYTES
    );
    let mut ttfe = Vec::new();
    let mut everything = Vec::new();
    for _ in 0..20 {
        let began = Instant::now();
        let row = h.row(S1).await;
        let events = row["events"].as_u64().unwrap();
        assert_eq!(events, 10_000);
        let after = events.saturating_sub(chock_serve::PAGE);
        let mut sse = h.watch(S1, after).await;
        sse.next().await.unwrap();
        let first = sse.next_log().await;
        ttfe.push(began.elapsed());
        assert_eq!(first.id, Some(after + 1));
        drop(sse);
        // For comparison: the whole log from the start, as a page that did
        // not page would ask for it.
        let began = Instant::now();
        let mut sse = h.watch(S1, 0).await;
        sse.next().await.unwrap();
        for _ in 0..10_000 {
            sse.next_log().await;
        }
        everything.push(began.elapsed());
    }
    ttfe.sort();
    everything.sort();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    println!(
        "time to first event (row + watch from the last page of 200), 20 runs: median {:.2} ms, max {:.2} ms",
        ms(ttfe[10]),
        ms(ttfe[19])
    );
    println!(
        "all 10,000 events through the watch from id 0, 20 runs: median {:.1} ms, max {:.1} ms",
        ms(everything[10]),
        ms(everything[19])
    );
    drop(log);
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement, not a check: run by hand for docs/performance.md"]
async fn perf_time_to_first_event_in_the_browser() {
    let mut h = Harness::boot().await;
    let mut log = h.live_log(S1);
    let text = "x".repeat(200);
    for _ in 1..10_000 {
        log.say(&text);
    }
    let chock_control::Address::Tcp { port, .. } = h.start_serve(Some("127.0.0.1")).await else {
        panic!("serve listens on TCP when a host is named")
    };
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/browser/first-event.mjs");
    let out = tokio::process::Command::new("node")
        .arg(script)
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(h.project_text())
        .arg(S1)
        .arg("10")
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut ms: Vec<u64> = result["ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    ms.sort_unstable();
    let mut last: Vec<u64> = result["last_ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    last.sort_unstable();
    println!(
        "browser: navigation to first event on screen, 10 runs: median {} ms, max {} ms; \
         to the last card: median {} ms, max {} ms; \
         {} events shown; page transferred {} bytes",
        ms[5], ms[9], last[5], last[9], result["shown"], result["page_bytes"]
    );
    drop(log);
}

/// Time from an append to its card on screen with `SERVE_PAGES` (20)
/// pages open, each in a browser context of its own, for the page and, in
/// the same run, for a peer: the least page that shows the same stream
/// (one list item per event), which is what Chromium itself costs here.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement, not a check: run by hand for docs/performance.md"]
async fn perf_append_to_card_with_twenty_pages_open() {
    let mut h = Harness::boot().await;
    let mut log = h.live_log(S1);
    let text = "x".repeat(200);
    for _ in 1..1_000 {
        log.say(&text);
    }
    let chock_control::Address::Tcp { port, .. } = h.start_serve(Some("127.0.0.1")).await else {
        panic!("serve listens on TCP when a host is named")
    };
    // SERVE_PAGES sets another number of pages, to see how it scales.
    let pages: usize = std::env::var("SERVE_PAGES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    for kind in ["page", "peer", "page", "peer"] {
        let figures = appends_seen(&h, &mut log, port, pages, kind).await;
        let at = |ms: &[i64], q: f64| ms[((ms.len() - 1) as f64 * q) as usize];
        let ms = &figures["ms"];
        let arrived = &figures["arrived"];
        println!(
            "{kind}: append to card on screen, {pages} pages x {APPENDS} appends: p50 {} ms, p99 {} ms, max {} ms; \
             to the event in the page's script: p50 {} ms, p99 {} ms",
            at(ms, 0.5),
            at(ms, 0.99),
            ms[ms.len() - 1],
            at(arrived, 0.5),
            at(arrived, 0.99),
        );
    }
    drop(log);
}

const APPENDS: usize = 100;

/// One run of tests/browser/append-latency.mjs: `pages` pages of `kind`
/// open, then [`APPENDS`] appends, one every 20 ms as a busy session writes
/// them; the script's figures, each sorted.
async fn appends_seen(
    h: &Harness,
    log: &mut chock_testkit::LiveLog,
    port: u16,
    pages: usize,
    kind: &str,
) -> std::collections::HashMap<String, Vec<i64>> {
    use tokio::io::AsyncBufReadExt;
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/browser/append-latency.mjs");
    let mut child = tokio::process::Command::new("node")
        .arg(script)
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(h.project_text())
        .arg(S1)
        .arg(pages.to_string())
        .arg(APPENDS.to_string())
        .arg(kind)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = lines
        .next_line()
        .await
        .unwrap()
        .expect("the script's ready line");
    assert!(ready.starts_with("ready "), "{ready}");
    let text = "x".repeat(200);
    for _ in 0..APPENDS {
        log.say(&text);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let result = lines
        .next_line()
        .await
        .unwrap()
        .expect("the script's figures");
    assert!(child.wait().await.unwrap().success());
    let result: std::collections::HashMap<String, Vec<i64>> =
        serde_json::from_str(&result).unwrap();
    assert!(
        result["ms"].len() >= pages * APPENDS,
        "{} latencies",
        result["ms"].len()
    );
    result
}

/// The part of an append's way to the page that is Chock's own: the daemon
/// following the log and serve writing the event to each page's stream,
/// with `SERVE_PAGES` (20) watches open and no browser. The same appends
/// and spacing as [`perf_append_to_card_with_twenty_pages_open`], whose
/// figure less this one is the browser's.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement, not a check: run by hand for docs/performance.md"]
async fn perf_append_to_stream_with_twenty_watches() {
    let h = Harness::boot().await;
    let mut log = h.live_log(S1);
    let text = "x".repeat(200);
    for _ in 1..1_000 {
        log.say(&text);
    }
    let pages: usize = std::env::var("SERVE_PAGES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    const EVENTS: u64 = 100;
    let mut readers = Vec::new();
    for _ in 0..pages {
        // From the last event kept before the appends: 1,000 with the open.
        let mut sse = h.watch(S1, 1_000).await;
        readers.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            while (seen.len() as u64) < EVENTS {
                let event = sse.next().await.expect("the stream stays open");
                if event.event == "log" {
                    seen.push((event.id.unwrap(), Instant::now()));
                }
            }
            seen
        }));
    }
    // Let every watch reach the log's end before timing.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let mut appended = std::collections::HashMap::new();
    for n in 0..EVENTS {
        log.say(&text);
        appended.insert(1_001 + n, Instant::now());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let mut ms = Vec::new();
    for reader in readers {
        for (id, when) in reader.await.unwrap() {
            let at = appended[&id];
            ms.push(when.saturating_duration_since(at).as_secs_f64() * 1000.0);
        }
    }
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q) as usize];
    println!(
        "append to the event on the stream, {pages} watches x {EVENTS} appends: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        at(0.5),
        at(0.99),
        ms[ms.len() - 1]
    );
    drop(log);
}
