//! RFC 3339 UTC timestamps for the `at` field of every event.
//!
//! The log needs only two things from time: "now" as text a person and any
//! JSON tool can read, and parsing that text back. Both fit in a page of
//! calendar arithmetic, so the crate carries no date library. Writers always
//! emit UTC with milliseconds (`2026-11-29T19:27:36.123Z`); readers accept any
//! RFC 3339 offset and fraction so a log written by another tool still loads.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An instant, kept as seconds and nanoseconds since the Unix epoch (UTC).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    secs: i64,
    nanos: u32,
}

/// Text that is not an RFC 3339 timestamp.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{text}' is not an RFC 3339 timestamp (expected e.g. 2026-11-29T19:27:36.123Z)")]
pub struct TimestampError {
    /// The text that failed to parse.
    pub text: String,
}

impl Timestamp {
    /// The current time, at millisecond precision (what the log stores).
    pub fn now() -> Self {
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let secs = i64::try_from(since.as_secs()).unwrap_or(i64::MAX);
        Self {
            secs,
            nanos: since.subsec_millis() * 1_000_000,
        }
    }

    /// From milliseconds since the epoch.
    pub fn from_unix_millis(millis: i64) -> Self {
        Self {
            secs: millis.div_euclid(1000),
            nanos: u32::try_from(millis.rem_euclid(1000)).unwrap_or(0) * 1_000_000,
        }
    }

    /// Milliseconds since the epoch.
    pub fn unix_millis(self) -> i64 {
        self.secs
            .saturating_mul(1000)
            .saturating_add(i64::from(self.nanos / 1_000_000))
    }

    /// Year, month, day, hour, minute, second in UTC.
    pub fn civil(self) -> (i64, u32, u32, u32, u32, u32) {
        let days = self.secs.div_euclid(86_400);
        let rem = self.secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        let rem = u32::try_from(rem).unwrap_or(0);
        (y, m, d, rem / 3600, rem / 60 % 60, rem % 60)
    }

    /// Parse RFC 3339: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`.
    pub fn parse(text: &str) -> Result<Self, TimestampError> {
        parse(text.as_bytes()).ok_or_else(|| TimestampError {
            text: text.to_owned(),
        })
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, mo, d, h, mi, s) = self.civil();
        write!(
            f,
            "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:03}Z",
            self.nanos / 1_000_000
        )
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Timestamp;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RFC 3339 timestamp")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Timestamp, E> {
                Timestamp::parse(v).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

fn digits(b: &[u8], at: usize, n: usize) -> Option<i64> {
    let part = b.get(at..at + n)?;
    let mut v = 0i64;
    for &c in part {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(c - b'0');
    }
    Some(v)
}

fn parse(b: &[u8]) -> Option<Timestamp> {
    let year = digits(b, 0, 4)?;
    let month = digits(b, 5, 2)?;
    let day = digits(b, 8, 2)?;
    let hour = digits(b, 11, 2)?;
    let minute = digits(b, 14, 2)?;
    let second = digits(b, 17, 2)?;
    if b.get(4) != Some(&b'-')
        || b.get(7) != Some(&b'-')
        || !matches!(b.get(10), Some(b'T' | b't' | b' '))
        || b.get(13) != Some(&b':')
        || b.get(16) != Some(&b':')
        || !(1..=12).contains(&month)
        || !(1..=days_in_month(year, month)).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut at = 19;
    let mut nanos = 0u32;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            if at - start < 9 {
                nanos = nanos * 10 + u32::from(b[at] - b'0');
            }
            at += 1;
        }
        let count = at - start;
        if count == 0 {
            return None;
        }
        for _ in count..9 {
            nanos *= 10;
        }
    }
    let offset = match b.get(at)? {
        b'Z' | b'z' if at + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if at + 6 == b.len() && b[at + 3] == b':' => {
            let h = digits(b, at + 1, 2)?;
            let m = digits(b, at + 4, 2)?;
            let off = h * 3600 + m * 60;
            if *sign == b'+' { off } else { -off }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    // A leap second is folded into the next second; the log never needs it.
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some(Timestamp { secs, nanos })
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's algorithms for the proleptic Gregorian calendar.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        u32::try_from(m).unwrap_or(1),
        u32::try_from(d).unwrap_or(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_with_milliseconds() {
        let t = Timestamp::from_unix_millis(1_796_067_656_123);
        assert_eq!(t.to_string(), "2026-11-30T19:40:56.123Z");
    }

    #[test]
    fn round_trips_through_text() {
        for millis in [0, 951_782_400_000, 1_796_067_656_123, 4_102_444_799_999] {
            let t = Timestamp::from_unix_millis(millis);
            assert_eq!(Timestamp::parse(&t.to_string()).unwrap(), t);
        }
    }

    #[test]
    fn accepts_offsets_and_long_fractions() {
        let a = Timestamp::parse("2026-11-29T20:27:36.123456789+01:00").unwrap();
        let b = Timestamp::parse("2026-11-29T19:27:36.123Z").unwrap();
        assert_eq!(a.unix_millis(), b.unix_millis());
        assert!(Timestamp::parse("2026-11-29T19:27:36Z").is_ok());
    }

    #[test]
    fn rejects_what_is_not_rfc3339() {
        for bad in [
            "",
            "2026-11-29",
            "2026-13-01T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-11-29T19:27:36",
            "2026-11-29T19:27:36.Z",
            "2026-11-29T19:27:36Zjunk",
        ] {
            assert!(Timestamp::parse(bad).is_err(), "{bad}");
        }
    }
}
