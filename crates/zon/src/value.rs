//! The spanned value tree [`parse`](crate::parse) produces: every value and
//! every field name remembers where it was written.
//!
//! Equality ignores spans (two trees are equal when they say the same thing),
//! and an empty struct equals an empty list, because `.{}` is both in ZON and
//! the writer cannot tell them apart either.

use crate::span::Span;

/// One ZON value and where it was written.
#[derive(Debug, Clone)]
pub struct Value {
    pub kind: ValueKind,
    pub span: Span,
}

/// What a ZON value is. `.{}` parses as an empty `Struct`.
#[derive(Debug, Clone)]
pub enum ValueKind {
    /// `.{ .name = value, ... }`, fields in source order, names unique.
    Struct(Vec<Field>),
    /// `.{ a, b, ... }`.
    List(Vec<Value>),
    /// `.name` or `.@"any name"`.
    EnumLiteral(String),
    String(String),
    Int(i128),
    /// Always finite: ZON has no literal for NaN or infinity.
    Float(f64),
    Bool(bool),
    Null,
    /// A character literal such as `'a'`, as its Unicode code point.
    Char(u32),
}

/// One `.name = value` of a struct.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: String,
    pub name_span: Span,
    pub value: Value,
}

impl Value {
    /// A value with no source position, for building trees by hand.
    pub fn new(kind: ValueKind) -> Self {
        Self {
            kind,
            span: Span::default(),
        }
    }

    /// The value of field `name` when this is a struct that has one.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.field(name).map(|f| &f.value)
    }

    /// The field `name` (with the span of its name) when this is a struct.
    pub fn field(&self, name: &str) -> Option<&Field> {
        match &self.kind {
            ValueKind::Struct(fields) => fields.iter().find(|f| f.name == name),
            _ => None,
        }
    }

    /// The fields when this is a struct (`.{}` included).
    pub fn as_struct(&self) -> Option<&[Field]> {
        match &self.kind {
            ValueKind::Struct(fields) => Some(fields),
            ValueKind::List(items) if items.is_empty() => Some(&[]),
            _ => None,
        }
    }

    /// The items when this is a list (`.{}` included).
    pub fn as_list(&self) -> Option<&[Value]> {
        match &self.kind {
            ValueKind::List(items) => Some(items),
            ValueKind::Struct(fields) if fields.is_empty() => Some(&[]),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            ValueKind::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_enum_literal(&self) -> Option<&str> {
        match &self.kind {
            ValueKind::EnumLiteral(s) => Some(s),
            _ => None,
        }
    }

    /// A short name for the kind of value, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            ValueKind::Struct(f) if f.is_empty() => "empty struct `.{}`",
            ValueKind::Struct(_) => "struct",
            ValueKind::List(_) => "list",
            ValueKind::EnumLiteral(_) => "enum literal",
            ValueKind::String(_) => "string",
            ValueKind::Int(_) => "integer",
            ValueKind::Float(_) => "float",
            ValueKind::Bool(_) => "boolean",
            ValueKind::Null => "null",
            ValueKind::Char(_) => "character literal",
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
    }
}

impl PartialEq for Field {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.value == other.value
    }
}

impl PartialEq for ValueKind {
    fn eq(&self, other: &Self) -> bool {
        use ValueKind as K;
        match (self, other) {
            (K::Struct(a), K::Struct(b)) => a == b,
            (K::List(a), K::List(b)) => a == b,
            (K::Struct(a), K::List(b)) | (K::List(b), K::Struct(a)) => a.is_empty() && b.is_empty(),
            (K::EnumLiteral(a), K::EnumLiteral(b)) | (K::String(a), K::String(b)) => a == b,
            (K::Int(a), K::Int(b)) => a == b,
            (K::Float(a), K::Float(b)) => a == b,
            (K::Bool(a), K::Bool(b)) => a == b,
            (K::Null, K::Null) => true,
            (K::Char(a), K::Char(b)) => a == b,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_struct_equals_empty_list() {
        assert_eq!(
            Value::new(ValueKind::Struct(vec![])),
            Value::new(ValueKind::List(vec![]))
        );
        let one = Value::new(ValueKind::List(vec![Value::new(ValueKind::Null)]));
        assert_ne!(Value::new(ValueKind::Struct(vec![])), one);
    }

    #[test]
    fn get_finds_a_field_by_name() {
        let v = Value::new(ValueKind::Struct(vec![Field {
            name: "a".into(),
            name_span: Span::default(),
            value: Value::new(ValueKind::Int(1)),
        }]));
        assert_eq!(v.get("a"), Some(&Value::new(ValueKind::Int(1))));
        assert_eq!(v.get("b"), None);
    }
}
