//! Retrying a model call that failed before its first token: which failures
//! are worth another try (HTTP 429, 529, 500, 502, 503, 504, a connection
//! that failed or was reset before the answer began, a stream that broke
//! off before its first event), how long to wait (the server's
//! `retry-after` or `retry-after-ms`, else its rate-limit reset headers,
//! else exponential backoff with jitter), and the bounds: a count and a
//! total wait, both per instance in config.zon.
//!
//! The loop itself is the caller's ([`Retrier`] only decides), so the turn
//! can record each wait in the session log before it sleeps. A stream that
//! breaks off after tokens arrived is never retried: its text was already
//! shown, and the turn ends with the error instead (docs/providers.md).

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

use crate::error::ProviderError;
pub use crate::error::RetryHint;

/// Retries of one model call when config.zon sets no `.retries`.
pub const DEFAULT_RETRIES: u32 = 6;
/// Seconds one model call may wait between retries in all, when config.zon
/// sets no `.retry_wait_secs`.
pub const DEFAULT_RETRY_WAIT_SECS: u64 = 300;

/// The first backoff wait; each later one doubles, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(32);

/// Reads a failed response's hint from its headers.
pub(crate) fn hint_from_headers(headers: &reqwest::header::HeaderMap) -> RetryHint {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::trim)
    };
    let (retry_after, in_ms) = match (text("retry-after-ms"), text("retry-after")) {
        (Some(ms), _) => (Some(ms.to_owned()), true),
        (None, Some(after)) => (Some(after.to_owned()), false),
        (None, None) => (None, false),
    };
    let mut reset_in: Option<Duration> = None;
    let mut later = |wait: Duration| {
        reset_in = Some(reset_in.map_or(wait, |known| known.max(wait)));
    };
    for limit in ["requests", "tokens", "input-tokens", "output-tokens"] {
        // Anthropic: RFC 3339 times, for limits whose remainder is 0.
        if text(&format!("anthropic-ratelimit-{limit}-remaining")) == Some("0")
            && let Some(at) = text(&format!("anthropic-ratelimit-{limit}-reset"))
            && let Some(wait) = until_rfc3339(at)
        {
            later(wait);
        }
        // OpenAI: durations such as `6m0s` or `250ms`.
        if text(&format!("x-ratelimit-remaining-{limit}")) == Some("0")
            && let Some(wait) = text(&format!("x-ratelimit-reset-{limit}")).and_then(go_duration)
        {
            later(wait);
        }
    }
    RetryHint {
        retry_after,
        in_ms,
        reset_in,
    }
}

/// One wait before a retry, for the person and the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryWait {
    /// What went wrong, naming the instance: `rate limited by claude`.
    pub why: String,
    pub delay: Duration,
    /// Which retry this is (from 1) and how many may be made.
    pub attempt: u32,
    pub of: u32,
    /// What was made of the server's hint, when it was not taken as given.
    pub note: Option<String>,
}

impl std::fmt::Display for RetryWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}, retrying in {} ({} of {})",
            self.why,
            seconds(self.delay),
            self.attempt,
            self.of
        )?;
        if let Some(note) = &self.note {
            write!(f, "; {note}")?;
        }
        Ok(())
    }
}

/// The retry bounds of one instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub retries: u32,
    pub total_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            retries: DEFAULT_RETRIES,
            total_wait: Duration::from_secs(DEFAULT_RETRY_WAIT_SECS),
        }
    }
}

/// What to do after a failed attempt.
#[derive(Debug)]
pub enum Retry {
    /// Wait, then try again.
    After(RetryWait),
    /// Do not try again; the error to end the turn with.
    GiveUp(ProviderError),
}

/// Decides the retries of one model call.
#[derive(Debug)]
pub struct Retrier {
    instance: String,
    policy: RetryPolicy,
    made: u32,
    waited: Duration,
}

impl Retrier {
    pub(crate) fn new(instance: &str, policy: RetryPolicy) -> Self {
        Self {
            instance: instance.to_owned(),
            policy,
            made: 0,
            waited: Duration::ZERO,
        }
    }

    /// Retries made so far and the time waited for them.
    pub fn spent(&self) -> (u32, Duration) {
        (self.made, self.waited)
    }

