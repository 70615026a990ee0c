//! `provide_tool`: one package attribute built or substituted on the
//! person's machine, outside the sandbox, its `bin` put first on the PATH
//! of every later command and its closure shown read-only (the sandbox
//! shows the store whole, read-only).
//!
//! The attribute is decided at `nix.build.<key>` before anything runs: the
//! project's flake's `.#hello` is `packages.<system>.hello` (the first place
//! `nix build .#hello` looks), a registry flake's `nixpkgs#ripgrep` is
//! `nixpkgs.ripgrep`. The tool is offered only where some `nix.build` rule
//! permits. The build then fetches in the phases docs/nix.md describes:
//! evaluation runs offline and fetches nothing; each fixed-output
//! derivation still to be built names its URLs, read from the derivation
//! before the build, and each URL's host is decided at
//! `nix.net.<reversed host>` (one refused refuses the build, naming the
//! rule to add); each binary cache is decided the same way and the build
//! uses only the caches allowed; and a build with something to build that
//! names no URL at all is decided at `nix.net.build.opaque`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chock_policy::Action;
use schemars::JsonSchema;
use serde::Deserialize;

use super::devshell::is_top_store_path;
use super::host::NixCommand;
use crate::ToolError;
use crate::tool::{Decide, Offered, Tool};

pub(crate) const DEFAULT_TIMEOUT_SECS: u64 = 600;
pub(crate) const MAX_TIMEOUT_SECS: u64 = 3600;

/// Have one package built or substituted on the person's machine (outside the sandbox)
/// and put its bin/ first on the PATH of every later command: ".#name" for the project's
/// flake, "nixpkgs#name" for a flake of the machine's registry. Its programs then run as
/// exec.nix.store.<hash>. Offered only where a nix.build rule permits.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The attribute: .#<attribute path> (the project's flake) or <registry name>#<attribute path>
    pub attribute: String,
    /// Seconds the build may take (default 600, at most 3600)
    pub timeout_secs: Option<u64>,
}

/// Which flake an attribute is of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Flake {
    /// The project's own `flake.nix`.
    Project,
    /// A flake of the machine's registry, by name.
    Registry(String),
}

/// An attribute as the tool reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Installable {
    pub flake: Flake,
    /// The attribute path as given after `#`.
    pub attr: String,
}

impl Installable {
    pub(crate) fn parse(text: &str) -> Result<Installable, String> {
        let (flake, attr) = text.trim().split_once('#').ok_or_else(|| {
            format!("'{text}' names no flake: write .#<attribute> for the project's flake or nixpkgs#<attribute>")
        })?;
        let flake = match flake {
            "." | "" => Flake::Project,
            name if !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') =>
            {
                Flake::Registry(name.to_owned())
            }
            other => {
                return Err(format!(
                    "'{other}' is not a flake this tool reads: the project's flake is '.', a registry flake is named by letters, digits, '-' and '_' (nixpkgs)"
                ));
            }
        };
        let installable = Installable {
            flake,
            attr: attr.to_owned(),
        };
        Action::nix_build(&installable.key()).map_err(|err| err.to_string())?;
        Ok(installable)
    }

    /// The attribute's name under `nix.build`.
    pub(crate) fn key(&self) -> String {
        match &self.flake {
            Flake::Project if !self.attr.contains('.') => {
                format!("packages.{}.{}", system(), self.attr)
            }
            Flake::Project => self.attr.clone(),
            Flake::Registry(name) => format!("{name}.{}", self.attr),
        }
    }

    /// The installable `nix` is given: the project's directory for its
    /// flake (the person's checkout, never the session's worktree).
    fn reference(&self, project: &Path) -> String {
        match &self.flake {
            Flake::Project if !self.attr.contains('.') => {
                format!("{}#packages.{}.{}", project.display(), system(), self.attr)
            }
            Flake::Project => format!("{}#{}", project.display(), self.attr),
            Flake::Registry(name) => format!("{name}#{}", self.attr),
        }
    }
}

/// The Nix system of this machine, `x86_64-linux`.
pub(crate) fn system() -> String {
    format!("{}-linux", std::env::consts::ARCH)
}

impl Tool for Args {
    const NAME: &'static str = "provide_tool";

