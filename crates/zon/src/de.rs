//! Reading a [`Value`] tree into any `serde::Deserialize` type.
//!
//! Every error leaves here with a position: errors the tree walk raises
//! itself carry the span of the value they are about, and serde's own
//! errors (raised inside a visitor, so without one) are stamped with the
//! position of the value being read as they pass outwards; the innermost
//! stamp wins. Field-name errors (`unknown field`, `unknown variant`) point
//! at the name, not at the value.
//!
//! An enum literal read through `deserialize_any` is visited as a string,
//! which is what lets `#[serde(tag = "kind")]` enums read `.kind = .openai`.

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    VariantAccess, Visitor,
};

use crate::error::Error;
use crate::span::{self, Position, Span};
use crate::value::{Field, Value, ValueKind};

#[derive(Clone, Copy)]
pub(crate) struct ValueDe<'a> {
    pub(crate) value: &'a Value,
}

fn invalid_type(v: &Value, exp: &dyn de::Expected) -> Error {
    Error::at(
        v.span.start,
        format!("invalid type: {}, expected {exp}", describe(v)),
    )
}

fn describe(v: &Value) -> String {
    match &v.kind {
        ValueKind::EnumLiteral(s) => format!("enum literal `.{s}`"),
        ValueKind::String(s) if s.chars().count() <= 40 => format!("string {s:?}"),
        ValueKind::Int(i) => format!("integer `{i}`"),
        ValueKind::Float(f) => format!("float `{f:?}`"),
        ValueKind::Bool(b) => format!("boolean `{b}`"),
        _ => v.kind_name().to_owned(),
    }
}

impl<'a> ValueDe<'a> {
    fn at(&self, e: Error) -> Error {
        e.or_at(self.value.span.start)
    }

    fn int<'de, V: Visitor<'de>>(&self, visitor: V) -> Result<V::Value, Error>
    where
        'a: 'de,
    {
        match self.value.kind {
            ValueKind::Char(c) => visitor.visit_u32(c),
            _ => self.any(visitor),
        }
    }

    fn any<'de, V: Visitor<'de>>(&self, visitor: V) -> Result<V::Value, Error>
    where
        'a: 'de,
    {
        let v = self.value;
        let r = match &v.kind {
            ValueKind::Struct(fields) => visitor.visit_map(FieldsAccess::new(fields)),
            ValueKind::List(items) => visitor.visit_seq(ItemsAccess {
                items: items.iter(),
            }),
            ValueKind::EnumLiteral(s) | ValueKind::String(s) => visitor.visit_borrowed_str(s),
            ValueKind::Int(i) => {
                if let Ok(u) = u64::try_from(*i) {
                    visitor.visit_u64(u)
                } else if let Ok(s) = i64::try_from(*i) {
                    visitor.visit_i64(s)
                } else {
                    visitor.visit_i128(*i)
                }
            }
            ValueKind::Float(f) => visitor.visit_f64(*f),
            ValueKind::Bool(b) => visitor.visit_bool(*b),
            ValueKind::Null => visitor.visit_none(),
            ValueKind::Char(c) => visitor.visit_u32(*c),
        };
        r.map_err(|e| self.at(e))
    }
}

macro_rules! ints {
    ($($m:ident)*) => {$(
        fn $m<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.int(visitor)
        }
    )*};
}

