//! The session's Nix dev shell: the store paths of its closure, which the
//! sandbox shows read-only; the hashes that class a program under them as
//! `exec.devshell.*`; and the environment its commands get (PATH first).
//!
//! It comes from one of two places, both read on the host before the first
//! turn and never from anything a command could have written:
//!
//! - a closure file the operator's config names (`.devshell.closure`, what
//!   the NixOS and home-manager modules write: one store path a line, as
//!   `closureInfo`'s `store-paths`), with an optional environment file in
//!   the form `nix print-dev-env --json` prints (`.devshell.env`);
//! - the project's own `flake.nix` (`devShells.<system>.default`) or
//!   `shell.nix`, evaluated and realised by `nix print-dev-env` in the
//!   person's project directory (not the session's worktree), where the
//!   operator's config says `.devshell.project = true`.

use std::collections::HashSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chock_policy::is_store_hash;

use super::host::{NixCommand, Ran};

/// A closure file or environment file larger than this is refused: a dev
/// shell's closure is hundreds of lines, not millions.
pub const FILE_BOUND: u64 = 8 * 1024 * 1024;

/// The variables a dev shell never sets in a command's environment: the
/// sandbox's own (home, temporary directories, the terminal), the build's
/// (a `mkShell` environment is a build's, with its build directory and
/// outputs), and the ones that would send traffic or trust elsewhere
/// (`nix print-dev-env` points the certificate variables at a file that
/// does not exist).
const NOT_GIVEN: &[&str] = &[
    "HOME",
    "TMPDIR",
    "TMP",
    "TEMP",
    "TEMPDIR",
    "PWD",
    "OLDPWD",
    "SHLVL",
    "TERM",
    "SHELL",
    "USER",
    "LOGNAME",
    "NIX_BUILD_TOP",
    "NIX_BUILD_CORES",
    "NIX_LOG_FD",
    "NIX_STORE",
    "NIX_ENFORCE_PURITY",
    "NIX_SSL_CERT_FILE",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "CURL_CA_BUNDLE",
    "GIT_SSL_CAINFO",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "builder",
    "out",
    "outputs",
    "system",
    "name",
    "shell",
    "shellHook",
    "stdenv",
    "phases",
    "doCheck",
    "doInstallCheck",
    "dontAddDisableDepTrack",
    "preferLocalBuild",
    "strictDeps",
    "CHOCK_SESSION",
];

/// Where a dev shell came from, for the session's notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The operator's closure file.
    Closure(PathBuf),
    /// The project's `flake.nix` or `shell.nix`, by its path.
    Project(PathBuf),
}

/// A dev shell, read and checked.
#[derive(Debug, Clone)]
pub struct DevShell {
    pub origin: Origin,
    /// Every store path of the closure, top-level (`/nix/store/<hash>-<name>`).
    pub paths: Vec<PathBuf>,
    /// Their hashes, which class a program as `exec.devshell.*`.
    pub hashes: HashSet<String>,
    /// The directories a command finds programs in first, each in the
    /// closure.
    pub path: Vec<PathBuf>,
    /// The other variables the shell sets.
    pub env: Vec<(String, String)>,
}

/// Why there is no dev shell: each says what was read and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DevShellError {
    #[error("the dev shell's {what} {} (.devshell.{field}) cannot be read: {detail}", path.display())]
    Unreadable {
        what: &'static str,
        field: &'static str,
        path: PathBuf,
        detail: String,
    },
    #[error("line {line} of the dev shell's closure file {} is '{text}', which is not a store path (/nix/store/<hash>-<name>); the file lists one store path a line, as closureInfo's store-paths does", file.display())]
    NotAStorePath {
        file: PathBuf,
        line: usize,
        text: String,
    },
    #[error("the dev shell's closure file {} names {}, which is not in this machine's store; build the shell again (or collect no garbage under it) and restart the session", file.display(), path.display())]
    NotInStore { file: PathBuf, path: PathBuf },
    #[error("the dev shell's closure file {} lists no store path", file.display())]
    Empty { file: PathBuf },
    #[error("the dev shell's environment file {} is not what `nix print-dev-env --json` prints ({detail})", file.display())]
    BadEnv { file: PathBuf, detail: String },
    #[error("the project's dev shell ({}) could not be made: {detail}", file.display())]
    Project { file: PathBuf, detail: String },
}

