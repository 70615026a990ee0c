//! Nix in a session: the dev shell its commands run in, `nix_eval` (an
//! evaluation inside the sandbox that can write nothing and reach nothing)
//! and `provide_tool` (a package built on the person's machine, its fetches
//! decided at `nix.net.*`). docs/nix.md, "Nix in a session", is the
//! person's account of all three.

pub mod devshell;
pub(crate) mod eval;
pub mod host;
pub mod programs;
pub(crate) mod provide;

use std::path::{Path, PathBuf};
use std::rc::Rc;

use chock_sandbox::net::HostVerdict;

use crate::{Commands, ToolOutput};
pub use devshell::{DevShell, DevShellConfig, DevShellError};
pub use programs::Programs;

/// What the Nix tools share for one session: the programs commands find,
/// and the person's project directory (a flake's home; never the worktree,
/// which the sandbox writes).
#[derive(Debug, Clone)]
pub struct NixTools {
    pub programs: Rc<Programs>,
    pub project: PathBuf,
    /// Whether `nix` is on chock's PATH (the tools are offered only then).
    pub installed: bool,
}

impl NixTools {
    /// The share for a session of `project`, finding `nix` on PATH.
    pub fn new(programs: Rc<Programs>, project: &Path) -> NixTools {
        NixTools {
            programs,
            project: project.to_owned(),
            installed: on_path("nix"),
        }
    }

    /// Carries out one provide_tool call, already permitted at its
    /// `nix.build.<key>`: evaluate (offline), read what the build would
    /// fetch and decide each host, build with the caches allowed, then put
    /// the package's `bin` first on PATH.
    pub(crate) async fn provide(&self, args: provide::Args, commands: &Commands) -> ToolOutput {
        match self.try_provide(&args, commands).await {
            Ok(text) => ToolOutput::ok(text),
            Err(text) => ToolOutput::error(text),
        }
    }

    async fn try_provide(
        &self,
        args: &provide::Args,
        commands: &Commands,
    ) -> Result<String, String> {
        let timeout = args.timeout();
        let installable = provide::Installable::parse(&args.attribute)?;
        let drv = provide::instantiate(&installable, &self.project, timeout).await?;
        let fetches = provide::fetches(&drv, timeout).await?;
        let what = |host: &str| {
            format!(
                "a Nix build of {} (provide_tool) fetches from {host}",
                args.attribute
            )
        };
        let mut caches = Vec::new();
        if fetches.anything {
            for (host, url) in &fetches.hosts {
                if let HostVerdict::Refuse(why) =
                    commands.decide_nix_net(Some(host), what(host)).await
                {
                    return Err(refused_fetch(&args.attribute, host, url, &why));
                }
            }
            if fetches.opaque || fetches.hosts.is_empty() {
                let text = format!(
                    "a Nix build of {} (provide_tool) names no URL for what it builds",
                    args.attribute
                );
                if let HostVerdict::Refuse(why) = commands.decide_nix_net(None, text).await {
                    return Err(format!(
                        "the build of {} names no URL, and nix.net.build.opaque refuses it: {why}",
                        args.attribute
                    ));
                }
            }
            for cache in provide::substituters(timeout).await {
                let Some(host) = provide::host_of(&cache) else {
                    continue;
                };
                if let HostVerdict::Allow = commands.decide_nix_net(Some(&host), what(&host)).await
                {
                    caches.push(cache);
                }
            }
        }
        let out = provide::realise(&drv, &caches, timeout).await?;
        self.programs.provide(&out);
        Ok(provided_text(&args.attribute, &out))
    }
}

/// Whether `program` is an executable file in a directory of chock's PATH.
pub fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

fn refused_fetch(attribute: &str, host: &str, url: &str, why: &str) -> String {
    let rule = chock_policy::Action::nix_net(host)
        .map(|a| format!(".{{ .action = \"{a}\", .decision = .allow }}"))
        .unwrap_or_else(|_| format!("a nix.net rule for {host}"));
    format!(
        "the build of {attribute} was not started: it fetches {url}, and {host} is not allowed for a Nix build ({why}); a person who wants it built adds {rule} to the project's chock.zon"
    )
}

fn provided_text(attribute: &str, out: &Path) -> String {
    let programs = provide::programs_of(out);
    let hash = devshell::store_hash(out).unwrap_or_default();
    if programs.is_empty() {
        format!(
            "built {attribute}: {}; it has no bin/ directory, so nothing was added to PATH",
            out.display()
        )
    } else {
        format!(
            "built {attribute}: {}; its bin/ is now first on every command's PATH ({}); its programs run as exec.nix.store.{hash}",
            out.display(),
            programs.join(", ")
        )
    }
}
