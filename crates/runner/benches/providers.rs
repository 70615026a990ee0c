//! One model call, start to stop, against the fake model on loopback: the
//! provider's own cost per turn (request building, HTTP, SSE decoding, JSON
//! per chunk, tool-call assembly), measured on the same `current_thread`
//! runtime `chock run` uses. The fake server runs on its own thread, so
//! its work is in the figure too; it is the same for both wire formats.

#![expect(clippy::unwrap_used, reason = "a benchmark that fails should stop")]

use std::path::Path;

use chock_runner::config::{HttpProviderConfig, ProviderConfig};
use chock_runner::provider::{Message, ModelRequest, Provider};
use chock_runner::tools;
use chock_testkit::{FakeModel, Reply, Turn};
use criterion::{Criterion, criterion_group, criterion_main};

const TURNS: usize = 100_000;

fn turn() -> Reply {
    // About 1000 characters of text in 4-character pieces (250 chunks), and
    // one tool call with its arguments in pieces too: a typical answer.
    Turn::text(&"word ".repeat(200))
        .call(
            "c1",
            "write_file",
            &serde_json::json!({"path": "src/lib.rs", "content": "x".repeat(400)}),
        )
        .pieces(4)
        .into()
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let messages = [Message::User { text: "go".into() }];
    let specs = tools::specs();
    let request = ModelRequest {
        model: "bench",
        system: "you are a benchmark",
        messages: &messages,
        tools: &specs,
    };
    for (name, anthropic) in [("openai", false), ("anthropic", true)] {
        let fake = FakeModel::start();
        for _ in 0..TURNS.min(20_000) {
            fake.push(turn());
        }
        let http = HttpProviderConfig {
            base_url: if anthropic {
                fake.url()
            } else {
                fake.openai_url()
            },
            ..HttpProviderConfig::default()
        };
        let config = if anthropic {
            ProviderConfig::Anthropic(http)
        } else {
            ProviderConfig::OpenAi(http)
        };
        let provider = Provider::new("bench", &config, Path::new("/")).unwrap();
        c.bench_function(
            &format!("{name}: one streamed turn, 250 text chunks + 1 tool call"),
            |b| {
                b.iter(|| {
                    runtime.block_on(async {
                        let turn = provider
                            .start(&request)
                            .await
                            .unwrap()
                            .collect(|_| {})
                            .await
                            .unwrap();
                        assert_eq!(turn.calls.len(), 1);
                    });
                });
            },
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench
}
criterion_main!(benches);
