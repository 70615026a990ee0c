//! A plugin's manifest, `plugin.json` in its directory: its name, version,
//! the WebAssembly module beside it, and its tools, each with a JSON Schema
//! for its arguments and the capabilities it needs.
//!
//! ```json
//! {
//!   "name": "hello",
//!   "version": "1.0.0",
//!   "module": "hello.wasm",
//!   "tools": [
//!     { "name": "greet", "description": "Greets someone",
//!       "parameters": { "type": "object", "properties": { "who": { "type": "string" } } },
//!       "capabilities": ["log"] }
//!   ]
//! }
//! ```
//!
//! Everything is checked before any of the module is compiled: a name that
//! cannot be one label of an action (`plugin.<name>.tool.<tool>`), an
//! unknown capability, a schema that is not a JSON Schema object, a module
//! path that leaves the plugin's directory.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

/// The manifest's file name in a plugin's directory.
pub const MANIFEST: &str = "plugin.json";
/// Most bytes of a manifest read.
const MANIFEST_BOUND: u64 = 1024 * 1024;
/// Most bytes of a module read.
pub const MODULE_BOUND: u64 = 64 * 1024 * 1024;

/// One capability a tool may declare: each is a set of host functions, and
/// each (but `log`) is priced under its ordinary action name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Capability {
    /// `chock.log`: a line the person sees, in the session's log.
    Log,
    /// `chock.fs_read`: read a file of the workspace (`fs.read`).
    FsRead,
    /// `chock.fs_write`: write a file of the workspace (`fs.write`).
    FsWrite,
}

impl Capability {
    pub const ALL: [Capability; 3] = [Capability::Log, Capability::FsRead, Capability::FsWrite];

    /// As a manifest writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Log => "log",
            Capability::FsRead => "fs.read",
            Capability::FsWrite => "fs.write",
        }
    }

    /// The action it is priced under; `log` is none (it reaches only the
    /// session's own log).
    pub fn action(self) -> Option<&'static str> {
        match self {
            Capability::Log => None,
            Capability::FsRead => Some("fs.read"),
            Capability::FsWrite => Some("fs.write"),
        }
    }

    /// The host function it links, in module `chock`.
    pub fn import(self) -> &'static str {
        match self {
            Capability::Log => "log",
            Capability::FsRead => "fs_read",
            Capability::FsWrite => "fs_write",
        }
    }

    fn parse(text: &str) -> Option<Capability> {
        Capability::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

/// One tool of a plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDecl {
    pub name: String,
    pub description: String,
    /// Its arguments' JSON Schema, as the model is given it.
    pub parameters: serde_json::Value,
    pub capabilities: Vec<Capability>,
}

/// A plugin's manifest, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    /// The module's path, inside the plugin's directory.
    pub module: PathBuf,
    pub tools: Vec<ToolDecl>,
}

/// What is wrong with a plugin before any of it runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    #[error("{} cannot be read: {detail}", path.display())]
    Unreadable { path: PathBuf, detail: String },
    #[error("{} is not a plugin manifest: {detail}", path.display())]
    Malformed { path: PathBuf, detail: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: String,
    version: String,
    module: String,
    tools: Vec<RawTool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTool {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default = "empty_object_schema")]
    parameters: serde_json::Value,
    #[serde(default)]
    capabilities: Vec<String>,
}

fn empty_object_schema() -> serde_json::Value {
    serde_json::json!({ "type": "object", "properties": {} })
}

/// Whether `text` can be one label of an action: letters, digits, `-`, `_`.
pub fn is_label(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 64
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl Manifest {
    /// Reads and checks `dir/plugin.json`.
    pub fn load(dir: &Path) -> Result<Manifest, ManifestError> {
        let path = dir.join(MANIFEST);
        let text =
            read_bounded(&path, MANIFEST_BOUND).map_err(|detail| ManifestError::Unreadable {
                path: path.clone(),
                detail,
            })?;
        Manifest::parse(&text).map_err(|detail| ManifestError::Malformed { path, detail })
    }

    /// Checks a manifest's text.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let raw: Raw = serde_json::from_str(text).map_err(|err| err.to_string())?;
        if !is_label(&raw.name) {
            return Err(format!(
                "the name '{}' cannot be one label of plugin.<name>.tool.<tool>: use letters, digits, '-' and '_'",
                raw.name
            ));
        }
        let module = PathBuf::from(&raw.module);
        if module.as_os_str().is_empty()
            || module
                .components()
                .any(|c| !matches!(c, Component::Normal(_)))
        {
            return Err(format!(
                "the module '{}' must be a path inside the plugin's directory",
                raw.module
            ));
        }
        if raw.tools.is_empty() {
            return Err("it names no tool".to_owned());
        }
        let mut tools: Vec<ToolDecl> = Vec::new();
        for tool in raw.tools {
            if !is_label(&tool.name) {
                return Err(format!(
                    "the tool name '{}' cannot be one label of plugin.{}.tool.<tool>: use letters, digits, '-' and '_'",
                    tool.name, raw.name
                ));
            }
            if tools.iter().any(|t| t.name == tool.name) {
                return Err(format!("the tool '{}' is named twice", tool.name));
            }
            check_schema(&tool.parameters).map_err(|why| {
                format!(
                    "the tool '{}' has parameters that are not a JSON Schema: {why}",
                    tool.name
                )
            })?;
            let mut capabilities = Vec::new();
            for text in &tool.capabilities {
                let cap = Capability::parse(text).ok_or_else(|| {
                    format!(
                        "the tool '{}' declares the capability '{text}', which Chock does not have (there are: {})",
                        tool.name,
                        Capability::ALL.map(Capability::as_str).join(", ")
                    )
                })?;
                if !capabilities.contains(&cap) {
                    capabilities.push(cap);
                }
            }
            tools.push(ToolDecl {
                name: tool.name,
                description: tool.description,
                parameters: tool.parameters,
                capabilities,
            });
        }
        Ok(Manifest {
            name: raw.name,
            version: raw.version,
            module,
            tools,
        })
    }
}

