//! Bounds a model that keeps repeating a call that fails. Weaker models
//! answer an error by sending the very same call again; without a bound a
//! session would spin until its budget ran out. The guard watches failing
//! calls in a row: the same tool with the same arguments (compared as JSON,
//! so key order and spacing do not matter) first earns a warning appended to
//! the result the model reads, then stops the turn.

/// What the loop does after recording a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Carry on as usual.
    Continue,
    /// Carry on, adding this note to the result the model reads.
    Warn(String),
    /// End the turn: the model is stuck. The text says why, for the log and
    /// the person.
    Stop(String),
}

/// Counts identical failing calls in a row.
#[derive(Debug, Clone)]
pub(crate) struct RepeatGuard {
    limit: usize,
    last: Option<(String, String)>,
    count: usize,
}

/// Identical failures in a row that end a turn, unless configured otherwise.
pub(crate) const DEFAULT_REPEAT_LIMIT: usize = 3;

impl Default for RepeatGuard {
    fn default() -> Self {
        Self::new(DEFAULT_REPEAT_LIMIT)
    }
}

impl RepeatGuard {
    /// A guard that stops at the `limit`th identical failure in a row
    /// (at least 2, so one retry is always allowed).
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit: limit.max(2),
            last: None,
            count: 0,
        }
    }

    /// Records one call's outcome.
    pub(crate) fn record(&mut self, tool: &str, arguments: &str, failed: bool) -> Verdict {
        if !failed {
            self.last = None;
            self.count = 0;
            return Verdict::Continue;
        }
        let key = (tool.to_owned(), canonical(arguments));
        if self.last.as_ref() == Some(&key) {
            self.count += 1;
        } else {
            self.last = Some(key);
            self.count = 1;
        }
        if self.count >= self.limit {
            Verdict::Stop(format!(
                "the model called {tool} with the same arguments {} times in a row and it failed each time; the turn was stopped",
                self.count
            ))
        } else if self.count + 1 == self.limit {
            let times = match self.count {
                1 => "once".to_owned(),
                n => format!("{n} times"),
            };
            Verdict::Warn(format!(
                "This exact call has now failed {times}. Repeating it will end the turn: change the arguments or try another approach."
            ))
        } else {
            Verdict::Continue
        }
    }
}

fn canonical(arguments: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .map_or_else(|_| arguments.trim().to_owned(), |value| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_failing_call_warns_then_stops() {
        let mut guard = RepeatGuard::new(3);
        assert_eq!(
            guard.record("read_file", r#"{"path":"a"}"#, true),
            Verdict::Continue
        );
        assert!(matches!(
            guard.record("read_file", r#"{ "path": "a" }"#, true),
            Verdict::Warn(_)
        ));
        assert_eq!(
            guard.record("read_file", r#"{"path":"a"}"#, true),
            Verdict::Stop(
                "the model called read_file with the same arguments 3 times in a row and it failed each time; the turn was stopped"
                    .to_owned()
            )
        );
    }

    #[test]
    fn a_success_or_a_different_call_starts_the_count_again() {
        let mut guard = RepeatGuard::new(2);
        assert!(matches!(guard.record("grep", "{", true), Verdict::Warn(_)));
        assert_eq!(guard.record("grep", "{\"pattern\":\"x\"}", true), Verdict::Warn(
            "This exact call has now failed once. Repeating it will end the turn: change the arguments or try another approach.".to_owned()
        ));
        assert_eq!(
            guard.record("grep", "{\"pattern\":\"x\"}", false),
            Verdict::Continue
        );
        assert!(matches!(
            guard.record("grep", "{\"pattern\":\"x\"}", true),
            Verdict::Warn(_)
        ));
        assert!(matches!(
            guard.record("grep", "{\"pattern\":\"x\"}", true),
            Verdict::Stop(_)
        ));
    }
}
