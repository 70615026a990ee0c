//! Any `serde::Serialize` value into a [`Value`] tree, which the writer then
//! prints. Going through the tree keeps one printer for both `to_string` and
//! `Value`'s `Display`, and lets the tree be checked before anything is
//! written (a NaN, a `u128` past `i128::MAX`).
//!
//! Unit variants become enum literals; newtype, tuple and struct variants
//! become a one-field struct `.{ .variant = ... }`; `()` and unit structs
//! become `.{}`; `None` becomes `null`. Map keys must be strings, chars or
//! integers (integers are written as quoted names, `.@"42"`).

use std::collections::HashSet;

use serde::ser::{self, Serialize};

use crate::error::Error;
use crate::value::{Field, Value, ValueKind};

pub(crate) struct ValueSer;

fn v(kind: ValueKind) -> Value {
    Value::new(kind)
}

fn field(name: &str, value: Value) -> Field {
    Field {
        name: name.to_owned(),
        name_span: crate::Span::default(),
        value,
    }
}

impl ser::Serializer for ValueSer {
    type Ok = Value;
    type Error = Error;
    type SerializeSeq = SeqSer;
    type SerializeTuple = SeqSer;
    type SerializeTupleStruct = SeqSer;
    type SerializeTupleVariant = SeqSer;
    type SerializeMap = MapSer;
    type SerializeStruct = MapSer;
    type SerializeStructVariant = MapSer;

