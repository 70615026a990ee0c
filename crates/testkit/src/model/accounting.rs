//! Usage accounting modelled on the APIs' billing, for tests and the
//! prompt-caching benchmark.
//!
//! Tokens are counted as a quarter of the bytes of each piece's JSON (a
//! tokenizer is not the point; the same count on both sides of a comparison
//! is). Anthropic's prompt cache, as its documentation describes it: the
//! prompt is the tools, then the system blocks, then the messages' content
//! blocks, in that order; a block carrying `cache_control` is a breakpoint;
//! a call reads the longest prefix an earlier call wrote (the marker itself
//! is not part of the prefix), writes the prefix up to its last breakpoint,
//! and a prefix shorter than 1024 tokens is never cached. OpenAI's
//! automatic caching: a prompt of at least 1024 tokens reads the longest
//! prefix it shares with an earlier prompt, in steps of 128 tokens.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

use super::Wire;

/// The least prefix either API caches.
const MIN_CACHED: u64 = 1024;
/// OpenAI caches prefixes in steps of this many tokens.
const OPENAI_STEP: u64 = 128;

/// What one call was billed: every prompt token falls in exactly one of
/// `input` (uncached), `cache_read` and `cache_write`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Billing {
    pub input: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Billing {
    /// Every prompt token.
    pub fn prompt(&self) -> u64 {
        self.input + self.cache_read + self.cache_write
    }
}

/// A quarter of the bytes, rounded up.
pub fn tokens_of(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

#[derive(Debug, Default)]
pub(super) struct Accounts {
    /// Anthropic: prefix hash -> its tokens.
    cached: HashMap<u64, u64>,
    /// OpenAI: the prompts seen, as text.
    prompts: Vec<String>,
    pub(super) billed: Vec<Billing>,
}

impl Accounts {
    /// Bills one request.
    pub(super) fn bill(&mut self, wire: Wire, body: &Value) -> Billing {
        let billing = match wire {
            Wire::Anthropic => self.anthropic(body),
            Wire::OpenAi | Wire::Responses => self.openai(body),
        };
        self.billed.push(billing);
        billing
    }

    fn anthropic(&mut self, body: &Value) -> Billing {
        let blocks = anthropic_blocks(body);
        let mut prefix = Vec::with_capacity(blocks.len());
        let mut hasher = DefaultHasher::new();
        let mut total = 0;
        for (text, _) in &blocks {
            text.hash(&mut hasher);
            total += tokens_of(text);
            prefix.push((hasher.finish(), total));
        }
        let read = prefix
            .iter()
            .rev()
            .find(|(hash, _)| self.cached.contains_key(hash))
            .map_or(0, |(_, tokens)| *tokens);
        let mut written_to = read;
        for (i, (_, marked)) in blocks.iter().enumerate() {
            let (hash, tokens) = prefix[i];
            if *marked && tokens >= MIN_CACHED {
                self.cached.insert(hash, tokens);
                written_to = written_to.max(tokens);
            }
        }
        Billing {
            input: total - written_to,
            cache_read: read,
            cache_write: written_to - read,
        }
    }

    fn openai(&mut self, body: &Value) -> Billing {
        let prompt = openai_prompt(body);
        let total = tokens_of(&prompt);
        let shared = self
            .prompts
            .iter()
            .map(|earlier| common_prefix(earlier, &prompt))
            .max()
            .unwrap_or(0);
        let shared_tokens = (shared as u64) / 4;
        let read = if total >= MIN_CACHED && shared_tokens >= MIN_CACHED {
            shared_tokens / OPENAI_STEP * OPENAI_STEP
        } else {
            0
        };
        self.prompts.push(prompt);
        Billing {
            input: total - read,
            cache_read: read,
            cache_write: 0,
        }
    }
}

/// The prompt's pieces in cache order, each as its JSON without a
/// `cache_control` marker, and whether it carried one.
fn anthropic_blocks(body: &Value) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut push = |value: &Value| {
        let mut value = value.clone();
        let marked = value
            .as_object_mut()
            .and_then(|object| object.remove("cache_control"))
            .is_some();
        out.push((value.to_string(), marked));
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        push(tool);
    }
    match &body["system"] {
        Value::String(text) => push(&Value::from(text.clone())),
        Value::Array(blocks) => blocks.iter().for_each(&mut push),
        _ => {}
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        push(&serde_json::json!({"role": message["role"]}));
        match &message["content"] {
            Value::Array(blocks) => blocks.iter().for_each(&mut push),
            other => push(other),
        }
    }
    out
}

/// What an OpenAI-compatible server renders into its prompt: the tools,
/// the instructions, the messages or input, in order.
fn openai_prompt(body: &Value) -> String {
    let mut out = String::new();
    for field in ["tools", "instructions", "messages", "input"] {
        match &body[field] {
            Value::Array(items) => {
                for item in items {
                    out.push_str(&item.to_string());
                }
            }
            Value::Null => {}
            other => out.push_str(&other.to_string()),
        }
    }
    out
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(messages: usize, marked: bool) -> Value {
        let big = "x".repeat(8000);
        let mut blocks: Vec<Value> = (0..messages)
            .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": [{"type": "text", "text": format!("{i}{big}")}]}))
            .collect();
        if marked && let Some(last) = blocks.last_mut() {
            last["content"][0]["cache_control"] = json!({"type": "ephemeral"});
        }
        json!({"messages": blocks})
    }

    #[test]
    fn a_moving_breakpoint_reads_what_the_call_before_wrote() {
        let mut accounts = Accounts::default();
        let first = accounts.bill(Wire::Anthropic, &request(1, true));
        assert_eq!((first.cache_read, first.input), (0, 0));
        assert!(first.cache_write > MIN_CACHED);
        let second = accounts.bill(Wire::Anthropic, &request(3, true));
        assert_eq!(second.cache_read, first.cache_write);
        assert!(second.cache_write > 0);
        let unmarked = Accounts::default().bill(Wire::Anthropic, &request(3, false));
        assert_eq!(unmarked.cache_read + unmarked.cache_write, 0);
        assert_eq!(unmarked.input, second.prompt());
    }

    #[test]
    fn openai_reads_a_shared_prefix_in_steps() {
        let mut accounts = Accounts::default();
        let first = accounts.bill(Wire::OpenAi, &request(1, false));
        assert_eq!(first.cache_read, 0);
        let second = accounts.bill(Wire::OpenAi, &request(3, false));
        assert!(second.cache_read >= MIN_CACHED);
        assert_eq!(second.cache_read % OPENAI_STEP, 0);
        assert!(second.cache_read <= first.prompt());
    }
}