/// The `.devshell` block of config.zon.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DevShellConfig {
    /// A file listing the closure's store paths, one a line.
    #[serde(default)]
    pub closure: Option<PathBuf>,
    /// A file of the shell's variables, as `nix print-dev-env --json` prints.
    #[serde(default)]
    pub env: Option<PathBuf>,
    /// Evaluate the project's own `flake.nix` or `shell.nix` (on the host,
    /// before the first turn) where no closure file is named.
    #[serde(default)]
    pub project: bool,
    /// How long the project's shell may take to evaluate and build.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// The default bound on making the project's dev shell.
pub const PROJECT_TIMEOUT: Duration = Duration::from_secs(600);

impl DevShellConfig {
    /// Whether the block asks for a dev shell at all.
    pub fn wanted(&self) -> bool {
        self.closure.is_some() || self.project
    }
}

impl DevShell {
    /// The dev shell `config` names for `project`: its closure file, else
    /// the project's own shell where it may be evaluated; `Ok(None)` where
    /// neither applies.
    pub async fn load(
        config: &DevShellConfig,
        project: &Path,
    ) -> Result<Option<DevShell>, DevShellError> {
        if let Some(closure) = &config.closure {
            return DevShell::from_files(closure, config.env.as_deref()).map(Some);
        }
        if config.project {
            let timeout = config
                .timeout_secs
                .map_or(PROJECT_TIMEOUT, Duration::from_secs);
            return DevShell::from_project(project, timeout).await;
        }
        Ok(None)
    }

    /// A dev shell from a closure file and, optionally, an environment
    /// file. Without one, PATH is the `bin` of every closure path that has
    /// one, in the file's order.
    pub fn from_files(closure: &Path, env: Option<&Path>) -> Result<DevShell, DevShellError> {
        let text = read_bounded(closure, "closure file", "closure")?;
        let paths = store_paths(closure, &text)?;
        let variables = match env {
            Some(env) => {
                let text = read_bounded(env, "environment file", "env")?;
                parse_env(&text).map_err(|detail| DevShellError::BadEnv {
                    file: env.to_owned(),
                    detail,
                })?
            }
            None => Vec::new(),
        };
        Ok(DevShell::assemble(
            Origin::Closure(closure.to_owned()),
            paths,
            variables,
            env.is_some(),
        ))
    }

    /// The project's own dev shell: `nix print-dev-env --json` over its
    /// `flake.nix` (`devShells.<system>.default`) or `shell.nix`, run in the
    /// person's project directory, and the closure of every store path its
    /// variables name. `Ok(None)` for a project with neither file.
    pub async fn from_project(
        project: &Path,
        timeout: Duration,
    ) -> Result<Option<DevShell>, DevShellError> {
        let flake = project.join("flake.nix");
        let shell = project.join("shell.nix");
        let (file, args): (PathBuf, Vec<String>) = if flake.is_file() {
            (
                flake,
                vec![
                    "print-dev-env".into(),
                    "--json".into(),
                    "--no-write-lock-file".into(),
                    project.display().to_string(),
                ],
            )
        } else if shell.is_file() {
            (
                shell.clone(),
                vec![
                    "print-dev-env".into(),
                    "--json".into(),
                    "--file".into(),
                    shell.display().to_string(),
                ],
            )
        } else {
            return Ok(None);
        };
        let failed = |detail: String| DevShellError::Project {
            file: file.clone(),
            detail,
        };
        let ran = NixCommand::nix(&args)
            .current_dir(project)
            .timeout(timeout)
            .run()
            .await
            .map_err(|err| failed(err.to_string()))?;
        let json = ran.success().map_err(failed)?;
        let variables =
            parse_env(&json).map_err(|detail| failed(format!("its output: {detail}")))?;
        let roots = referenced_store_paths(&variables);
        let paths = closure_of(&roots, timeout).await.map_err(failed)?;
        Ok(Some(DevShell::assemble(
            Origin::Project(file),
            paths,
            variables,
            true,
        )))
    }