    fn serialize_bool(self, b: bool) -> Result<Value, Error> {
        Ok(v(ValueKind::Bool(b)))
    }
    fn serialize_i8(self, n: i8) -> Result<Value, Error> {
        self.serialize_i128(n.into())
    }
    fn serialize_i16(self, n: i16) -> Result<Value, Error> {
        self.serialize_i128(n.into())
    }
    fn serialize_i32(self, n: i32) -> Result<Value, Error> {
        self.serialize_i128(n.into())
    }
    fn serialize_i64(self, n: i64) -> Result<Value, Error> {
        self.serialize_i128(n.into())
    }
    fn serialize_i128(self, n: i128) -> Result<Value, Error> {
        Ok(v(ValueKind::Int(n)))
    }
    fn serialize_u8(self, n: u8) -> Result<Value, Error> {
        self.serialize_i128(n.into())
    }
    fn serialize_u16(self, n: u16) -> Result<Value, Error> {
        self.serialize_i128(n.into())
    }
    fn serialize_u32(self, n: u32) -> Result<Value, Error> {
        self.serialize_i128(n.into())
    }
    fn serialize_u64(self, n: u64) -> Result<Value, Error> {
        self.serialize_i128(n.into())
    }
    fn serialize_u128(self, n: u128) -> Result<Value, Error> {
        i128::try_from(n)
            .map(|n| v(ValueKind::Int(n)))
            .map_err(|_| {
                Error::new(format!(
                    "cannot write {n}: ZON integers are limited to 128-bit signed"
                ))
            })
    }
    fn serialize_f32(self, f: f32) -> Result<Value, Error> {
        self.serialize_f64(f.into())
    }
    fn serialize_f64(self, f: f64) -> Result<Value, Error> {
        if f.is_finite() {
            Ok(v(ValueKind::Float(f)))
        } else {
            Err(Error::new(format!(
                "cannot write {f}: ZON has no literal for infinity or NaN"
            )))
        }
    }
    fn serialize_char(self, c: char) -> Result<Value, Error> {
        Ok(v(ValueKind::Char(c as u32)))
    }
    fn serialize_str(self, s: &str) -> Result<Value, Error> {
        Ok(v(ValueKind::String(s.to_owned())))
    }
    fn serialize_bytes(self, b: &[u8]) -> Result<Value, Error> {
        Ok(v(ValueKind::List(
            b.iter().map(|&b| v(ValueKind::Int(b.into()))).collect(),
        )))
    }
    fn serialize_none(self) -> Result<Value, Error> {
        Ok(v(ValueKind::Null))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, Error> {
        Ok(v(ValueKind::Struct(Vec::new())))
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
    ) -> Result<Value, Error> {
        Ok(v(ValueKind::EnumLiteral(variant.to_owned())))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, Error> {
        Ok(v(ValueKind::Struct(vec![field(
            variant,
            value.serialize(ValueSer)?,
        )])))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqSer, Error> {
        Ok(SeqSer {
            items: Vec::with_capacity(len.unwrap_or(0)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqSer, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SeqSer, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<SeqSer, Error> {
        Ok(SeqSer {
            items: Vec::with_capacity(len),
            variant: Some(variant),
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<MapSer, Error> {
        Ok(MapSer {
            names: HashSet::new(),
            fields: Vec::with_capacity(len.unwrap_or(0)),
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<MapSer, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<MapSer, Error> {
        Ok(MapSer {
            names: HashSet::new(),
            fields: Vec::with_capacity(len),
            key: None,
            variant: Some(variant),
        })
    }
}

pub(crate) struct SeqSer {
    items: Vec<Value>,
    variant: Option<&'static str>,
}

/// Implements one of serde's compound traits by handing each element to
/// the serializer's `push` and the end to its `finish`: the traits differ
/// only in their names, and in whether an element comes `named`.
macro_rules! forward_to_push {
    ($ser:ty: $trait:ident::$element:ident) => {
        impl ser::$trait for $ser {
            type Ok = Value;
            type Error = Error;
            fn $element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.push(value)
            }
            fn end(self) -> Result<Value, Error> {
                self.finish()
            }
        }
    };
    ($ser:ty: $trait:ident::$element:ident, named) => {
        impl ser::$trait for $ser {
            type Ok = Value;
            type Error = Error;
            fn $element<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Error> {
                self.push(key.to_owned(), value)
            }
            fn end(self) -> Result<Value, Error> {
                self.finish()
            }
        }
    };
}

impl SeqSer {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.items.push(value.serialize(ValueSer)?);
        Ok(())
    }
    fn finish(self) -> Result<Value, Error> {
        let list = v(ValueKind::List(self.items));
        Ok(match self.variant {
            Some(name) => v(ValueKind::Struct(vec![field(name, list)])),
            None => list,
        })
    }
}

forward_to_push!(SeqSer: SerializeSeq::serialize_element);
forward_to_push!(SeqSer: SerializeTuple::serialize_element);
forward_to_push!(SeqSer: SerializeTupleStruct::serialize_field);
forward_to_push!(SeqSer: SerializeTupleVariant::serialize_field);

pub(crate) struct MapSer {
    fields: Vec<Field>,
    /// Names written so far, so a repeated one (two map keys that print the
    /// same, such as `1` and `"1"`) is refused without a quadratic scan.
    names: HashSet<String>,
    key: Option<String>,
    variant: Option<&'static str>,
}

impl MapSer {
    fn push<T: Serialize + ?Sized>(&mut self, name: String, value: &T) -> Result<(), Error> {
        if !self.names.insert(name.clone()) {
            return Err(Error::new(format!(
                "cannot write the field `{name}` twice in one struct"
            )));
        }
        let value = value.serialize(ValueSer)?;
        self.fields.push(Field {
            name,
            name_span: crate::Span::default(),
            value,
        });
        Ok(())
    }
    fn finish(self) -> Result<Value, Error> {
        let s = v(ValueKind::Struct(self.fields));
        Ok(match self.variant {
            Some(name) => v(ValueKind::Struct(vec![field(name, s)])),
            None => s,
        })
    }
}

impl ser::SerializeMap for MapSer {
    type Ok = Value;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        let k = key.serialize(ValueSer)?;
        self.key = Some(match k.kind {
            ValueKind::String(s) | ValueKind::EnumLiteral(s) => s,
            ValueKind::Int(i) => i.to_string(),
            ValueKind::Char(c) => char::from_u32(c).map(String::from).unwrap_or_default(),
            _ => {
                return Err(Error::new(format!(
                    "cannot write a map whose key is a {}: ZON field names are strings",
                    k.kind_name()
                )));
            }
        });
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let name = self
            .key
            .take()
            .ok_or_else(|| Error::new("a map value was written before its key"))?;
        self.push(name, value)
    }
    fn end(self) -> Result<Value, Error> {
        self.finish()
    }
}

forward_to_push!(MapSer: SerializeStruct::serialize_field, named);
forward_to_push!(MapSer: SerializeStructVariant::serialize_field, named);
