//! Names for sessions and events.
//!
//! A [`SessionId`] becomes a directory name and arrives over sockets from
//! other machines, so its text has one fixed shape, `YYYYMMDD-HHMMSS-mmm-xxxxxxxx`
//! (UTC creation time to the millisecond, then 8 lowercase hex digits of
//! randomness), and [`SessionId::parse`] refuses anything else: an id can
//! never smuggle a `/` or `..` into a path. Because the time comes first and
//! has fixed width, sorting ids as strings sorts them by creation time; ids
//! made by one process are strictly increasing even within a millisecond.
//!
//! An [`EventId`] is the writer's counter: 1, 2, 3, ... per session. "Last
//! event id N" always means "I already have N".

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::time::Timestamp;

/// The id of one session; see the module docs for its shape.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(String);

/// Text that is not a session id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{text}' is not a session id (ids look like 20261129-192736-123-7f3a9c1e): \
     list sessions with 'chock sessions'"
)]
pub struct SessionIdError {
    /// The text that was refused.
    pub text: String,
}

const SHAPE: &[u8] = b"dddddddd-dddddd-ddd-xxxxxxxx";

impl SessionId {
    /// A fresh id for a session created now.
    pub fn new() -> Self {
        static LAST_MILLIS: AtomicI64 = AtomicI64::new(i64::MIN);
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let now = Timestamp::now().unix_millis();
        // Two sessions created in the same millisecond by one process still
        // sort in creation order: the later one borrows the next millisecond.
        let prev = LAST_MILLIS
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |last| {
                Some(now.max(last.saturating_add(1)))
            })
            .unwrap_or(now);
        let millis = now.max(prev.saturating_add(1));
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        hasher.write_i64(millis);
        let random = hasher.finish() as u32;
        Self::at(Timestamp::from_unix_millis(millis), random)
    }

    /// The id for a given creation time and random suffix (tests, fixtures).
    pub fn at(time: Timestamp, random: u32) -> Self {
        let (y, mo, d, h, mi, s) = time.civil();
        let ms = time.unix_millis().rem_euclid(1000);
        Self(format!(
            "{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}-{ms:03}-{random:08x}"
        ))
    }

    /// Accept `text` only if it has exactly the shape of a session id.
    pub fn parse(text: &str) -> Result<Self, SessionIdError> {
        let ok = text.len() == SHAPE.len()
            && text.bytes().zip(SHAPE).all(|(c, want)| match want {
                b'd' => c.is_ascii_digit(),
                b'x' => c.is_ascii_digit() || (b'a'..=b'f').contains(&c),
                other => c == *other,
            });
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(SessionIdError {
                text: text.to_owned(),
            })
        }
    }

    /// The id as text; safe to use as a single path component.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for SessionId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for SessionId {
    type Err = SessionIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl Serialize for SessionId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SessionId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// The number of an event within its session's log, from 1.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct EventId(pub u64);

impl EventId {
    /// "Nothing yet": reading after this returns the whole log.
    pub const NONE: EventId = EventId(0);

    /// The id after this one.
    pub fn next(self) -> EventId {
        EventId(self.0 + 1)
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_ids_parse_and_sort_by_creation() {
        let ids: Vec<SessionId> = (0..50).map(|_| SessionId::new()).collect();
        for id in &ids {
            assert_eq!(SessionId::parse(id.as_str()).unwrap(), *id);
        }
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(sorted, ids);
    }

    #[test]
    fn id_encodes_its_creation_time() {
        let t = Timestamp::parse("2026-11-29T19:27:36.123Z").unwrap();
        assert_eq!(
            SessionId::at(t, 0x7f3a_9c1e).as_str(),
            "20261129-192736-123-7f3a9c1e"
        );
    }

    #[test]
    fn parse_refuses_anything_that_could_escape_a_directory() {
        for bad in [
            "",
            "..",
            "../20261129-192736-123-7f3a9c1e",
            "20261129-192736-123-7f3a9c1e/..",
            "20261129-192736-123-7F3A9C1E",
            "20261129-192736-123-7f3a9c1",
            "20261129-192736-123-7f3a9c1e ",
            "2026112x-192736-123-7f3a9c1e",
            "20261129/192736-123-7f3a9c1e",
        ] {
            let err = SessionId::parse(bad).unwrap_err();
            assert!(err.to_string().contains("chock sessions"), "{err}");
        }
    }
}