    fn assemble(
        origin: Origin,
        paths: Vec<PathBuf>,
        variables: Vec<(String, String)>,
        has_env: bool,
    ) -> DevShell {
        let hashes: HashSet<String> = paths.iter().filter_map(|p| store_hash(p)).collect();
        let in_closure = |dir: &Path| store_hash(dir).is_some_and(|hash| hashes.contains(&hash));
        let mut path = Vec::new();
        let mut env = Vec::new();
        for (name, value) in variables {
            if name == "PATH" {
                path.extend(std::env::split_paths(&value).filter(|dir| in_closure(dir)));
            } else if !NOT_GIVEN.contains(&name.as_str()) {
                env.push((name, value));
            }
        }
        if !has_env {
            path = paths
                .iter()
                .map(|p| p.join("bin"))
                .filter(|bin| bin.is_dir())
                .collect();
        }
        path.dedup();
        DevShell {
            origin,
            paths,
            hashes,
            path,
            env,
        }
    }

    /// The session's notice: where the shell came from and how much of the
    /// store it brings.
    pub fn notice(&self) -> String {
        let from = match &self.origin {
            Origin::Closure(file) => format!("the closure file {}", file.display()),
            Origin::Project(file) => format!("the project's {}", file.display()),
        };
        format!(
            "dev shell from {from}: {} mounted read-only, {} first on PATH; its programs run as exec.devshell.<program>, any other store path as exec.nix.store.<hash>",
            counted(self.paths.len(), "store path"),
            counted(self.path.len(), "directory"),
        )
    }
}

fn counted(n: usize, what: &str) -> String {
    match (n, what) {
        (1, _) => format!("1 {what}"),
        (_, "directory") => format!("{n} directories"),
        _ => format!("{n} {what}s"),
    }
}

/// `path`'s text, refused when it is not a readable file or over
/// [`FILE_BOUND`].
fn read_bounded(
    path: &Path,
    what: &'static str,
    field: &'static str,
) -> Result<String, DevShellError> {
    let unreadable = |detail: String| DevShellError::Unreadable {
        what,
        field,
        path: path.to_owned(),
        detail,
    };
    let file = std::fs::File::open(path).map_err(|err| unreadable(err.to_string()))?;
    let meta = file.metadata().map_err(|err| unreadable(err.to_string()))?;
    if !meta.is_file() {
        return Err(unreadable("it is not a regular file".to_owned()));
    }
    if meta.len() > FILE_BOUND {
        return Err(unreadable(format!(
            "it is {} bytes, over the bound of {FILE_BOUND}",
            meta.len()
        )));
    }
    let mut text = String::new();
    file.take(FILE_BOUND)
        .read_to_string(&mut text)
        .map_err(|err| unreadable(err.to_string()))?;
    Ok(text)
}

/// The store paths a closure file lists, each checked to be one and to be
/// present.
fn store_paths(file: &Path, text: &str) -> Result<Vec<PathBuf>, DevShellError> {
    let mut paths = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let path = PathBuf::from(line);
        if !is_top_store_path(&path) {
            return Err(DevShellError::NotAStorePath {
                file: file.to_owned(),
                line: index + 1,
                text: line.chars().take(200).collect(),
            });
        }
        if std::fs::symlink_metadata(&path).is_err() {
            return Err(DevShellError::NotInStore {
                file: file.to_owned(),
                path,
            });
        }
        paths.push(path);
    }
    if paths.is_empty() {
        return Err(DevShellError::Empty {
            file: file.to_owned(),
        });
    }
    Ok(paths)
}

/// `/nix/store/<32 base-32 characters>-<name>`, and nothing under it.
pub fn is_top_store_path(path: &Path) -> bool {
    let Ok(rest) = path.strip_prefix("/nix/store") else {
        return false;
    };
    let mut parts = rest.components();
    let (Some(first), None) = (parts.next(), parts.next()) else {
        return false;
    };
    let Some(first) = first.as_os_str().to_str() else {
        return false;
    };
    first.split_once('-').is_some_and(|(hash, name)| {
        is_store_hash(hash)
            && !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+-._?=".contains(&b))
    })
}

/// The hash of the store path `path` lies in (`None` outside the store).
pub fn store_hash(path: &Path) -> Option<String> {
    let rest = path.strip_prefix("/nix/store").ok()?;
    let first = rest.components().next()?.as_os_str().to_str()?;
    let hash = first.split('-').next()?;
    is_store_hash(hash).then(|| hash.to_owned())
}