    /// What to do after `err`, an attempt's failure before its first token.
    pub fn after(&mut self, err: ProviderError) -> Retry {
        let Some((why, hint)) = retryable(&self.instance, &err) else {
            return Retry::GiveUp(err);
        };
        let budget_left = self.policy.total_wait.saturating_sub(self.waited);
        if self.made >= self.policy.retries {
            return Retry::GiveUp(self.gave_up(err, None));
        }
        let attempt = self.made + 1;
        let (asked, mut note) = asked_wait(hint.as_ref());
        let delay = match asked {
            Some(asked) if asked > budget_left => {
                return Retry::GiveUp(self.gave_up(
                    err,
                    Some(format!(
                        "the server asked to wait {}, more than the {} left of .retry_wait_secs",
                        seconds(asked),
                        seconds(budget_left)
                    )),
                ));
            }
            Some(asked) => asked,
            None => {
                let backoff = backoff(attempt);
                if backoff > budget_left {
                    if budget_left.is_zero() {
                        return Retry::GiveUp(self.gave_up(err, None));
                    }
                    note.get_or_insert_with(|| {
                        format!(
                            "cut to the {} left of .retry_wait_secs",
                            seconds(budget_left)
                        )
                    });
                    budget_left
                } else {
                    backoff
                }
            }
        };
        self.made = attempt;
        self.waited += delay;
        Retry::After(RetryWait {
            why,
            delay,
            attempt,
            of: self.policy.retries,
            note,
        })
    }

    fn gave_up(&self, last: ProviderError, why: Option<String>) -> ProviderError {
        ProviderError::GaveUp {
            instance: self.instance.clone(),
            retries: self.made,
            waited: seconds(self.waited),
            why: why.map(|why| format!(" ({why})")).unwrap_or_default(),
            last: last.to_string(),
        }
    }
}

/// Whether `err` is worth another try, with how to say it and the server's
/// hint.
fn retryable(instance: &str, err: &ProviderError) -> Option<(String, Option<RetryHint>)> {
    match err {
        ProviderError::Status { status, hint, .. } => {
            let why = match status {
                429 => format!("rate limited by {instance}"),
                529 => format!("{instance} is overloaded (HTTP 529)"),
                500 | 502 | 503 | 504 => format!("{instance} answered HTTP {status}"),
                _ => return None,
            };
            Some((why, Some(hint.clone())))
        }
        ProviderError::Connect { .. } => Some((format!("cannot reach {instance}"), None)),
        ProviderError::Cut { .. } => Some((
            format!("the answer from {instance} broke off before its first token"),
            None,
        )),
        _ => None,
    }
}

/// The wait the server asked for, if any it gave can be read, and a note
/// when what it gave could not be taken as it was.
fn asked_wait(hint: Option<&RetryHint>) -> (Option<Duration>, Option<String>) {
    let Some(hint) = hint else {
        return (None, None);
    };
    if let Some(raw) = &hint.retry_after {
        match parse_retry_after(raw, hint.in_ms) {
            Some(wait) => return (Some(wait), None),
            None => {
                let what = if raw.trim().parse::<f64>().is_ok() {
                    "is not a wait (negative, or too large to be one)"
                } else {
                    "is neither seconds nor a date"
                };
                let note = format!(
                    "its retry-after '{}' {what}, so the wait is chosen here",
                    crate::error::excerpt(raw)
                );
                return (hint.reset_in, Some(note));
            }
        }
    }
    (hint.reset_in, None)
}

