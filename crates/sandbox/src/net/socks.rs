//! SOCKS5, CONNECT only (RFC 1928, no authentication). BIND and UDP
//! ASSOCIATE are refused with "command not supported": the router carries
//! outgoing TCP streams and nothing else. SOCKS has no room for a message,
//! so a refusal's reason and the rule to add go to the log line the proxy
//! writes; the client gets the reply code that fits (2: not allowed by
//! ruleset, 4: host unreachable, 5: connection refused).

use std::net::{Ipv4Addr, Ipv6Addr};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::proxy::{Proxy, Refusal};

const CMD_CONNECT: u8 = 1;
const REP_OK: u8 = 0;
const REP_FAILURE: u8 = 1;
const REP_NOT_ALLOWED: u8 = 2;
const REP_HOST_UNREACHABLE: u8 = 4;
const REP_REFUSED: u8 = 5;
const REP_COMMAND: u8 = 7;
const REP_ADDRESS_TYPE: u8 = 8;

async fn reply<S: AsyncWrite + Unpin>(s: &mut S, code: u8) -> std::io::Result<()> {
    s.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]).await
}

/// The rest of a SOCKS5 exchange, after the version byte.
pub(crate) async fn serve<S>(proxy: &Proxy, mut s: S)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let t = proxy.handshake_timeout();
    let Ok(Ok(request)) = tokio::time::timeout(t, read_request(&mut s)).await else {
        return;
    };
    let (host, port) = match request {
        Request::Connect(h, p) => (h, p),
        Request::Refuse(code, why) => {
            tracing::warn!(target: "chock::net", "refused a SOCKS5 request: {why}");
            let _ = reply(&mut s, code).await;
            return;
        }
    };
    let mut up = match proxy.open(&host, port).await {
        Ok(up) => up,
        Err(r) => {
            let code = match r {
                Refusal::Policy(_) | Refusal::Internal(_) => REP_NOT_ALLOWED,
                Refusal::Resolve(_) => REP_HOST_UNREACHABLE,
                Refusal::Connect(_) => REP_REFUSED,
            };
            let _ = reply(&mut s, code).await;
            return;
        }
    };
    if reply(&mut s, REP_OK).await.is_err() {
        return;
    }
    let _ = super::carry_both(&mut s, &mut up).await;
}

enum Request {
    Connect(String, u16),
    Refuse(u8, String),
}

async fn read_request<S: AsyncRead + AsyncWrite + Unpin>(s: &mut S) -> std::io::Result<Request> {
    let n = s.read_u8().await?;
    let mut methods = vec![0u8; usize::from(n)];
    s.read_exact(&mut methods).await?;
    if !methods.contains(&0) {
        s.write_all(&[5, 0xff]).await?;
        return Ok(Request::Refuse(
            0xff,
            "the client offered no method without authentication".into(),
        ));
    }
    s.write_all(&[5, 0]).await?;
    let mut head = [0u8; 4];
    s.read_exact(&mut head).await?;
    let [ver, cmd, _, atyp] = head;
    if ver != 5 {
        return Ok(Request::Refuse(
            REP_FAILURE,
            format!("version {ver} in the request"),
        ));
    }
    let host = match atyp {
        1 => {
            let mut a = [0u8; 4];
            s.read_exact(&mut a).await?;
            Ipv4Addr::from(a).to_string()
        }
        3 => {
            let len = s.read_u8().await?;
            let mut name = vec![0u8; usize::from(len)];
            s.read_exact(&mut name).await?;
            match String::from_utf8(name) {
                Ok(n) => n,
                Err(_) => {
                    return Ok(Request::Refuse(
                        REP_NOT_ALLOWED,
                        "a host name that is not UTF-8".into(),
                    ));
                }
            }
        }
        4 => {
            let mut a = [0u8; 16];
            s.read_exact(&mut a).await?;
            Ipv6Addr::from(a).to_string()
        }
        other => {
            return Ok(Request::Refuse(
                REP_ADDRESS_TYPE,
                format!("address type {other} is not supported"),
            ));
        }
    };
    let port = s.read_u16().await?;
    if cmd != CMD_CONNECT {
        let name = match cmd {
            2 => "BIND",
            3 => "UDP ASSOCIATE",
            _ => "an unknown command",
        };
        return Ok(Request::Refuse(
            REP_COMMAND,
            format!("{name} ({cmd}) for {host}:{port}: the router carries CONNECT only"),
        ));
    }
    Ok(Request::Connect(host, port))
}