/// The exported string variables of `nix print-dev-env --json`'s output
/// (`{"variables": {"NAME": {"type": "exported", "value": "..."}}}`); the
/// shell's own variables, arrays and functions are not a command's
/// environment.
pub fn parse_env(text: &str) -> Result<Vec<(String, String)>, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|err| err.to_string())?;
    let variables = value
        .get("variables")
        .and_then(serde_json::Value::as_object)
        .ok_or("it has no \"variables\" object")?;
    let mut env = Vec::new();
    for (name, var) in variables {
        let exported = var.get("type").and_then(serde_json::Value::as_str) == Some("exported");
        let Some(text) = var.get("value").and_then(serde_json::Value::as_str) else {
            continue;
        };
        if exported && is_variable_name(name) && !text.contains('\0') {
            env.push((name.clone(), text.to_owned()));
        }
    }
    Ok(env)
}

fn is_variable_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The top-level store paths the variables' values name.
fn referenced_store_paths(variables: &[(String, String)]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for (_, value) in variables {
        let mut rest = value.as_str();
        while let Some(at) = rest.find("/nix/store/") {
            let tail = &rest[at..];
            let end = tail["/nix/store/".len()..]
                .find(|c: char| c == '/' || c == ':' || c.is_whitespace() || c == '"' || c == '\'')
                .map_or(tail.len(), |i| i + "/nix/store/".len());
            let path = PathBuf::from(&tail[..end]);
            if is_top_store_path(&path) && !found.contains(&path) {
                found.push(path);
            }
            rest = &tail[end..];
        }
    }
    found
}

/// The closure of `roots` (`nix-store --query --requisites`), every path
/// present.
async fn closure_of(roots: &[PathBuf], timeout: Duration) -> Result<Vec<PathBuf>, String> {
    if roots.is_empty() {
        return Ok(Vec::new());
    }
    let mut args = vec!["--query".to_owned(), "--requisites".to_owned()];
    args.extend(roots.iter().map(|r| r.display().to_string()));
    let ran: Ran = NixCommand::store(&args)
        .timeout(timeout)
        .run()
        .await
        .map_err(|err| err.to_string())?;
    let text = ran.success()?;
    Ok(text
        .lines()
        .map(PathBuf::from)
        .filter(|p| is_top_store_path(p))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "0123456789abcdfghijklmnpqrsvwxyz";

    #[test]
    fn a_store_path_is_the_store_a_hash_and_a_name_and_nothing_under_it() {
        assert!(is_top_store_path(Path::new(&format!(
            "/nix/store/{HASH}-hello-2.12"
        ))));
        assert!(!is_top_store_path(Path::new(&format!(
            "/nix/store/{HASH}-hello/bin"
        ))));
        assert!(!is_top_store_path(Path::new("/nix/store/short-hello")));
        assert!(!is_top_store_path(Path::new(&format!("/tmp/{HASH}-hello"))));
        assert!(!is_top_store_path(Path::new(&format!(
            "/nix/store/{HASH}-"
        ))));
        assert_eq!(
            store_hash(Path::new(&format!("/nix/store/{HASH}-hello/bin/hello"))).as_deref(),
            Some(HASH)
        );
    }

    #[test]
    fn only_exported_strings_of_print_dev_env_are_a_commands_environment() {
        let env = parse_env(&format!(
            r#"{{"variables": {{
                "PATH": {{"type": "exported", "value": "/nix/store/{HASH}-cargo/bin:/usr/bin"}},
                "RUST_SRC": {{"type": "exported", "value": "/nix/store/{HASH}-src"}},
                "localvar": {{"type": "var", "value": "x"}},
                "arr": {{"type": "array", "value": ["a"]}},
                "bad name": {{"type": "exported", "value": "x"}}
            }}}}"#
        ))
        .unwrap();
        assert_eq!(
            env,
            vec![
                (
                    "PATH".to_owned(),
                    format!("/nix/store/{HASH}-cargo/bin:/usr/bin")
                ),
                ("RUST_SRC".to_owned(), format!("/nix/store/{HASH}-src")),
            ]
        );
        assert!(parse_env("[]").is_err());
        assert!(parse_env("not json").is_err());
    }

    #[test]
    fn the_store_paths_a_value_names_are_found_once_each() {
        let vars = vec![(
            "PATH".to_owned(),
            format!(
                "/nix/store/{HASH}-a/bin:/nix/store/{HASH}-a/sbin:/usr/bin 'x/nix/store/{HASH}-b'"
            ),
        )];
        assert_eq!(
            referenced_store_paths(&vars),
            vec![
                PathBuf::from(format!("/nix/store/{HASH}-a")),
                PathBuf::from(format!("/nix/store/{HASH}-b")),
            ]
        );
    }
}