/// `retry-after` as seconds (a decimal is allowed) or an HTTP date;
/// `retry-after-ms` as milliseconds. A negative, non-finite or unreadable
/// value is `None`; a date in the past is no wait.
pub(crate) fn parse_retry_after(raw: &str, in_ms: bool) -> Option<Duration> {
    let raw = raw.trim();
    if let Ok(number) = raw.parse::<f64>() {
        let secs = if in_ms { number / 1000.0 } else { number };
        return (secs.is_finite() && secs >= 0.0)
            .then(|| Duration::try_from_secs_f64(secs).ok())
            .flatten();
    }
    if in_ms {
        return None;
    }
    let at = httpdate::parse_http_date(raw).ok()?;
    Some(
        at.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// How long until an RFC 3339 time; `None` when it does not parse.
fn until_rfc3339(text: &str) -> Option<Duration> {
    let at: jiff::Timestamp = text.parse().ok()?;
    let now = jiff::Timestamp::now();
    let secs = at.as_millisecond().saturating_sub(now.as_millisecond());
    Some(Duration::from_millis(u64::try_from(secs).unwrap_or(0)))
}

/// A duration as OpenAI's rate-limit headers write it: `1s`, `6m0s`,
/// `1h2m3.5s`, `250ms`.
pub(crate) fn go_duration(text: &str) -> Option<Duration> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let (scale, len) = if rest.starts_with("ms") {
            (0.001, 2)
        } else if rest.starts_with('h') {
            (3600.0, 1)
        } else if rest.starts_with('m') {
            (60.0, 1)
        } else if rest.starts_with('s') {
            (1.0, 1)
        } else {
            return None;
        };
        total += number * scale;
        rest = &rest[len..];
    }
    Duration::try_from_secs_f64(total).ok()
}

/// Exponential backoff with jitter: the `attempt`th wait lies between half
/// of and all of `FIRST_BACKOFF * 2^(attempt - 1)`, capped at `MAX_BACKOFF`.
fn backoff(attempt: u32) -> Duration {
    let full = FIRST_BACKOFF
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
        .min(MAX_BACKOFF);
    // A fresh std hasher is seeded at random: jitter without a crate.
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    let fraction = 0.5 + (random % 1000) as f64 / 2000.0;
    full.mul_f64(fraction)
}

