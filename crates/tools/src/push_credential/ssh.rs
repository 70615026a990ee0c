//! What an approved push to an ssh remote is given: the remote's host and
//! port as the person's own ssh would reach them, read on the host, and the
//! `GIT_SSH_COMMAND` that makes git's ssh inside the sandbox use them.
//!
//! The person's `~/.ssh/config` is read on the host only, through
//! `ssh -G` (which prints the options ssh would use for that host), and the
//! ones that decide where and as whom ssh connects — `HostName`, `Port`,
//! `User`, `HostKeyAlias` — are passed to the ssh inside as `-o` options,
//! with `-F /dev/null` so nothing else of the config applies there. So a
//! remote written with a `Host` alias reaches the host the alias names, as
//! in the person's terminal; options that would run programs or open other
//! connections (`ProxyCommand`, `ProxyJump`, `LocalCommand`, forwardings,
//! `Match exec`'s effects) do not follow the push into the sandbox, and
//! keys come only from the person's agent (`IdentityFile`s are files the
//! sandbox does not have).
//!
//! Host keys are checked against the person's `known_hosts` (and the
//! system's), bound read-only into the call, with
//! `StrictHostKeyChecking=yes`: a host the person has never connected to
//! fails rather than being trusted on first use.

use std::path::{Path, PathBuf};
use std::process::Command;

/// An ssh remote's parts as the URL gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshUrl {
    pub host: String,
    pub port: Option<u16>,
    pub user: Option<String>,
}

/// Splits `ssh://[user@]host[:port]/path` (and `git+ssh://`, `ssh+git://`)
/// or scp-like `[user@]host:path`; `None` when no host can be read.
pub fn parse_ssh_url(url: &str) -> Option<SshUrl> {
    let (authority, explicit_port) = match url.split_once("://") {
        Some((_, rest)) => (rest.split('/').next().unwrap_or_default(), true),
        None => (url.split_once(':')?.0, false),
    };
    let (user, hostport) = match authority.rsplit_once('@') {
        Some((user, rest)) => (Some(user.to_owned()).filter(|u| !u.is_empty()), rest),
        None => (None, authority),
    };
    let (host, port) = if let Some(inner) = hostport.strip_prefix('[') {
        let (host, after) = inner.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else if explicit_port {
        match hostport.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (hostport, None),
        }
    } else {
        (hostport, None)
    };
    let port = match port.filter(|p| !p.is_empty()) {
        Some(port) => Some(port.parse().ok()?),
        None => None,
    };
    valid_host(host).then(|| SshUrl {
        host: host.to_owned(),
        port,
        user,
    })
}

/// A host name or address ssh and the router can both take, and one that
/// cannot be read as an option.
fn valid_host(host: &str) -> bool {
    !host.is_empty()
        && !host.starts_with('-')
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':'))
}

/// Where the push's ssh connects, after the person's ssh config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTarget {
    /// The host ssh dials (`HostName`), and the one the router decides.
    pub host: String,
    pub port: u16,
    pub user: Option<String>,
    pub host_key_alias: Option<String>,
}

/// The person's ssh config file under `home`, when there is one.
fn person_config(home: Option<&Path>) -> Option<PathBuf> {
    home.map(|home| home.join(".ssh/config"))
        .filter(|path| path.is_file())
}

/// Reads the target of `url` the way the person's ssh would (`ssh -G`
/// with their `~/.ssh/config`, or none); the URL's own values when ssh
/// cannot be asked.
pub fn resolve(url: &SshUrl, home: Option<&Path>) -> SshTarget {
    let mut target = SshTarget {
        host: url.host.to_ascii_lowercase(),
        port: url.port.unwrap_or(22),
        user: url.user.clone(),
        host_key_alias: None,
    };
    let config = person_config(home).unwrap_or_else(|| PathBuf::from("/dev/null"));
    let mut cmd = Command::new("ssh");
    cmd.arg("-G").arg("-F").arg(&config);
    if let Some(port) = url.port {
        cmd.arg("-p").arg(port.to_string());
    }
    if let Some(user) = &url.user {
        cmd.arg("-l").arg(user);
    }
    cmd.arg("--").arg(&url.host);
    let Ok(out) = cmd.stdin(std::process::Stdio::null()).output() else {
        return target;
    };
    if !out.status.success() {
        return target;
    }
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some((key, value)) = line.split_once(' ') else {
            continue;
        };
        match key {
            "hostname" if valid_host(value) => {
                target.host = value.to_ascii_lowercase();
            }
            "port" => target.port = value.parse().unwrap_or(target.port),
            "user" => target.user = Some(value.to_owned()),
            "hostkeyalias" if value != "none" => target.host_key_alias = Some(value.to_owned()),
            _ => {}
        }
    }
    target
}

/// The known-hosts files handed to the call: the person's (under `home`)
/// and the system's, those that exist.
pub fn known_hosts(home: Option<&Path>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let user = home
        .map(|home| {
            ["known_hosts", "known_hosts2"]
                .iter()
                .map(|name| home.join(".ssh").join(name))
                .filter(|path| path.is_file())
                .collect()
        })
        .unwrap_or_default();
    let global = ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"]
        .iter()
        .map(PathBuf::from)
        .filter(|path| path.is_file())
        .collect();
    (user, global)
}

