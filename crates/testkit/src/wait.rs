//! Polling with a deadline. Tests wait for a condition, never for a fixed
//! time: the poll starts fast (1 ms) and backs off to 50 ms, so a quick
//! machine finishes quickly and a slow one still gets the whole deadline.

use std::time::{Duration, Instant};

const FIRST_POLL: Duration = Duration::from_millis(1);
const LONGEST_POLL: Duration = Duration::from_millis(50);

/// Calls `probe` until it returns `Some`, or panics naming `what` once
/// `within` has passed.
pub fn wait_for<T>(within: Duration, what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let mut polls = Polls::new(within, what);
    loop {
        if let Some(found) = probe() {
            return found;
        }
        std::thread::sleep(polls.next_pause());
    }
}

/// [`wait_for`] for async tests: sleeps on the tokio timer so the runtime it
/// runs on (often a `current_thread` one) keeps driving other tasks.
pub async fn wait_for_async<T>(
    within: Duration,
    what: &str,
    mut probe: impl FnMut() -> Option<T>,
) -> T {
    wait_for_async_probe(within, what, || std::future::ready(probe())).await
}

/// [`wait_for_async`] with a probe that is itself async, such as a request
/// to the server under test.
pub async fn wait_for_async_probe<T, F>(
    within: Duration,
    what: &str,
    mut probe: impl FnMut() -> F,
) -> T
where
    F: Future<Output = Option<T>>,
{
    let mut polls = Polls::new(within, what);
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        tokio::time::sleep(polls.next_pause()).await;
    }
}

/// The pauses between probes: doubling from [`FIRST_POLL`] up to
/// [`LONGEST_POLL`], until the deadline.
struct Polls<'a> {
    within: Duration,
    what: &'a str,
    deadline: Instant,
    pause: Duration,
}

impl<'a> Polls<'a> {
    fn new(within: Duration, what: &'a str) -> Self {
        Polls {
            within,
            what,
            deadline: Instant::now() + within,
            pause: FIRST_POLL,
        }
    }

    /// How long to pause before the next probe; panics once the deadline
    /// has passed.
    fn next_pause(&mut self) -> Duration {
        if Instant::now() >= self.deadline {
            panic!(
                "timed out after {:?} waiting for {}",
                self.within, self.what
            );
        }
        let pause = self.pause;
        self.pause = (pause * 2).min(LONGEST_POLL);
        pause
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