impl<'de> Deserializer<'de> for ValueDe<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.any(visitor)
    }

    ints!(deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
          deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128);

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value.kind {
            // Zig coerces an integer literal into a float field; so do we.
            ValueKind::Int(i) => visitor.visit_f64(i as f64).map_err(|e| self.at(e)),
            _ => self.any(visitor),
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let c = match &self.value.kind {
            ValueKind::Char(c) => char::from_u32(*c),
            ValueKind::String(s) if s.chars().count() == 1 => s.chars().next(),
            _ => None,
        };
        match c {
            Some(c) => visitor.visit_char(c).map_err(|e| self.at(e)),
            None => Err(invalid_type(self.value, &"a character literal such as 'a'")),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match &self.value.kind {
            ValueKind::String(s) => visitor
                .visit_borrowed_bytes(s.as_bytes())
                .map_err(|e| self.at(e)),
            _ => self.any(visitor),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value.kind {
            ValueKind::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
        .map_err(|e| self.at(e))
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match &self.value.kind {
            ValueKind::Null => visitor.visit_unit(),
            ValueKind::Struct(f) if f.is_empty() => visitor.visit_unit(),
            ValueKind::List(i) if i.is_empty() => visitor.visit_unit(),
            _ => Err(invalid_type(self.value, &"`.{}` or `null`")),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        let start = self.value.span.start;
        visitor
            .visit_newtype_struct(self)
            .map_err(|e| e.or_at(start))
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match &self.value.kind {
            ValueKind::List(items) => visitor.visit_seq(ItemsAccess {
                items: items.iter(),
            }),
            ValueKind::Struct(f) if f.is_empty() => {
                visitor.visit_seq(ItemsAccess { items: [].iter() })
            }
            _ => return Err(invalid_type(self.value, &"a list `.{ a, b }`")),
        }
        .map_err(|e| self.at(e))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match &self.value.kind {
            ValueKind::Struct(fields) => visitor.visit_map(FieldsAccess::new(fields)),
            ValueKind::List(i) if i.is_empty() => visitor.visit_map(FieldsAccess::new(&[])),
            _ => return Err(invalid_type(self.value, &"a struct `.{ .name = value }`")),
        }
        .map_err(|e| self.at(e))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        if name == span::NAME {
            return visitor.visit_map(SpannedAccess {
                value: self.value,
                step: 0,
            });
        }
        match &self.value.kind {
            ValueKind::List(items) if !items.is_empty() => {
                let _ = fields;
                Err(invalid_type(self.value, &"a struct `.{ .name = value }`"))
            }
            _ => self.deserialize_map(visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let access = match &self.value.kind {
            ValueKind::EnumLiteral(name) => VariantDe {
                name,
                name_span: self.value.span,
                value: None,
                whole: self.value,
            },
            ValueKind::Struct(fields) if fields.len() == 1 => {
                let f = &fields[0];
                VariantDe {
                    name: &f.name,
                    name_span: f.name_span,
                    value: Some(&f.value),
                    whole: self.value,
                }
            }
            _ => {
                return Err(invalid_type(
                    self.value,
                    &"an enum literal `.name`, or `.{ .variant = value }` with one field",
                ));
            }
        };
        visitor.visit_enum(access).map_err(|e| self.at(e))
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.any(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! { bool str string }
}

struct ItemsAccess<'a> {
    items: std::slice::Iter<'a, Value>,
}

impl<'de> SeqAccess<'de> for ItemsAccess<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        match self.items.next() {
            Some(v) => seed.deserialize(ValueDe { value: v }).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct FieldsAccess<'a> {
    fields: std::slice::Iter<'a, Field>,
    current: Option<&'a Field>,
}

impl<'a> FieldsAccess<'a> {
    fn new(fields: &'a [Field]) -> Self {
        Self {
            fields: fields.iter(),
            current: None,
        }
    }
}

impl<'de> MapAccess<'de> for FieldsAccess<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some(f) = self.fields.next() else {
            return Ok(None);
        };
        self.current = Some(f);
        seed.deserialize(NameDe {
            name: &f.name,
            span: f.name_span,
        })
        .map(Some)
        .map_err(|e| e.or_at(f.name_span.start))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.current.take() {
            Some(f) => seed.deserialize(ValueDe { value: &f.value }),
            None => Err(Error::new("a struct value was asked for before its name")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.fields.len())
    }
}

/// Integer map keys are written as quoted names (`.@"42"`); reading one
/// back into an integer key parses the name.
macro_rules! ints_from_names {
    ($($m:ident)*) => {$(
        fn $m<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            let r = match self.name.parse::<i128>() {
                Ok(i) => match (u64::try_from(i), i64::try_from(i)) {
                    (Ok(u), _) => visitor.visit_u64(u),
                    (_, Ok(s)) => visitor.visit_i64(s),
                    _ => visitor.visit_i128(i),
                },
                Err(_) => visitor.visit_borrowed_str(self.name),
            };
            r.map_err(|e: Error| e.or_at(self.span.start))
        }
    )*};
}

/// A field name or variant name, read as a string.
#[derive(Clone, Copy)]
struct NameDe<'a> {
    name: &'a str,
    span: Span,
}

impl<'de> Deserializer<'de> for NameDe<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor
            .visit_borrowed_str(self.name)
            .map_err(|e: Error| e.or_at(self.span.start))
    }

    ints_from_names!(deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
          deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128);

    serde::forward_to_deserialize_any! {
        bool f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

struct VariantDe<'a> {
    name: &'a str,
    name_span: Span,
    /// The variant's payload, for `.{ .variant = value }`.
    value: Option<&'a Value>,
    whole: &'a Value,
}

impl<'de> EnumAccess<'de> for VariantDe<'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Error> {
        let v = seed
            .deserialize(NameDe {
                name: self.name,
                span: self.name_span,
            })
            .map_err(|e| e.or_at(self.name_span.start))?;
        Ok((v, self))
    }
}