    fn check(self) -> Result<Self, ToolError> {
        Installable::parse(&self.attribute).map_err(|detail| ToolError::Arguments {
            tool: "provide_tool",
            detail,
        })?;
        if self.timeout_secs == Some(0) || self.timeout_secs > Some(MAX_TIMEOUT_SECS) {
            return Err(ToolError::Arguments {
                tool: "provide_tool",
                detail: format!("timeout_secs must be between 1 and {MAX_TIMEOUT_SECS}"),
            });
        }
        Ok(self)
    }

    /// At `nix.build.<key>`, where the tool is offered at all.
    fn decided_at(&self, offered: Offered<'_>) -> Decide {
        if !offered.nix_build {
            return Decide::Refuse(
                "provide_tool is not offered in this session: no rule permits a nix.build.<attribute>"
                    .to_owned(),
            );
        }
        match Installable::parse(&self.attribute)
            .and_then(|i| Action::nix_build(&i.key()).map_err(|err| err.to_string()))
        {
            Ok(action) => Decide::At(action),
            Err(err) => Decide::Refuse(err),
        }
    }
}

impl Args {
    pub(crate) fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS))
    }
}

/// What a build will fetch, read before it runs.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Fetches {
    /// Each host a fixed-output derivation still to be built names, with
    /// one of its URLs.
    pub hosts: Vec<(String, String)>,
    /// Whether something is to be built that names no URL.
    pub opaque: bool,
    /// Whether anything is to be built at all.
    pub anything: bool,
}

/// The derivation `installable` evaluates to (offline: evaluation fetches
/// nothing).
pub(crate) async fn instantiate(
    installable: &Installable,
    project: &Path,
    timeout: Duration,
) -> Result<PathBuf, String> {
    let reference = format!("{}.drvPath", installable.reference(project));
    let args = [
        "eval",
        "--offline",
        "--no-write-lock-file",
        "--raw",
        reference.as_str(),
    ]
    .map(str::to_owned);
    let ran = NixCommand::nix(&args)
        .current_dir(project)
        .timeout(timeout)
        .run()
        .await
        .map_err(|err| err.to_string())?;
    let out = ran.success().map_err(|why| {
        format!(
            "{} could not be evaluated: {why}",
            installable.reference(project)
        )
    })?;
    let drv = PathBuf::from(out.trim());
    if !is_top_store_path(&drv) || drv.extension().is_none_or(|e| e != "drv") {
        return Err(format!(
            "the evaluation answered '{}', not a derivation",
            out.trim()
        ));
    }
    Ok(drv)
}

/// What building `drv` would fetch: the closure of derivations, as
/// `nix show-derivation --recursive` prints it, less the outputs already
/// in the store.
pub(crate) async fn fetches(drv: &Path, timeout: Duration) -> Result<Fetches, String> {
    let args = [
        "show-derivation".to_owned(),
        "--recursive".to_owned(),
        drv.display().to_string(),
    ];
    let ran = NixCommand::nix(&args)
        .timeout(timeout)
        .run()
        .await
        .map_err(|err| err.to_string())?;
    let text = ran
        .success()
        .map_err(|why| format!("its derivations could not be read: {why}"))?;
    parse_fetches(&text)
}