/// A wait as a person reads it: `12 s`, `0.5 s`, `2 min 5 s`.
pub(crate) fn seconds(wait: Duration) -> String {
    let secs = wait.as_secs_f64();
    if secs < 10.0 && wait.subsec_millis() != 0 {
        return format!("{secs:.1} s");
    }
    let whole = wait.as_secs() + u64::from(wait.subsec_millis() >= 500);
    if whole < 120 {
        format!("{whole} s")
    } else {
        format!("{} min {} s", whole / 60, whole % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16, retry_after: Option<&str>) -> ProviderError {
        ProviderError::Status {
            instance: "claude".into(),
            status,
            body: "{}".into(),
            hint: RetryHint {
                retry_after: retry_after.map(str::to_owned),
                ..RetryHint::default()
            },
        }
    }

    #[test]
    fn retry_after_is_read_as_seconds_a_decimal_or_a_date() {
        assert_eq!(
            parse_retry_after("12", false),
            Some(Duration::from_secs(12))
        );
        assert_eq!(
            parse_retry_after("0.25", false),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            parse_retry_after("1500", true),
            Some(Duration::from_millis(1500))
        );
        let soon = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        let wait = parse_retry_after(&soon, false).unwrap();
        assert!(wait <= Duration::from_secs(30) && wait >= Duration::from_secs(28));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", false),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn a_negative_or_unreadable_retry_after_is_refused() {
        for bad in ["-3", "soon", "NaN", "inf", "", "1e400"] {
            assert_eq!(parse_retry_after(bad, false), None, "{bad}");
        }
    }

    #[test]
    fn openai_reset_durations_parse() {
        assert_eq!(go_duration("1s"), Some(Duration::from_secs(1)));
        assert_eq!(go_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(go_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(
            go_duration("1h2m3.5s"),
            Some(Duration::from_millis(3_723_500))
        );
        assert_eq!(go_duration("soon"), None);
    }

    #[test]
    fn a_wait_is_said_with_its_count() {
        let mut retrier = Retrier::new("claude", RetryPolicy::default());
        let Retry::After(wait) = retrier.after(status(429, Some("12"))) else {
            panic!("not retried");
        };
        assert_eq!(
            wait.to_string(),
            "rate limited by claude, retrying in 12 s (1 of 6)"
        );
    }

    #[test]
    fn an_unreadable_retry_after_backs_off_and_says_so() {
        let mut retrier = Retrier::new("claude", RetryPolicy::default());
        let Retry::After(wait) = retrier.after(status(529, Some("-3"))) else {
            panic!("not retried");
        };
        assert!(wait.delay >= Duration::from_millis(500) && wait.delay <= FIRST_BACKOFF);
        let said = wait.to_string();
        assert!(
            said.starts_with("claude is overloaded (HTTP 529), retrying in"),
            "{said}"
        );
        assert!(
            said.ends_with(
                "its retry-after '-3' is not a wait (negative, or too large to be one), so the wait is chosen here"
            ),
            "{said}"
        );
    }

    #[test]
    fn a_huge_retry_after_gives_up_at_once_and_says_why() {
        let mut retrier = Retrier::new("claude", RetryPolicy::default());
        let Retry::GiveUp(err) = retrier.after(status(429, Some("999999"))) else {
            panic!("waited for ever");
        };
        let said = err.to_string();
        assert!(said.contains("the server asked to wait 16666 min 39 s, more than the 5 min 0 s left of .retry_wait_secs"), "{said}");
    }

    #[test]
    fn the_count_bounds_the_retries_and_other_errors_are_not_retried() {
        let policy = RetryPolicy {
            retries: 2,
            total_wait: Duration::from_secs(60),
        };
        let mut retrier = Retrier::new("local", policy);
        assert!(matches!(
            retrier.after(status(503, Some("0"))),
            Retry::After(_)
        ));
        assert!(matches!(
            retrier.after(status(503, Some("0"))),
            Retry::After(_)
        ));
        let Retry::GiveUp(err) = retrier.after(status(503, Some("0"))) else {
            panic!("a third retry");
        };
        assert!(
            err.to_string()
                .starts_with("provider 'local' still failed after 2 retries and 0 s of waiting"),
            "{err}"
        );
        let mut fresh = Retrier::new("local", policy);
        assert!(matches!(
            fresh.after(status(400, None)),
            Retry::GiveUp(ProviderError::Status { status: 400, .. })
        ));
        assert!(matches!(fresh.after(status(401, None)), Retry::GiveUp(_)));
    }

    #[test]
    fn rate_limit_reset_headers_are_read_for_the_limit_that_is_used_up() {
        use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
        let headers = |pairs: &[(&str, String)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(
                    HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    HeaderValue::from_str(value).unwrap(),
                );
            }
            map
        };
        let soon = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(20);
        let anthropic = hint_from_headers(&headers(&[
            ("anthropic-ratelimit-tokens-remaining", "0".into()),
            ("anthropic-ratelimit-tokens-reset", soon.to_string()),
            ("anthropic-ratelimit-requests-remaining", "5".into()),
            (
                "anthropic-ratelimit-requests-reset",
                "2099-01-01T00:00:00Z".into(),
            ),
        ]));
        let wait = anthropic.reset_in.unwrap();
        assert!(
            wait <= Duration::from_secs(20) && wait >= Duration::from_secs(18),
            "{wait:?}"
        );
        let openai = hint_from_headers(&headers(&[
            ("x-ratelimit-remaining-requests", "0".into()),
            ("x-ratelimit-reset-requests", "6m0s".into()),
            ("x-ratelimit-remaining-tokens", "0".into()),
            ("x-ratelimit-reset-tokens", "250ms".into()),
        ]));
        assert_eq!(
            openai.reset_in,
            Some(Duration::from_secs(360)),
            "the later reset"
        );
        let ms = hint_from_headers(&headers(&[
            ("retry-after-ms", "1500".into()),
            ("retry-after", "9".into()),
        ]));
        assert_eq!(
            asked_wait(Some(&ms)),
            (Some(Duration::from_millis(1500)), None)
        );
        // A reset is used when retry-after says nothing.
        assert_eq!(asked_wait(Some(&openai)).0, Some(Duration::from_secs(360)));
    }

    #[test]
    fn backoff_doubles_with_jitter_up_to_a_cap() {
        for attempt in 1..=10 {
            let full = FIRST_BACKOFF
                .saturating_mul(1 << (attempt - 1).min(16))
                .min(MAX_BACKOFF);
            let wait = backoff(attempt);
            assert!(wait <= full && wait >= full / 2, "{attempt}: {wait:?}");
        }
    }
}
