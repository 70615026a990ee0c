//! Where an approved `git push` goes, read on the host before the call runs.
//!
//! The credential socket answers only for the remote the push names, so that
//! remote is worked out here, outside the sandbox, from the argument vector
//! and the workspace's git config (`git remote get-url --push`, which applies
//! `pushurl`, `insteadOf` and `pushInsteadOf` as the push itself will). The
//! socket's answers are bound to the protocol, host (with port) and path of
//! that URL; a request git makes for anything else gets nothing.

use std::path::Path;
use std::process::Command;

/// The remote a push reaches, as far as credentials go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushRemote {
    /// An `http://` or `https://` URL: served by the per-call socket.
    Http(HttpRemote),
    /// An ssh remote (`ssh://...` or `[user@]host:path`): carried through
    /// the router with the person's agent proxied (`super::ssh`).
    Ssh(String),
    /// Anything else (a local path, `file://`, an unknown transport): runs
    /// as before, with no credential socket.
    Other,
}

/// The parts of an http(s) remote a credential is asked for with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRemote {
    /// `http` or `https`.
    pub protocol: String,
    /// The host as git's credential protocol names it: with `:port` when
    /// the URL has one.
    pub host: String,
    /// The path without its leading `/`.
    pub path: String,
    /// The user named in the URL, if any.
    pub username: Option<String>,
}

/// Options of `git push` whose value is the next word.
const VALUE_OPTIONS: &[&str] = &["-o", "--push-option", "--repo", "--receive-pack", "--exec"];

/// The `<repository>` word of a `git push` argument vector (global options
/// before `push` are the plain ones the shim lets through), or the
/// `--repo=` value; `None` when the push names none.
pub fn repository_word(argv: &[String]) -> Option<String> {
    let start = argv.iter().position(|word| word == "push")? + 1;
    let mut words = argv[start..].iter();
    let mut repo = None;
    while let Some(word) = words.next() {
        if word == "--" {
            return words.next().cloned().or(repo);
        }
        if let Some(value) = word.strip_prefix("--repo=") {
            repo = Some(value.to_owned());
        } else if word == "--repo" {
            repo = words.next().cloned();
        } else if VALUE_OPTIONS.contains(&word.as_str()) {
            words.next();
        } else if !word.starts_with('-') {
            return Some(word.clone());
        }
    }
    repo
}

/// The remote `argv` (a `git push`) reaches from `workspace`, asking the
/// git found there (a repository of the person's own).
pub fn push_remote(workspace: &Path, argv: &[String]) -> PushRemote {
    push_remote_with(
        &|args: &[&str]| {
            let mut cmd = Command::new("git");
            cmd.args(args)
                .current_dir(workspace)
                .env("GIT_TERMINAL_PROMPT", "0");
            cmd
        },
        argv,
    )
}

/// [`push_remote`], asking the git `git` makes (for a session's checkout,
/// one pointed at the git directories the host recorded).
pub fn push_remote_with(git: &dyn Fn(&[&str]) -> Command, argv: &[String]) -> PushRemote {
    let word = repository_word(argv).unwrap_or_else(|| default_remote(git));
    let url = git_out(git, &["remote", "get-url", "--push", "--", &word]).unwrap_or(word);
    classify_url(&url)
}

/// The remote a bare `git push` uses: the branch's push remote, the
/// repository's push default, the branch's remote, then `origin`.
fn default_remote(git: &dyn Fn(&[&str]) -> Command) -> String {
    let branch = git_out(git, &["symbolic-ref", "--quiet", "--short", "HEAD"]);
    let mut keys = Vec::new();
    if let Some(branch) = &branch {
        keys.push(format!("branch.{branch}.pushRemote"));
    }
    keys.push("remote.pushDefault".to_owned());
    if let Some(branch) = &branch {
        keys.push(format!("branch.{branch}.remote"));
    }
    keys.iter()
        .find_map(|key| git_out(git, &["config", "--get", key]))
        .unwrap_or_else(|| "origin".to_owned())
}