impl<'de> VariantDe<'de> {
    fn payload(&self, what: &str) -> Result<&'de Value, Error> {
        self.value.ok_or_else(|| {
            Error::at(
                self.whole.span.start,
                format!(
                    "the variant `{}` carries {what}: write `.{{ .{} = ... }}`",
                    self.name, self.name
                ),
            )
        })
    }
}

impl<'de> VariantAccess<'de> for VariantDe<'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.value {
            None => Ok(()),
            Some(v) => <() as de::Deserialize>::deserialize(ValueDe { value: v }).map_err(|_| {
                Error::at(
                    v.span.start,
                    format!(
                        "the variant `{}` carries no value: write `.{}`",
                        self.name, self.name
                    ),
                )
            }),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(ValueDe {
            value: self.payload("a value")?,
        })
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        ValueDe {
            value: self.payload("a list of values")?,
        }
        .deserialize_seq(visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        ValueDe {
            value: self.payload("fields")?,
        }
        .deserialize_map(visitor)
    }
}

/// Feeds a [`crate::Spanned`] its span, then its value.
struct SpannedAccess<'a> {
    value: &'a Value,
    step: usize,
}

impl<'de> MapAccess<'de> for SpannedAccess<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match span::FIELDS.get(self.step) {
            Some(name) => seed
                .deserialize(NameDe {
                    name,
                    span: self.value.span,
                })
                .map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let Span { start, end } = self.value.span;
        let number = |p: Position, i: usize| -> u64 {
            match i {
                0 => u64::from(p.line),
                1 => u64::from(p.column),
                _ => p.offset as u64,
            }
        };
        let step = self.step;
        self.step += 1;
        match step {
            0..=2 => seed.deserialize(IntoDeserializer::<Error>::into_deserializer(number(
                start, step,
            ))),
            3..=5 => seed.deserialize(IntoDeserializer::<Error>::into_deserializer(number(
                end,
                step - 3,
            ))),
            _ => seed.deserialize(ValueDe { value: self.value }),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use crate::{from_str, parse};

    #[test]
    fn ignored_values_are_skipped_whatever_their_shape() {
        #[derive(Deserialize, Debug, PartialEq)]
        struct Keep {
            keep: u8,
        }
        let k: Keep =
            from_str(".{ .skip = .{ 1, .{ .x = 'c' }, \\\\text\n }, .keep = 7 }").unwrap();
        assert_eq!(k, Keep { keep: 7 });
    }

    #[test]
    fn a_unit_variant_may_be_written_as_a_field_holding_nothing() {
        #[derive(Deserialize, Debug, PartialEq)]
        #[serde(rename_all = "snake_case")]
        enum E {
            On,
        }
        assert_eq!(from_str::<E>(".{ .on = .{} }").unwrap(), E::On);
        assert_eq!(from_str::<E>(".{ .on = null }").unwrap(), E::On);
    }

    #[test]
    fn errors_from_a_tree_get_the_outer_position_when_nothing_narrower_is_known() {
        let v = parse("\n\n  .{ .a = 1 }").unwrap();
        let e = crate::from_value::<Vec<u8>>(&v).unwrap_err();
        assert_eq!((e.line(), e.column()), (3, 3));
        assert_eq!(
            e.message(),
            "invalid type: struct, expected a list `.{ a, b }`"
        );
    }
}