/// The JSON Schema types.
const TYPES: [&str; 7] = [
    "object", "array", "string", "number", "integer", "boolean", "null",
];

/// A tool's parameters must be a JSON Schema of an object: `type` object
/// (or absent), `properties` an object of schemas, `required` a list of
/// names; each nested schema an object whose `type`, where given, is one of
/// JSON Schema's (or a list of them).
fn check_schema(schema: &serde_json::Value) -> Result<(), String> {
    let object = schema.as_object().ok_or("it is not an object")?;
    match object.get("type") {
        None => {}
        Some(serde_json::Value::String(t)) if t == "object" => {}
        Some(other) => return Err(format!("its type is {other}, and a tool takes an object")),
    }
    check_nested(schema, "the schema")
}

fn check_nested(schema: &serde_json::Value, at: &str) -> Result<(), String> {
    let object = match schema {
        serde_json::Value::Object(o) => o,
        serde_json::Value::Bool(_) => return Ok(()),
        other => return Err(format!("{at} is {other}, not a schema")),
    };
    match object.get("type") {
        None => {}
        Some(serde_json::Value::String(t)) if TYPES.contains(&t.as_str()) => {}
        Some(serde_json::Value::Array(list))
            if list
                .iter()
                .all(|t| t.as_str().is_some_and(|t| TYPES.contains(&t))) => {}
        Some(other) => {
            return Err(format!(
                "{at} has the type {other}, which JSON Schema does not have"
            ));
        }
    }
    if let Some(properties) = object.get("properties") {
        let properties = properties
            .as_object()
            .ok_or_else(|| format!("{at}'s properties are not an object"))?;
        for (name, nested) in properties {
            check_nested(nested, &format!("the property '{name}'"))?;
        }
    }
    if let Some(items) = object.get("items") {
        check_nested(items, &format!("{at}'s items"))?;
    }
    if let Some(required) = object.get("required")
        && !required
            .as_array()
            .is_some_and(|list| list.iter().all(serde_json::Value::is_string))
    {
        return Err(format!("{at}'s required is not a list of names"));
    }
    Ok(())
}

/// A file's bytes, refused when it is not a regular file or over `bound`.
pub(crate) fn read_bounded_bytes(path: &Path, bound: u64) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|err| err.to_string())?;
    let meta = file.metadata().map_err(|err| err.to_string())?;
    if !meta.is_file() {
        return Err("it is not a regular file".to_owned());
    }
    if meta.len() > bound {
        return Err(format!(
            "it is {} bytes, over the bound of {bound}",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    file.take(bound)
        .read_to_end(&mut bytes)
        .map_err(|err| err.to_string())?;
    Ok(bytes)
}

fn read_bounded(path: &Path, bound: u64) -> Result<String, String> {
    String::from_utf8(read_bounded_bytes(path, bound)?).map_err(|_| "it is not UTF-8".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(tools: &str) -> Result<Manifest, String> {
        Manifest::parse(&format!(
            r#"{{"name": "hello", "version": "1.0.0", "module": "hello.wasm", "tools": {tools}}}"#
        ))
    }

    #[test]
    fn a_good_manifest_reads_with_its_capabilities() {
        let m = manifest(
            r#"[{"name": "greet", "description": "Greets", "capabilities": ["log", "fs.read", "log"]}]"#,
        )
        .unwrap();
        assert_eq!(
            m.tools[0].capabilities,
            vec![Capability::Log, Capability::FsRead]
        );
        assert_eq!(m.tools[0].parameters["type"], "object");
    }

    #[test]
    fn a_bad_name_capability_schema_or_module_is_refused_with_the_reason() {
        let said = |tools: &str| manifest(tools).unwrap_err();
        assert!(said(r#"[{"name": "two words"}]"#).contains("cannot be one label"));
        assert!(said(r#"[{"name": "a.b"}]"#).contains("cannot be one label"));
        assert!(said(r#"[{"name": "x", "capabilities": ["net.raw"]}]"#).contains("does not have"));
        assert!(said(r#"[{"name": "x", "parameters": "a string"}]"#).contains("not a JSON Schema"));
        assert!(
            said(r#"[{"name": "x", "parameters": {"type": "object", "properties": {"a": {"type": "text"}}}}]"#)
                .contains("which JSON Schema does not have")
        );
        assert!(
            said(r#"[{"name": "x", "parameters": {"type": "array"}}]"#).contains("takes an object")
        );
        assert!(said("[]").contains("names no tool"));
        assert!(said(r#"[{"name": "x"}, {"name": "x"}]"#).contains("named twice"));
        let escaping = Manifest::parse(
            r#"{"name": "hello", "version": "1", "module": "../x.wasm", "tools": [{"name": "x"}]}"#,
        )
        .unwrap_err();
        assert!(
            escaping.contains("inside the plugin's directory"),
            "{escaping}"
        );
        assert!(Manifest::parse(r#"{"name": "hello"}"#).is_err());
    }
}
