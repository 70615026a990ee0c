use std::os::unix::fs::PermissionsExt as _;

use super::*;

const SECRET: &str = "tok-3f9a-not-for-the-log";

/// A repository whose own config sends `git credential` to a store file
/// holding one credential for `http://allowed.test:8080`.
fn repo_with_store() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("creds");
    std::fs::write(
        &store,
        format!("http://pusher:{SECRET}@allowed.test:8080\n"),
    )
    .unwrap();
    let git = |args: &[&str]| {
        chock_testkit::git(tmp.path(), args);
    };
    git(&["init", "-q"]);
    git(&[
        "config",
        "credential.helper",
        &format!("store --file={}", store.display()),
    ]);
    tmp
}

/// [`repo_with_store`], and a directory for the push sockets.
fn store_and_sockets() -> (tempfile::TempDir, tempfile::TempDir) {
    (repo_with_store(), tempfile::tempdir().unwrap())
}

fn remote(host: &str) -> HttpRemote {
    HttpRemote {
        protocol: "http".into(),
        host: host.into(),
        path: "repo.git".into(),
        username: None,
    }
}

/// The socket for a push to `http://allowed.test:8080`, whose credential
/// the repository's store helper holds.
fn open_socket(parent: &Path, repo: &Path) -> PushSocket {
    PushSocket::open(parent, "push-1", remote("allowed.test:8080"), repo).unwrap()
}

use chock_testkit::runtime;

#[test]
fn get_for_the_pushed_remote_is_answered_from_the_persons_helpers() {
    let (repo, parent) = store_and_sockets();
    runtime().block_on(async {
        let socket = open_socket(parent.path(), repo.path());
        let answer = socket
            .answer("get\nprotocol=http\nhost=allowed.test:8080\n")
            .await;
        assert_eq!(answer, format!("username=pusher\npassword={SECRET}\n"));
    });
}

#[test]
fn a_request_for_another_host_or_protocol_gets_nothing() {
    let (repo, parent) = store_and_sockets();
    runtime().block_on(async {
        // The socket answers for other.test; the store only knows allowed.test.
        let socket = PushSocket::open(
            parent.path(),
            "push-1",
            remote("other.test:8080"),
            repo.path(),
        )
        .unwrap();
        // It gets nothing for its own host, and nothing when git asks it
        // about the host the store knows.
        for request in [
            "get\nprotocol=http\nhost=other.test:8080\n",
            "get\nprotocol=http\nhost=allowed.test:8080\n",
        ] {
            assert_eq!(socket.answer(request).await, "", "{request}");
        }
        let socket = PushSocket::open(
            parent.path(),
            "push-2",
            remote("allowed.test:8080"),
            repo.path(),
        )
        .unwrap();
        for request in [
            "get\nprotocol=https\nhost=allowed.test:8080\n",
            "get\nprotocol=http\nhost=allowed.test:8080\npath=elsewhere.git\n",
            "frobnicate\nprotocol=http\nhost=allowed.test:8080\n",
        ] {
            assert_eq!(socket.answer(request).await, "", "{request}");
        }
    });
}

#[test]
fn the_helper_asks_through_the_socket_and_the_directory_goes_with_the_socket() {
    let (repo, parent) = store_and_sockets();
    runtime().block_on(async {
        let socket = open_socket(parent.path(), repo.path());
        let dir = socket.dir().to_owned();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&socket.socket()), 0o600);
        let path = socket.socket();
        let asking = tokio::task::spawn_blocking(move || {
            let mut out = Vec::new();
            helper::run(
                &path,
                "get",
                &b"protocol=http\nhost=allowed.test:8080\n\n"[..],
                &mut out,
            )
            .map(|()| out)
        });
        let out = tokio::select! {
            out = asking => out.unwrap().unwrap(),
            never = socket.serve() => match never {},
        };
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("username=pusher\npassword={SECRET}\n")
        );
        drop(socket);
        assert!(!dir.exists(), "the per-call directory outlived its socket");
        let err = helper::run(&dir.join("s"), "get", &b""[..], Vec::new()).unwrap_err();
        assert!(
            err.to_string().contains("only during an approved git push"),
            "{err}"
        );
    });
}

#[test]
fn the_helper_line_quotes_both_paths_for_the_shell() {
    let repo = tempfile::tempdir().unwrap();
    let parent = tempfile::tempdir().unwrap();
    let socket = runtime()
        .block_on(async {
            PushSocket::open(parent.path(), "push-1", remote("a.test"), repo.path())
        })
        .unwrap();
    let config = socket.git_config(Path::new("/opt/it's/chock"));
    assert_eq!(config[0], ("credential.helper", String::new()));
    assert_eq!(
        config[1].1,
        format!(
            "!'/opt/it'\\''s/chock' git-credential --socket '{}'",
            socket.socket().display()
        )
    );
}

#[test]
fn store_and_erase_reach_the_persons_helpers_only_for_the_pushed_remote() {
    let (repo, parent) = store_and_sockets();
    let store = repo.path().join("creds");
    runtime().block_on(async {
        let socket = open_socket(parent.path(), repo.path());
        // An erase naming another host is not passed on.
        let other =
            format!("erase\nprotocol=http\nhost=other.test\nusername=pusher\npassword={SECRET}\n");
        assert_eq!(socket.answer(&other).await, "");
        assert!(std::fs::read_to_string(&store).unwrap().contains(SECRET));
        // git erases a credential the server refused: so does the person's store.
        let erase = format!(
            "erase\nprotocol=http\nhost=allowed.test:8080\nusername=pusher\npassword={SECRET}\n"
        );
        assert_eq!(socket.answer(&erase).await, "");
        assert!(!std::fs::read_to_string(&store).unwrap().contains(SECRET));
        // And stores one the server accepted, for the pushed remote.
        let stored =
            "store\nprotocol=http\nhost=allowed.test:8080\nusername=pusher\npassword=fresh\n";
        assert_eq!(socket.answer(stored).await, "");
        assert_eq!(
            socket
                .answer("get\nprotocol=http\nhost=allowed.test:8080\n")
                .await,
            "username=pusher\npassword=fresh\n"
        );
    });
}