fn git_out(git: &dyn Fn(&[&str]) -> Command, args: &[&str]) -> Option<String> {
    let out = git(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let line = text.lines().next()?.trim();
    (out.status.success() && !line.is_empty()).then(|| line.to_owned())
}

/// Sorts a remote URL by transport.
pub fn classify_url(url: &str) -> PushRemote {
    if let Some((scheme, rest)) = url.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        return match scheme.as_str() {
            "http" | "https" => {
                parse_http(&scheme, rest).map_or(PushRemote::Other, PushRemote::Http)
            }
            "ssh" | "git+ssh" | "ssh+git" => PushRemote::Ssh(url.to_owned()),
            _ => PushRemote::Other,
        };
    }
    // scp-like syntax: a colon before any slash, and not a drive-ish or
    // path-ish word (git treats `./a:b` and `/a:b` as paths).
    match (url.find(':'), url.find('/')) {
        (Some(colon), slash) if colon > 0 && slash.is_none_or(|s| colon < s) => {
            PushRemote::Ssh(url.to_owned())
        }
        _ => PushRemote::Other,
    }
}

fn parse_http(protocol: &str, rest: &str) -> Option<HttpRemote> {
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (userinfo, host) = match authority.rsplit_once('@') {
        Some((user, host)) => (Some(user), host),
        None => (None, authority),
    };
    if host.is_empty() {
        return None;
    }
    let username = userinfo
        .map(|info| info.split_once(':').map_or(info, |(user, _)| user))
        .filter(|user| !user.is_empty())
        .map(str::to_owned);
    let path = path.split(['?', '#']).next().unwrap_or_default();
    Some(HttpRemote {
        protocol: protocol.to_owned(),
        host: host.to_ascii_lowercase(),
        path: path.trim_end_matches('/').to_owned(),
        username,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn the_repository_word_skips_options_and_their_values() {
        for (line, word) in [
            ("git push", None),
            ("git push -u origin main", Some("origin")),
            ("git --no-pager push -o ci.skip --force up HEAD", Some("up")),
            ("git push --repo=mine", Some("mine")),
            ("git push --repo mine", Some("mine")),
            ("git push -- origin", Some("origin")),
        ] {
            assert_eq!(repository_word(&words(line)).as_deref(), word, "{line}");
        }
    }

    #[test]
    fn urls_are_sorted_by_transport_and_http_ones_split_for_the_credential_protocol() {
        assert_eq!(
            classify_url("https://Me@Example.COM:8443/org/repo.git/"),
            PushRemote::Http(HttpRemote {
                protocol: "https".into(),
                host: "example.com:8443".into(),
                path: "org/repo.git".into(),
                username: Some("Me".into()),
            })
        );
        assert_eq!(
            classify_url("http://allowed.test/r.git"),
            PushRemote::Http(HttpRemote {
                protocol: "http".into(),
                host: "allowed.test".into(),
                path: "r.git".into(),
                username: None,
            })
        );
        assert!(matches!(
            classify_url("git@github.com:o/r.git"),
            PushRemote::Ssh(_)
        ));
        assert!(matches!(
            classify_url("ssh://git@host/r.git"),
            PushRemote::Ssh(_)
        ));
        assert_eq!(classify_url("/srv/git/r.git"), PushRemote::Other);
        assert_eq!(classify_url("../r.git"), PushRemote::Other);
        assert_eq!(classify_url("file:///srv/r.git"), PushRemote::Other);
        assert_eq!(classify_url("https://"), PushRemote::Other);
    }

    #[test]
    fn a_remote_name_is_read_through_the_workspaces_config() {
        let tmp = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            chock_testkit::git(tmp.path(), args);
        };
        run(&["init", "-q"]);
        run(&["remote", "add", "origin", "http://fetch.test/r.git"]);
        run(&[
            "remote",
            "set-url",
            "--push",
            "origin",
            "https://push.test/r.git",
        ]);
        run(&["remote", "add", "other", "git@ssh.test:r.git"]);
        let PushRemote::Http(origin) = push_remote(tmp.path(), &words("git push")) else {
            panic!("origin is http");
        };
        assert_eq!(
            (origin.protocol.as_str(), origin.host.as_str()),
            ("https", "push.test")
        );
        assert!(matches!(
            push_remote(tmp.path(), &words("git push other")),
            PushRemote::Ssh(_)
        ));
        assert_eq!(
            push_remote(tmp.path(), &words("git push ../elsewhere")),
            PushRemote::Other
        );
    }
}
