//! Polling with a deadline. Tests wait for a condition, never for a fixed
//! time: the poll starts fast (1 ms) and backs off to 50 ms, so a quick
//! machine finishes quickly and a slow one still gets the whole deadline.

use std::time::{Duration, Instant};

const FIRST_POLL: Duration = Duration::from_millis(1);
const LONGEST_POLL: Duration = Duration::from_millis(50);

/// Calls `probe` until it returns `Some`, or panics naming `what` once
/// `within` has passed.
pub fn wait_for<T>(within: Duration, what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    let mut pause = FIRST_POLL;
    loop {
        if let Some(found) = probe() {
            return found;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {within:?} waiting for {what}");
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(LONGEST_POLL);
    }
}

/// [`wait_for`] for async tests: sleeps on the tokio timer so the runtime it
/// runs on (often a `current_thread` one) keeps driving other tasks.
pub async fn wait_for_async<T>(
    within: Duration,
    what: &str,
    mut probe: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + within;
    let mut pause = FIRST_POLL;
    loop {
        if let Some(found) = probe() {
            return found;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {within:?} waiting for {what}");
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(LONGEST_POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_the_first_value_the_probe_finds() {
        let mut calls = 0;
        let got = wait_for(Duration::from_secs(5), "the third call", || {
            calls += 1;
            (calls == 3).then_some(calls)
        });
        assert_eq!(got, 3);
    }

    #[test]
    #[should_panic(expected = "timed out after 20ms waiting for nothing")]
    fn panics_with_what_it_waited_for() {
        wait_for::<()>(Duration::from_millis(20), "nothing", || None);
    }
}
