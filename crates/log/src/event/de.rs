//! Reading an event without buffering it: see the parent module for why.
//!
//! The visitor reads keys until it has seen `type` and meets the first body
//! key; it then gives the body struct a [`BodyFields`] map access that starts
//! with that pending key, continues with the rest of the same JSON object,
//! and quietly takes `id` and `at` out of the stream wherever they appear.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::value::{BorrowedStrDeserializer, MapAccessDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::{AssistantMessage, Event, EventBody, Reading, Usage};
use crate::id::EventId;
use crate::time::Timestamp;

/// A key of the event object: one of the envelope's, or a body field.
enum Key<'de> {
    Id,
    At,
    Type,
    Body(Cow<'de, str>),
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(match v {
                    "id" => Key::Id,
                    "at" => Key::At,
                    "type" => Key::Type,
                    other => Key::Body(Cow::Borrowed(other)),
                })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(match v {
                    "id" => Key::Id,
                    "at" => Key::At,
                    "type" => Key::Type,
                    other => Key::Body(Cow::Owned(other.to_owned())),
                })
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The type name, borrowed from the input when it has no escapes.
struct TypeName<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for TypeName<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TypeVisitor;
        impl<'de> Visitor<'de> for TypeVisitor {
            type Value = TypeName<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an event type name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<TypeName<'de>, E> {
                Ok(TypeName(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TypeName<'de>, E> {
                Ok(TypeName(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(TypeVisitor)
    }
}

#[derive(Default)]
struct Envelope {
    id: Option<EventId>,
    at: Option<Timestamp>,
}

impl Envelope {
    fn take<'de, A: MapAccess<'de>>(
        &mut self,
        key: &Key<'de>,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            Key::Id => {
                if self.id.replace(map.next_value()?).is_some() {
                    return Err(de::Error::duplicate_field("id"));
                }
            }
            Key::At => {
                if self.at.replace(map.next_value()?).is_some() {
                    return Err(de::Error::duplicate_field("at"));
                }
            }
            Key::Type | Key::Body(_) => return Ok(false),
        }
        Ok(true)
    }

    fn finish<E: de::Error>(self, body: EventBody) -> Result<Event, E> {
        Ok(Event {
            id: self.id.ok_or_else(|| E::missing_field("id"))?,
            at: self.at.ok_or_else(|| E::missing_field("at"))?,
            body,
        })
    }
}

/// The rest of the event object as the body sees it.
struct BodyFields<'a, 'de, A> {
    pending: Option<Cow<'de, str>>,
    map: &'a mut A,
    envelope: &'a mut Envelope,
    done: bool,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for BodyFields<'_, 'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        if let Some(key) = self.pending.take() {
            return key_into(seed, key).map(Some);
        }
        while !self.done {
            let Some(key) = self.map.next_key::<Key<'de>>()? else {
                self.done = true;
                break;
            };
            if self.envelope.take(&key, self.map)? {
                continue;
            }
            match key {
                Key::Body(name) => return key_into(seed, name).map(Some),
                Key::Type => return Err(de::Error::duplicate_field("type")),
                Key::Id | Key::At => {}
            }
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

fn key_into<'de, K: DeserializeSeed<'de>, E: de::Error>(
    seed: K,
    key: Cow<'de, str>,
) -> Result<K::Value, E> {
    match key {
        Cow::Borrowed(k) => seed.deserialize(BorrowedStrDeserializer::new(k)),
        Cow::Owned(k) => seed.deserialize(StringDeserializer::new(k)),
    }
}

/// Reads an event; a body whose type `skip` names is checked to be JSON
/// and otherwise skipped, and comes back as an empty `Unknown` body.
pub(super) struct EventVisitor<'r> {
    pub(super) reading: &'r dyn Fn(&str, Option<EventId>) -> Reading,
}

fn whole(_: &str, _: Option<EventId>) -> Reading {
    Reading::Whole
}

/// What an `assistant.message` read for its [`Reading::Cost`] keeps;
/// every other field is scanned and dropped.
#[derive(Deserialize)]
struct Cost {
    #[serde(default)]
    usage: Usage,
    #[serde(default)]
    model: Option<String>,
}

impl<'de> Visitor<'de> for EventVisitor<'_> {
    type Value = Event;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an event object with id, at and type")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event, A::Error> {
        let mut envelope = Envelope::default();
        let mut type_name: Option<Cow<'de, str>> = None;
        let mut pending = None;
        while let Some(key) = map.next_key::<Key<'de>>()? {
            if envelope.take(&key, &mut map)? {
                continue;
            }
            match key {
                Key::Type => {
                    if type_name
                        .replace(map.next_value::<TypeName<'de>>()?.0)
                        .is_some()
                    {
                        return Err(de::Error::duplicate_field("type"));
                    }
                }
                Key::Body(name) => {
                    pending = Some(name);
                    break;
                }
                Key::Id | Key::At => {}
            }
        }
        let Some(type_name) = type_name else {
            return slow_path(envelope, pending, map);
        };
        let reading = (self.reading)(&type_name, envelope.id);
        if reading == Reading::Envelope {
            return skip_body(envelope, pending.is_some(), map);
        }
        let done = pending.is_none();
        let fields = BodyFields {
            pending,
            map: &mut map,
            envelope: &mut envelope,
            done,
        };
        let fields = MapAccessDeserializer::new(fields);
        let body = if reading == Reading::Cost && type_name == "assistant.message" {
            let cost = Cost::deserialize(fields)?;
            AssistantMessage {
                usage: cost.usage,
                model: cost.model,
                ..AssistantMessage::default()
            }
            .into()
        } else {
            EventBody::deserialize_as(&type_name, fields)?
        };
        envelope.finish(body)
    }
}

/// The rest of an event whose body is not wanted: the envelope's fields
/// are read, every other value is scanned (so the line must still be JSON)
/// but nothing of it is kept.
fn skip_body<'de, A: MapAccess<'de>>(
    mut envelope: Envelope,
    pending: bool,
    mut map: A,
) -> Result<Event, A::Error> {
    if pending {
        map.next_value::<IgnoredAny>()?;
    }
    while let Some(key) = map.next_key::<Key<'de>>()? {
        if envelope.take(&key, &mut map)? {
            continue;
        }
        match key {
            Key::Type => return Err(de::Error::duplicate_field("type")),
            Key::Body(_) | Key::Id | Key::At => {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    envelope.finish(EventBody::Unknown {
        type_name: String::new(),
        fields: Map::new(),
    })
}

/// A body field came before `type`: collect the rest, then decide.
fn slow_path<'de, A: MapAccess<'de>>(
    mut envelope: Envelope,
    pending: Option<Cow<'de, str>>,
    mut map: A,
) -> Result<Event, A::Error> {
    let mut fields = Map::new();
    if let Some(name) = pending {
        fields.insert(name.into_owned(), map.next_value::<Value>()?);
    }
    let mut type_name = None;
    while let Some(key) = map.next_key::<Key<'de>>()? {
        if envelope.take(&key, &mut map)? {
            continue;
        }
        match key {
            Key::Type => type_name = Some(map.next_value::<String>()?),
            Key::Body(name) => {
                fields.insert(name.into_owned(), map.next_value::<Value>()?);
            }
            Key::Id | Key::At => {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    let type_name = type_name.ok_or_else(|| de::Error::missing_field("type"))?;
    let body =
        EventBody::deserialize_as(&type_name, Value::Object(fields)).map_err(de::Error::custom)?;
    envelope.finish(body)
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EventVisitor { reading: &whole })
    }
}
