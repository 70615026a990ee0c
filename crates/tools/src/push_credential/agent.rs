//! The person's ssh agent, proxied for one approved push to an ssh remote.
//!
//! The person's `SSH_AUTH_SOCK` is on the host and stays there. For the
//! push, a socket of its own (0600, peers of Chock's own uid only) sits in
//! the per-call directory and the call's sandbox gets `SSH_AUTH_SOCK`
//! pointing at it. Each connection to it is answered message by message:
//! the agent protocol is strictly one request, one reply, so a request is
//! read whole, judged by its type byte, and either forwarded to the
//! person's agent (with the agent's reply carried back) or answered here
//! with `SSH_AGENT_FAILURE`. Only listing identities and signing pass;
//! adding or removing keys, locking, and extensions (which include
//! session binding and key constraints a caller could use to change the
//! agent) never reach it. The proxy cannot tell which host a signature is
//! for (the agent protocol does not say), so it is the call's route —
//! ssh reaches only the pushed remote — that bounds what is signed for.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};

/// `SSH2_AGENTC_REQUEST_IDENTITIES`.
pub const REQUEST_IDENTITIES: u8 = 11;
/// `SSH2_AGENTC_SIGN_REQUEST`.
pub const SIGN_REQUEST: u8 = 13;
/// `SSH_AGENT_FAILURE`.
pub const AGENT_FAILURE: u8 = 5;
/// Largest message carried either way (OpenSSH's own agent limit).
pub const MAX_AGENT_MESSAGE: u32 = 256 * 1024;
/// How long the person's agent may take to answer one request (a
/// confirm-on-use agent waits for the person; that is allowed, forever
/// is not).
const AGENT_TIMEOUT: Duration = Duration::from_secs(120);

/// Whether a request of this type is passed to the person's agent.
pub fn is_forwarded(kind: u8) -> bool {
    matches!(kind, REQUEST_IDENTITIES | SIGN_REQUEST)
}

/// The per-call agent socket and the person's agent it forwards to.
#[derive(Debug)]
pub struct AgentProxy {
    listener: UnixListener,
    upstream: PathBuf,
}

impl AgentProxy {
    /// Binds `path` (0600) forwarding to the agent at `upstream`.
    pub fn bind(path: &Path, upstream: &Path) -> std::io::Result<Self> {
        Ok(Self {
            listener: chock_control::owned_socket::bind(path)?,
            upstream: upstream.to_owned(),
        })
    }

    /// Serves connections until dropped; each connection is its own task
    /// in a set this future owns, so dropping it ends them all.
    pub async fn serve(&self) -> std::convert::Infallible {
        let own = chock_control::own_uid();
        let mut tasks = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        if let Err(err) = chock_control::check_peer(&stream, own) {
                            tracing::warn!(%err, "ssh agent proxy: peer refused");
                            continue;
                        }
                        tasks.spawn(relay(stream, self.upstream.clone()));
                    }
                    Err(err) => {
                        tracing::warn!(%err, "ssh agent proxy: accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            }
        }
    }
}

/// Answers one client connection until it closes or misbehaves. The
/// person's agent is dialled at the first forwarded request, so a client
/// that only asks for refused things never reaches it.
async fn relay(mut client: UnixStream, upstream: PathBuf) {
    let mut agent: Option<UnixStream> = None;
    loop {
        let Ok(Some(request)) = read_frame(&mut client).await else {
            return;
        };
        let kind = request.first().copied().unwrap_or(0);
        let reply = if is_forwarded(kind) {
            forward(&mut agent, &upstream, &request).await
        } else {
            tracing::info!(kind, "ssh agent proxy: request refused");
            None
        };
        let reply = reply.unwrap_or_else(|| vec![AGENT_FAILURE]);
        if write_frame(&mut client, &reply).await.is_err() {
            return;
        }
    }
}

/// Sends `request` to the person's agent and reads its reply; `None` when
/// the agent cannot be reached or does not answer (the client then gets a
/// failure, and the next request dials again).
async fn forward(
    agent: &mut Option<UnixStream>,
    upstream: &Path,
    request: &[u8],
) -> Option<Vec<u8>> {
    if agent.is_none() {
        *agent = UnixStream::connect(upstream).await.ok();
    }
    let stream = agent.as_mut()?;
    let exchange = async {
        write_frame(stream, request).await?;
        read_frame(stream).await
    };
    match tokio::time::timeout(AGENT_TIMEOUT, exchange).await {
        Ok(Ok(Some(reply))) => Some(reply),
        _ => {
            *agent = None;
            None
        }
    }
}

/// One length-prefixed message; `None` at a clean end of stream.
pub async fn read_frame(stream: &mut UnixStream) -> std::io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match stream.read_exact(&mut len).await {
        Ok(_) => {}
        Err(err) if err.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(err) => return Err(err),
    }
    let len = u32::from_be_bytes(len);
    if len == 0 || len > MAX_AGENT_MESSAGE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("agent message of {len} bytes"),
        ));
    }
    let mut body = vec![0u8; len as usize];
    stream.read_exact(&mut body).await?;
    Ok(Some(body))
}

/// Writes one length-prefixed message.
pub async fn write_frame(stream: &mut UnixStream, body: &[u8]) -> std::io::Result<()> {
    let len = u32::try_from(body.len())
        .map_err(|err| std::io::Error::new(std::io::ErrorKind::InvalidInput, err))?;
    let mut out = Vec::with_capacity(body.len() + 4);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(body);
    stream.write_all(&out).await
}

#[cfg(test)]
mod tests;
