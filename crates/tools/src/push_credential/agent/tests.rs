use std::os::unix::fs::PermissionsExt as _;
use std::sync::{Arc, Mutex};

use super::*;

const ADD_IDENTITY: u8 = 17;
const REMOVE_ALL_IDENTITIES: u8 = 19;
const LOCK: u8 = 22;
const EXTENSION: u8 = 27;
/// `SSH2_AGENT_IDENTITIES_ANSWER` with no keys.
const NO_IDENTITIES: &[u8] = &[12, 0, 0, 0, 0];

use chock_testkit::runtime;

/// A stand-in for the person's agent: records every message it gets and
/// answers each with an empty identities list.
fn fake_agent(path: &Path) -> (Arc<Mutex<Vec<Vec<u8>>>>, impl Future<Output = ()>) {
    let listener = UnixListener::bind(path).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let serve = async move {
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            while let Ok(Some(message)) = read_frame(&mut stream).await {
                record.lock().unwrap().push(message);
                write_frame(&mut stream, NO_IDENTITIES).await.unwrap();
            }
        }
    };
    (seen, serve)
}

async fn ask(stream: &mut UnixStream, message: &[u8]) -> Vec<u8> {
    write_frame(stream, message).await.unwrap();
    read_frame(stream).await.unwrap().expect("a reply")
}

#[test]
fn only_list_and_sign_requests_reach_the_persons_agent() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = tmp.path().join("person-agent");
    let proxied = tmp.path().join("agent");
    runtime().block_on(async {
        let (seen, agent) = fake_agent(&upstream);
        let proxy = AgentProxy::bind(&proxied, &upstream).unwrap();
        let client = async {
            let mut stream = UnixStream::connect(&proxied).await.unwrap();
            let mut replies = Vec::new();
            for message in [
                vec![
                    ADD_IDENTITY,
                    0,
                    0,
                    0,
                    7,
                    b's',
                    b's',
                    b'h',
                    b'-',
                    b'r',
                    b's',
                    b'a',
                ],
                vec![REMOVE_ALL_IDENTITIES],
                vec![LOCK, 0, 0, 0, 1, b'x'],
                vec![EXTENSION, 0, 0, 0, 1, b'x'],
                vec![REQUEST_IDENTITIES],
                vec![SIGN_REQUEST, 0, 0, 0, 0],
            ] {
                replies.push(ask(&mut stream, &message).await);
            }
            replies
        };
        let replies = tokio::select! {
            replies = client => replies,
            never = proxy.serve() => match never {},
            () = agent => unreachable!("the fake agent serves forever"),
        };
        assert_eq!(
            replies,
            vec![
                vec![AGENT_FAILURE],
                vec![AGENT_FAILURE],
                vec![AGENT_FAILURE],
                vec![AGENT_FAILURE],
                NO_IDENTITIES.to_vec(),
                NO_IDENTITIES.to_vec(),
            ]
        );
        assert_eq!(
            *seen.lock().unwrap(),
            vec![vec![REQUEST_IDENTITIES], vec![SIGN_REQUEST, 0, 0, 0, 0]],
            "a refused request reached the person's agent"
        );
    });
    let mode = std::fs::metadata(&proxied).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

/// Connects to a proxy whose person's agent does not exist and runs
/// `client` on the connection while the proxy serves it.
fn without_an_agent<F: Future<Output = T>, T>(client: impl FnOnce(UnixStream) -> F) -> T {
    let tmp = tempfile::tempdir().unwrap();
    let proxied = tmp.path().join("agent");
    runtime().block_on(async {
        let proxy = AgentProxy::bind(&proxied, &tmp.path().join("nobody")).unwrap();
        let client = async { client(UnixStream::connect(&proxied).await.unwrap()).await };
        tokio::select! {
            out = client => out,
            never = proxy.serve() => match never {},
        }
    })
}

#[test]
fn with_the_persons_agent_gone_a_request_gets_a_failure_not_a_hang() {
    let reply =
        without_an_agent(|mut stream| async move { ask(&mut stream, &[REQUEST_IDENTITIES]).await });
    assert_eq!(reply, vec![AGENT_FAILURE]);
}

#[test]
fn an_oversized_or_empty_frame_ends_the_connection() {
    let rest = without_an_agent(|mut stream| async move {
        stream
            .write_all(&(MAX_AGENT_MESSAGE + 1).to_be_bytes())
            .await
            .unwrap();
        let mut rest = Vec::new();
        stream.read_to_end(&mut rest).await.unwrap();
        rest
    });
    assert!(rest.is_empty(), "{rest:?}");
}
