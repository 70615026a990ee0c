//! Secrets given to tool calls (docs/secrets.md): reading a value from its
//! source at the call, and keeping every value given out of what the model
//! and the log see.
//!
//! A value is read when a call is given it, never before: a `pass` that asks
//! for a passphrase asks then, and a secret nobody uses is never read. Each
//! value given in this process is remembered by the [`Redactor`], and every
//! tool output (a background job's later output too) has each occurrence
//! replaced by `[secret NAME]` before it is recorded or handed to the model.
//! The value lives in this process's memory and the one command's
//! environment, and nowhere else: no event, decision or error carries it.

use std::cell::RefCell;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chock_policy::{BindTarget, Policy, SecretSource, SecretSpec};
use chock_tools::{Effect, ToolOutput};

/// Bytes a value may hold.
const MAX_VALUE: usize = 64 * 1024;

/// The variables and values one call is given. Its `Debug` names the
/// variables only.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Given(pub(crate) Vec<(String, String)>);

impl std::fmt::Debug for Given {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(var, _)| var))
            .finish()
    }
}

impl Given {
    /// The (variable, value) pairs, for the command's environment.
    pub fn env(&self) -> &[(String, String)] {
        &self.0
    }
}

/// Every value given in this session, by secret name.
#[derive(Default)]
pub struct Redactor {
    given: RefCell<Vec<(String, String)>>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Redactor { .. }")
    }
}

impl Redactor {
    pub fn remember(&self, name: &str, value: &str) {
        let mut given = self.given.borrow_mut();
        if !given.iter().any(|(n, v)| n == name && v == value) {
            given.push((name.to_owned(), value.to_owned()));
            // The longest first, so a value that holds another is replaced whole.
            given.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
        }
    }

    /// `text` with each value given replaced by `[secret NAME]`.
    pub fn redact(&self, text: &mut String) {
        for (name, value) in self.given.borrow().iter() {
            if text.contains(value.as_str()) {
                *text = text.replace(value.as_str(), &format!("[secret {name}]"));
            }
        }
    }

    /// [`Self::redact`] over everything of a tool's output that is
    /// recorded or read.
    pub fn redact_output(&self, output: &mut ToolOutput) {
        if self.given.borrow().is_empty() {
            return;
        }
        self.redact(&mut output.text);
        if let Some(Effect::Notice { text, .. }) = &mut output.effect {
            self.redact(text);
        }
    }
}

/// Refuses, before the first turn, a secret bound to something this
/// version does not start: plugins are not built yet, and an MCP server
/// no file names cannot be given one, so such a binding would promise what
/// nothing keeps.
pub(crate) fn refuse_unbuilt_bindings(policy: &Policy) -> Result<(), String> {
    for spec in policy.secrets() {
        let what = match &spec.bind.target {
            BindTarget::Command => continue,
            BindTarget::Mcp(server)
                if policy
                    .mcp_servers()
                    .servers
                    .iter()
                    .any(|s| &s.name == server) =>
            {
                continue;
            }
            BindTarget::Mcp(server) => {
                format!("the MCP server {server}, which neither chock.zon nor config.zon names")
            }
            BindTarget::Plugin(name) => {
                format!("the plugin {name}, and a plugin has no environment to be given it in")
            }
        };
        return Err(format!(
            "{}the secret {} is bound to {what}, so it could not be given as promised; bind it to run_command (.bind = .{{ .env = \"{}\" }}) or remove it (docs/secrets.md)",
            place(spec),
            spec.name,
            spec.bind.env
        ));
    }
    Ok(())
}

fn place(spec: &SecretSpec) -> String {
    match &spec.file {
        Some(file) => format!("{}:{}:{}: ", file.display(), spec.line, spec.column),
        None => String::new(),
    }
}

/// Reads the value of `spec` from its source. The error says why there is
/// none, never what the value is.
pub(crate) async fn read_value(spec: &SecretSpec) -> Result<String, String> {
    let value = match &spec.source {
        SecretSource::Env(var) => std::env::var(var)
            .map_err(|_| format!("the environment variable {var} is not set (or not UTF-8) where chock runs: export it before starting the session"))?,
        SecretSource::File(path) => read_file(&expand(path))?,
        SecretSource::Command { argv, timeout_secs } => {
            run_source(argv, Duration::from_secs(*timeout_secs)).await?
        }
    };
    let value = value
        .strip_suffix('\n')
        .map(|v| v.strip_suffix('\r').unwrap_or(v))
        .unwrap_or(&value)
        .to_owned();
    if value.is_empty() {
        return Err(format!(
            "its value from {} is empty, and an empty secret is not given",
            spec.source.describe()
        ));
    }
    if value.contains('\0') || value.len() > MAX_VALUE {
        return Err(format!(
            "its value from {} holds a NUL byte or is over {MAX_VALUE} bytes, which no environment variable can carry",
            spec.source.describe()
        ));
    }
    Ok(value)
}

/// `~/` is the person's home.
fn expand(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => path.to_owned(),
    }
}

/// A secret's file, refused when anyone but its owner may read or write it.
fn read_file(path: &Path) -> Result<String, String> {
    let meta =
        std::fs::metadata(path).map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "{} can be read or written by others (mode {mode:o}), so it is not used: run `chmod 600 {}`",
            path.display(),
            path.display()
        ));
    }
    if meta.uid() != rustix::process::getuid().as_raw() {
        return Err(format!(
            "{} belongs to another user, so it is not used: a secret's file is your own",
            path.display()
        ));
    }
    std::fs::read_to_string(path).map_err(|err| format!("cannot read {}: {err}", path.display()))
}

/// Runs a source command on the person's machine, outside the sandbox,
/// with no stdin; its stdout is the value.
async fn run_source(argv: &[String], timeout: Duration) -> Result<String, String> {
    let shown = argv.join(" ");
    let Some((program, args)) = argv.split_first() else {
        return Err("its command is empty".to_owned());
    };
    let child = tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|err| format!("the command `{shown}` did not start: {err}"))?;
    let out = match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(Ok(out)) => out,
        Ok(Err(err)) => return Err(format!("waiting for the command `{shown}` failed: {err}")),
        Err(_) => {
            return Err(format!(
                "the command `{shown}` did not finish within {} s and was killed; raise the secret's .timeout_secs if it needs longer",
                timeout.as_secs()
            ));
        }
    };
    if !out.status.success() {
        // Its stderr is the command's own words about why; its stdout could
        // hold a part of the value, so it is not shown.
        let stderr = String::from_utf8_lossy(&out.stderr);
        let said: String = stderr.trim().chars().take(300).collect();
        return Err(format!(
            "the command `{shown}` failed ({}){}",
            out.status,
            if said.is_empty() {
                String::new()
            } else {
                format!(": {said}")
            }
        ));
    }
    String::from_utf8(out.stdout)
        .map_err(|_| format!("the command `{shown}` printed a value that is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_occurrence_of_a_value_given_reads_as_its_name() {
        let r = Redactor::default();
        let mut text = "token=abc123 and abc123 again".to_owned();
        r.redact(&mut text);
        assert_eq!(text, "token=abc123 and abc123 again");
        r.remember("GH", "abc123");
        r.redact(&mut text);
        assert_eq!(text, "token=[secret GH] and [secret GH] again");
    }

    #[test]
    fn given_does_not_show_its_values() {
        let given = Given(vec![("GH_TOKEN".into(), "hunter2".into())]);
        assert_eq!(format!("{given:?}"), "[\"GH_TOKEN\"]");
    }
}