/// The hidden `chock` subcommand ssh runs as its `ProxyCommand`.
pub const CONNECT_SUBCOMMAND: &str = "ssh-connect";

/// The `GIT_SSH_COMMAND` for the push: ssh with no config file, host keys
/// strictly from `user_known`/`global_known`, no prompts, and the route
/// through `exe ssh-connect` pinned to `target`'s host and port.
pub fn ssh_command(
    exe: &Path,
    target: &SshTarget,
    user_known: &[PathBuf],
    global_known: &[PathBuf],
) -> String {
    let proxy = format!(
        "ProxyCommand={} {CONNECT_SUBCOMMAND} --only {} %h %p",
        shell_word(&exe.to_string_lossy()).replace('%', "%%"),
        shell_word(&authority(&target.host, target.port)),
    );
    let mut options = vec![
        "BatchMode=yes".to_owned(),
        "StrictHostKeyChecking=yes".to_owned(),
        "UpdateHostKeys=no".to_owned(),
        "CheckHostIP=no".to_owned(),
        "ControlMaster=no".to_owned(),
        "ControlPath=none".to_owned(),
        "ForwardAgent=no".to_owned(),
        "ClearAllForwardings=yes".to_owned(),
        format!("HostName={}", target.host),
        format!("Port={}", target.port),
        format!("UserKnownHostsFile={}", files_or_null(user_known)),
        format!("GlobalKnownHostsFile={}", files_or_null(global_known)),
        proxy,
    ];
    if let Some(user) = &target.user {
        options.push(format!("User={user}"));
    }
    if let Some(alias) = &target.host_key_alias {
        options.push(format!("HostKeyAlias={alias}"));
    }
    let mut command = "ssh -F /dev/null".to_owned();
    for option in options {
        command.push_str(" -o ");
        command.push_str(&shell_word(&option));
    }
    command
}

/// `host:port`, with brackets around an IPv6 address.
pub fn authority(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// A list of files for an ssh option (space-separated, each in double
/// quotes so a path with a space stays one), or `/dev/null`.
fn files_or_null(files: &[PathBuf]) -> String {
    if files.is_empty() {
        return "/dev/null".to_owned();
    }
    files
        .iter()
        .map(|path| format!("\"{}\"", path.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` as one word for `sh`.
fn shell_word(text: &str) -> String {
    if !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-=:,@%+".contains(&b))
    {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_urls_split_into_user_host_and_port() {
        let url = |host: &str, port: Option<u16>, user: Option<&str>| SshUrl {
            host: host.into(),
            port,
            user: user.map(str::to_owned),
        };
        assert_eq!(
            parse_ssh_url("git@github.com:org/repo.git"),
            Some(url("github.com", None, Some("git")))
        );
        assert_eq!(
            parse_ssh_url("ssh://allowed.test:2222/srv/r.git"),
            Some(url("allowed.test", Some(2222), None))
        );
        assert_eq!(
            parse_ssh_url("git+ssh://me@[::1]:22/r.git"),
            Some(url("::1", Some(22), Some("me")))
        );
        assert_eq!(parse_ssh_url("host:r.git"), Some(url("host", None, None)));
        for bad in [
            "ssh://-oProxyCommand=x/r",
            "ssh://:22/r",
            "ssh://h:99999/r",
            ":r",
        ] {
            assert_eq!(parse_ssh_url(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_command_pins_the_route_and_checks_host_keys_strictly() {
        let target = SshTarget {
            host: "allowed.test".into(),
            port: 2222,
            user: Some("git".into()),
            host_key_alias: None,
        };
        let command = ssh_command(
            Path::new("/opt/my chock/chock"),
            &target,
            &[PathBuf::from("/home/p/.ssh/known_hosts")],
            &[],
        );
        assert!(command.starts_with("ssh -F /dev/null "), "{command}");
        for part in [
            "-o StrictHostKeyChecking=yes",
            "-o BatchMode=yes",
            "-o HostName=allowed.test",
            "-o Port=2222",
            "-o User=git",
            "-o 'UserKnownHostsFile=\"/home/p/.ssh/known_hosts\"'",
            "-o GlobalKnownHostsFile=/dev/null",
            r#"-o 'ProxyCommand='\''/opt/my chock/chock'\'' ssh-connect --only allowed.test:2222 %h %p'"#,
        ] {
            assert!(command.contains(part), "{part:?} missing from {command}");
        }
        assert!(!command.contains("accept-new"), "{command}");
    }

    #[test]
    fn the_persons_config_decides_the_host_port_and_user() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".ssh")).unwrap();
        std::fs::write(
            home.path().join(".ssh/config"),
            "Host forge\n  HostName Forge.Example.org\n  Port 2200\n  User deploy\n",
        )
        .unwrap();
        let url = parse_ssh_url("forge:org/r.git").unwrap();
        let target = resolve(&url, Some(home.path()));
        assert_eq!(
            (target.host.as_str(), target.port, target.user.as_deref()),
            ("forge.example.org", 2200, Some("deploy"))
        );
        // The URL's own port and user win over the config, as with ssh.
        let url = parse_ssh_url("ssh://me@forge:2300/r.git").unwrap();
        let target = resolve(&url, Some(home.path()));
        assert_eq!((target.port, target.user.as_deref()), (2300, Some("me")));
    }
}
