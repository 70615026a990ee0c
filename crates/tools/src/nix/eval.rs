//! `nix_eval`: evaluates a Nix expression for the model and answers its
//! value as JSON. The evaluator runs inside the session's sandbox (no
//! network, the store read-only), against a store that cannot be written
//! (`--store dummy://`), without instantiating derivations, in restricted
//! mode: it reads only the workspace and the host's `NIX_PATH` entries that
//! lie in the store (`<nixpkgs>` on a machine with a channel), fetches no
//! URI, and is stopped at its time bound. Decided at `call.nix_eval`.

use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::ToolError;
use crate::tool::Tool;

/// The default and largest time an evaluation may take.
pub(crate) const DEFAULT_TIMEOUT_SECS: u64 = 10;
pub(crate) const MAX_TIMEOUT_SECS: u64 = 120;
/// The longest expression taken.
pub(crate) const MAX_EXPRESSION: usize = 16 * 1024;

/// Evaluate a Nix expression purely and answer its value as JSON: no network, nothing
/// written to the store, no derivation built. Files of the workspace can be read as
/// /workspace/<path>, and the machine's NIX_PATH entries as <name> (for example
/// (import <nixpkgs> {}).hello.meta.description, or the short form
/// nixpkgs#hello.meta.description). Use provide_tool to have a package built.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The expression, or <name>#<attribute path> for an attribute of a NIX_PATH entry
    pub expression: String,
    /// Seconds the evaluation may take (default 10, at most 120)
    pub timeout_secs: Option<u64>,
}

impl Tool for Args {
    const NAME: &'static str = "nix_eval";
    const AT_CALL: bool = true;

    fn check(self) -> Result<Self, ToolError> {
        let bad = |detail: String| ToolError::Arguments {
            tool: "nix_eval",
            detail,
        };
        if self.expression.trim().is_empty() {
            return Err(bad(
                "the expression is empty: give a Nix expression, such as 1 + 2".to_owned(),
            ));
        }
        if self.expression.len() > MAX_EXPRESSION {
            return Err(bad(format!(
                "the expression is {} bytes, over the bound of {MAX_EXPRESSION}",
                self.expression.len()
            )));
        }
        if self.expression.contains('\0') {
            return Err(bad("the expression holds a NUL byte".to_owned()));
        }
        if self.timeout_secs == Some(0) || self.timeout_secs > Some(MAX_TIMEOUT_SECS) {
            return Err(bad(format!(
                "timeout_secs must be between 1 and {MAX_TIMEOUT_SECS}"
            )));
        }
        Ok(self)
    }
}

impl Args {
    pub(crate) fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS))
    }

    /// The evaluator's command line inside the sandbox, `search` being the
    /// `-I` entries it may read besides the workspace.
    pub(crate) fn argv(&self, workspace: &str, search: &[(String, PathBuf)]) -> Vec<String> {
        let mut argv: Vec<String> = [
            "nix",
            "--extra-experimental-features",
            "nix-command",
            "eval",
            "--json",
            "--read-only",
            "--impure",
            "--store",
            "dummy://",
            "--option",
            "restrict-eval",
            "true",
            "--option",
            "allowed-uris",
            "",
            "--option",
            "substituters",
            "",
            "-I",
            workspace,
        ]
        .map(str::to_owned)
        .to_vec();
        for (name, path) in search {
            argv.push("-I".to_owned());
            argv.push(format!("{name}={}", path.display()));
        }
        argv.push("--expr".to_owned());
        argv.push(self.expression_text(search));
        argv
    }

    /// `name#attr.path` for a NIX_PATH entry `name` is read as
    /// `(import <name> {}).attr.path`; anything else is the expression.
    fn expression_text(&self, search: &[(String, PathBuf)]) -> String {
        let text = self.expression.trim();
        if let Some((name, attr)) = text.split_once('#')
            && search.iter().any(|(n, _)| n == name)
            && is_attr_path(attr)
        {
            return format!("(import <{name}> {{}}).{attr}");
        }
        text.to_owned()
    }
}

fn is_attr_path(text: &str) -> bool {
    !text.is_empty()
        && text.split('.').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_-'".contains(&b))
        })
}

/// The host's `NIX_PATH` entries the evaluator may read: `name=path` pairs
/// whose path resolves into the store (a channel is a link into it), each
/// as its store path. What the host's variable says is the person's, and a
/// store path is immutable.
pub(crate) fn store_search_path() -> Vec<(String, PathBuf)> {
    let Some(var) = std::env::var_os("NIX_PATH") else {
        return Vec::new();
    };
    let var = var.to_string_lossy().into_owned();
    var.split(':')
        .filter_map(|entry| {
            let (name, path) = entry.split_once('=')?;
            let real = std::fs::canonicalize(path).ok()?;
            (real.starts_with("/nix/store") && !name.is_empty()).then(|| (name.to_owned(), real))
        })
        .collect()
}

/// What the model reads of a finished evaluation.
pub(crate) fn answer(
    status: Option<chock_sandbox::ExitStatus>,
    stdout: &str,
    stderr: &str,
    timeout: Duration,
) -> crate::ToolOutput {
    match status {
        None => crate::ToolOutput::error(format!(
            "the evaluation ran past its bound of {} s and was stopped; a larger timeout_secs (at most {MAX_TIMEOUT_SECS}) or a smaller expression",
            timeout.as_secs()
        )),
        Some(status) if status.success() => crate::ToolOutput::ok(stdout.trim_end().to_owned()),
        Some(_) => {
            let said = stderr.trim();
            let said = if said.is_empty() {
                "the evaluator said nothing"
            } else {
                said
            };
            crate::ToolOutput::error(format!("the evaluation failed: {said}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(expression: &str) -> Args {
        Args {
            expression: expression.to_owned(),
            timeout_secs: None,
        }
    }

    #[test]
    fn a_short_form_reads_an_attribute_of_a_search_path_entry_only() {
        let search = vec![("nixpkgs".to_owned(), PathBuf::from("/nix/store/x-nixpkgs"))];
        assert_eq!(
            args("nixpkgs#hello.meta.description").expression_text(&search),
            "(import <nixpkgs> {}).hello.meta.description"
        );
        assert_eq!(args("other#hello").expression_text(&search), "other#hello");
        assert_eq!(args("1 + 2").expression_text(&search), "1 + 2");
    }

    #[test]
    fn an_empty_a_huge_or_an_unbounded_expression_is_refused() {
        assert!(args("  ").check().is_err());
        assert!(args(&"1".repeat(MAX_EXPRESSION + 1)).check().is_err());
        let mut long = args("1");
        long.timeout_secs = Some(MAX_TIMEOUT_SECS + 1);
        assert!(long.check().is_err());
        assert!(args("1 + 2").check().is_ok());
    }
}
