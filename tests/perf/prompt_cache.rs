//! `prompt_cache`: a 30-call session's input tokens billed with Anthropic
//! prompt caching (the default) against without (`.prompt_cache = false`),
//! on the fake model's billing, which is modelled on the API's. Prints the
//! figures docs/performance.md quotes.

use std::path::Path;
use std::process::Command;

#[path = "cache_session.rs"]
mod cache_session;

fn chock(state: &Path) -> Command {
    let mut command = Command::new(super::chock_bin());
    command
        .env("CHOCK_STATE_DIR", state)
        .env("XDG_CONFIG_HOME", state.join("config"))
        .env_remove("CHOCK_SESSION")
        .env_remove("CHOCK_DAEMON");
    command
}

#[test]
#[ignore = "a measurement: run with --ignored --nocapture"]
fn prompt_cache() {
    let cached = cache_session::billed_session(chock, true);
    let uncached = cache_session::billed_session(chock, false);
    let prompt: u64 = cached.iter().map(chock_testkit::Billing::prompt).sum();
    let prompt_off: u64 = uncached.iter().map(chock_testkit::Billing::prompt).sum();
    let read: u64 = cached.iter().map(|b| b.cache_read).sum();
    let written: u64 = cached.iter().map(|b| b.cache_write).sum();
    let billed = cache_session::billed_input(&cached);
    let billed_off = cache_session::billed_input(&uncached);
    println!("prompt_cache: {} model calls", cache_session::CALLS);
    println!("  prompt tokens sent: {prompt} with caching, {prompt_off} without");
    println!(
        "  with caching: {read} read from the cache, {written} written, {} uncached",
        prompt - read - written
    );
    println!(
        "  read from the cache: {:.1}% of all input, {:.1}% from the fourth call on",
        100.0 * cache_session::read_share(&cached),
        100.0 * cache_session::read_share(&cached[3..])
    );
    for (i, b) in cached.iter().enumerate().take(5) {
        println!(
            "  call {:2}: read {:6} write {:5} uncached {:4}",
            i + 1,
            b.cache_read,
            b.cache_write,
            b.input
        );
    }
    println!(
        "  input billed (reads 0.1x, writes 1.25x): {billed:.0} with caching, {billed_off:.0} without: {:.2}x, {:.1}% less",
        billed_off / billed,
        100.0 * (1.0 - billed / billed_off)
    );
}