/// [`fetches`] from `nix show-derivation`'s JSON.
pub(crate) fn parse_fetches(text: &str) -> Result<Fetches, String> {
    let all: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(text).map_err(|err| format!("nix show-derivation printed {err}"))?;
    let mut fetches = Fetches::default();
    let mut seen = BTreeSet::new();
    for drv in all.values() {
        let outputs = drv.get("outputs").and_then(serde_json::Value::as_object);
        let built = outputs.is_some_and(|outs| {
            outs.values().all(|out| {
                out.get("path")
                    .and_then(serde_json::Value::as_str)
                    .is_some_and(|p| Path::new(p).exists())
            })
        });
        if built {
            continue;
        }
        fetches.anything = true;
        let fixed = outputs.is_some_and(|outs| outs.values().any(|out| out.get("hash").is_some()));
        if !fixed {
            continue;
        }
        let env = drv.get("env");
        let text_of = |key: &str| {
            env.and_then(|e| e.get(key))
                .and_then(serde_json::Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let urls: Vec<String> = text_of("url")
            .split_whitespace()
            .chain(text_of("urls").split_whitespace())
            .map(str::to_owned)
            .collect();
        if urls.is_empty() {
            fetches.opaque = true;
        }
        for url in urls {
            match host_of(&url) {
                Some(host) => {
                    if seen.insert(host.clone()) {
                        fetches.hosts.push((host, url));
                    }
                }
                None => fetches.opaque = true,
            }
        }
    }
    Ok(fetches)
}

/// The host of an http, https or ftp URL.
pub(crate) fn host_of(url: &str) -> Option<String> {
    let parsed = reqwest::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https" | "ftp") {
        return None;
    }
    parsed
        .host_str()
        .map(|h| h.trim_start_matches('[').trim_end_matches(']').to_owned())
}

/// The binary caches this machine's Nix would substitute from.
pub(crate) async fn substituters(timeout: Duration) -> Vec<String> {
    let args = ["show-config".to_owned(), "--json".to_owned()];
    let Ok(ran) = NixCommand::nix(&args).timeout(timeout).run().await else {
        return Vec::new();
    };
    let Ok(text) = ran.success() else {
        return Vec::new();
    };
    let value: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    value
        .pointer("/substituters/value")
        .and_then(serde_json::Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(serde_json::Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Realises `drv` with only the `caches` allowed, and answers its output.
pub(crate) async fn realise(
    drv: &Path,
    caches: &[String],
    timeout: Duration,
) -> Result<PathBuf, String> {
    let args = [
        "--realise".to_owned(),
        drv.display().to_string(),
        "--option".to_owned(),
        "substituters".to_owned(),
        caches.join(" "),
    ];
    let ran = NixCommand::store(&args)
        .timeout(timeout)
        .run()
        .await
        .map_err(|err| err.to_string())?;
    let text = ran
        .success()
        .map_err(|why| format!("the build failed: {why}"))?;
    text.lines()
        .map(PathBuf::from)
        .find(|p| is_top_store_path(p))
        .ok_or_else(|| format!("the build printed no output path ({})", text.trim()))
}

/// The `bin` entries of `out`, for the result.
pub(crate) fn programs_of(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join("bin"))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attribute_is_keyed_by_where_nix_build_would_find_it() {
        let project = Installable::parse(".#hello").unwrap();
        assert_eq!(project.key(), format!("packages.{}.hello", system()));
        let full = Installable::parse(".#packages.x86_64-linux.hello").unwrap();
        assert_eq!(full.key(), "packages.x86_64-linux.hello");
        let registry = Installable::parse("nixpkgs#ripgrep").unwrap();
        assert_eq!(registry.key(), "nixpkgs.ripgrep");
        assert!(Installable::parse("ripgrep").is_err());
        assert!(Installable::parse("github:x/y#z").is_err());
        assert!(Installable::parse(".#a b").is_err());
        assert!(Installable::parse(".#").is_err());
    }

    #[test]
    fn a_fixed_output_derivation_still_to_build_names_its_hosts() {
        let json = r#"{
          "/nix/store/aaaa-f.txt.drv": {
            "outputs": {"out": {"path": "/nix/store/does-not-exist-f.txt", "hash": "abc", "hashAlgo": "sha256"}},
            "env": {"url": "http://127.0.0.1:8080/f.txt", "urls": "https://mirror.example.org/f.txt"}
          },
          "/nix/store/bbbb-tool.drv": {
            "outputs": {"out": {"path": "/nix/store/does-not-exist-tool"}},
            "env": {}
          },
          "/nix/store/cccc-done.drv": {
            "outputs": {"out": {"path": "/"}},
            "env": {"url": "http://never.example/"}
          }
        }"#;
        let fetches = parse_fetches(json).unwrap();
        assert_eq!(
            fetches.hosts,
            vec![
                (
                    "127.0.0.1".to_owned(),
                    "http://127.0.0.1:8080/f.txt".to_owned()
                ),
                (
                    "mirror.example.org".to_owned(),
                    "https://mirror.example.org/f.txt".to_owned()
                ),
            ]
        );
        assert!(fetches.anything);
        assert!(!fetches.opaque);
    }

    #[test]
    fn a_fixed_output_derivation_without_a_url_is_opaque() {
        let json = r#"{"/nix/store/aaaa-git.drv": {
            "outputs": {"out": {"path": "/nix/store/does-not-exist-src", "hash": "abc"}},
            "env": {}
        }}"#;
        assert!(parse_fetches(json).unwrap().opaque);
        assert!(parse_fetches("[]").is_err());
    }
}
