//! What every built-in tool says about itself, in its own file: the name
//! the model calls it by, the description and schema the model is given,
//! what its arguments must be beyond their types, and where a call of it is
//! decided. How it runs is that file's `run`, reached from
//! [`crate::carry_out`]'s one exhaustive match.
//!
//! The description and schema are derived from the argument type
//! ([`schema_of`]), so the schema's names, required fields and types are the
//! type's own: the type's doc comment is the tool's description, each
//! field's doc comment that argument's, and bounds are `#[schemars(...)]`
//! attributes beside the field.

use chock_policy::Action;
use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ToolError;

/// One built-in tool, implemented by its argument type.
pub(crate) trait Tool: DeserializeOwned + JsonSchema {
    /// The name the model calls the tool by.
    const NAME: &'static str;

    /// Whether every call is decided at `call.<tool>`, whatever its
    /// arguments; a call whose arguments do not parse is decided there too.
    const AT_CALL: bool = false;

    /// Whether the session carries the call out itself (it asks a person or
    /// changes the session's own policy).
    const BY_SESSION: bool = false;

    /// Checks what the types cannot say (an empty command, port 0).
    fn check(self) -> Result<Self, ToolError> {
        Ok(self)
    }

    /// Where a call is decided: `call.<tool>` for an [`Self::AT_CALL`]
    /// tool, nowhere otherwise, unless the tool says more.
    fn decided_at(&self, _offered: Offered<'_>) -> Decide {
        if Self::AT_CALL {
            Action::call(Self::NAME).map_or(Decide::Nothing, Decide::At)
        } else {
            Decide::Nothing
        }
    }
}

/// Where a call is decided before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decide {
    /// Nobody is asked: it reads, or it will say itself why it cannot run.
    Nothing,
    /// At this action.
    At(Action),
    /// At this action, and even when permitted it is not carried out: the
    /// text says what is missing (git fetch and the like).
    NotRun(Action, String),
    /// Not at all: the call names no action it could be decided at (a
    /// run-time tool whose name cannot be one), and is refused with the text.
    Refuse(String),
}

/// What the session offers that changes where a call is decided.
#[derive(Debug, Clone, Copy, Default)]
pub struct Offered<'a> {
    /// Some rule could permit a `net.serve.<port>` (serve_port is decided
    /// there; otherwise the tool answers itself).
    pub serve: bool,
    /// A search engine is configured (web_search is decided at
    /// `web.search`; otherwise the tool answers itself).
    pub search: bool,
    /// The session's skills (read_skill is decided at the layer of the
    /// skill named).
    pub skills: Option<&'a crate::Skills>,
    /// The session's programs (a command's program is classed against its
    /// dev shell and what provide_tool added).
    pub programs: Option<&'a crate::nix::Programs>,
    /// Some rule permits a `nix.build.<attribute>` (provide_tool is
    /// offered, and decided at the attribute's key).
    pub nix_build: bool,
}

/// Reads the model's argument text for `T`. An empty string counts as `{}`:
/// some servers send nothing at all for a call without arguments.
pub(crate) fn arguments<T: Tool>(text: &str) -> Result<T, ToolError> {
    let text = if text.trim().is_empty() { "{}" } else { text };
    let args: T = serde_json::from_str(text).map_err(|err| ToolError::Arguments {
        tool: T::NAME,
        detail: err.to_string(),
    })?;
    args.check()
}

/// The description and the JSON schema of the arguments the model is given
/// for `T`, both derived from the type. The schema is inlined whole (no
/// `$defs`), an optional argument is just left out of `required` (no `null`
/// type), and it carries no `$schema`, `title`, `format` or `default`: the
/// models read only the shape, and the defaults are said in the descriptions.
/// A description's lines are joined by spaces, so a doc comment may wrap.
pub(crate) fn schema_of<T: JsonSchema>() -> (String, Value) {
    let mut settings = SchemaSettings::draft2020_12();
    settings.meta_schema = None;
    settings.inline_subschemas = true;
    let tidy = RecursiveTransform(|schema: &mut Schema| {
        for key in ["title", "format", "default"] {
            schema.remove(key);
        }
        if let Some(Value::Array(types)) = schema.get("type")
            && let [kind, null] = types.as_slice()
            && null == "null"
        {
            let kind = kind.clone();
            schema.insert("type".to_owned(), kind);
        }
        if let Some(Value::String(text)) = schema.get_mut("description") {
            *text = text.replace('\n', " ");
        }
    });
    let mut schema = settings
        .with_transform(tidy)
        .into_generator()
        .into_root_schema_for::<T>();
    let description = match schema.remove("description") {
        Some(Value::String(text)) => text,
        _ => String::new(),
    };
    (description, schema.to_value())
}

/// A tool's facts as values, for the lists over every tool.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts {
    pub(crate) name: &'static str,
    pub(crate) schema: fn() -> (String, Value),
    pub(crate) at_call: bool,
    pub(crate) by_session: bool,
}

impl Facts {
    pub(crate) fn of<T: Tool>() -> Facts {
        Facts {
            name: T::NAME,
            schema: schema_of::<T>,
            at_call: T::AT_CALL,
            by_session: T::BY_SESSION,
        }
    }
}
