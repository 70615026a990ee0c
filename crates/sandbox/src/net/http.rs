//! HTTP proxying: `CONNECT host:port` (a tunnel, what HTTPS and git use) and
//! plain requests in absolute form (`GET http://host/path`). A plain request
//! is forwarded once with `Connection: close`, so one client connection
//! never carries requests for a second host past the decision for the first.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::proxy::{Proxy, Refusal};

/// Longest request head accepted.
const MAX_HEAD: usize = 16 * 1024;

/// Writes a complete response with a plain-text body and ends it.
pub(crate) async fn respond<S: AsyncWrite + Unpin>(
    s: &mut S,
    code: u16,
    reason: &str,
    body: &str,
) -> std::io::Result<()> {
    let body = format!("chock: {body}\n");
    let head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await?;
    s.write_all(body.as_bytes()).await?;
    s.shutdown().await
}

async fn refuse<S: AsyncWrite + Unpin>(s: &mut S, r: &Refusal) {
    let (code, reason) = match r {
        Refusal::Policy(_) | Refusal::Internal(_) => (403, "Forbidden"),
        Refusal::Resolve(_) | Refusal::Connect(_) => (502, "Bad Gateway"),
    };
    let _ = respond(s, code, reason, r.message()).await;
}

/// Splits `host:port` (`[v6]:port` for IPv6). The port is required.
pub(crate) fn parse_authority(a: &str) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = a.strip_prefix('[') {
        let (h, p) = rest.split_once("]:")?;
        (h, p)
    } else {
        a.rsplit_once(':')?
    };
    let port: u16 = port.parse().ok()?;
    let ok = !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':'));
    ok.then(|| (host.to_owned(), port))
}

pub(crate) async fn serve<S>(proxy: &Proxy, mut s: S, first: u8)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut buf = vec![first];
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > MAX_HEAD {
            let _ = respond(
                &mut s,
                431,
                "Request Header Fields Too Large",
                "request head over 16 KiB",
            )
            .await;
            return;
        }
        let mut chunk = [0u8; 4096];
        match tokio::time::timeout(proxy.handshake_timeout(), s.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&chunk[..n]),
            _ => return,
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let rest = buf[head_end..].to_vec();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        let _ = respond(&mut s, 400, "Bad Request", "malformed request line").await;
        return;
    };

    if method.eq_ignore_ascii_case("CONNECT") {
        let Some((host, port)) = parse_authority(target) else {
            let msg = format!("malformed CONNECT target {target:?}: expected host:port");
            tracing::warn!(target: "chock::net", "refused: {msg}");
            let _ = respond(&mut s, 400, "Bad Request", &msg).await;
            return;
        };
        let mut up = match proxy.open(&host, port).await {
            Ok(up) => up,
            Err(r) => return refuse(&mut s, &r).await,
        };
        if s.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await
            .is_err()
            || up.write_all(&rest).await.is_err()
        {
            return;
        }
        let _ = super::carry_both(&mut s, &mut up).await;
        return;
    }

    let Some(after) = target
        .get(..7)
        .filter(|p| p.eq_ignore_ascii_case("http://"))
        .map(|_| &target[7..])
    else {
        let msg = format!(
            "{target:?} is not an absolute http:// URI; this is a proxy: use CONNECT for https"
        );
        let _ = respond(&mut s, 400, "Bad Request", &msg).await;
        return;
    };
    let cut = after.find(['/', '?']).unwrap_or(after.len());
    let (authority, path) = after.split_at(cut);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let with_port = if authority.ends_with(']') || !authority.contains(':') {
        format!("{authority}:80")
    } else {
        authority.to_owned()
    };
    let Some((host, port)) = parse_authority(&with_port) else {
        let msg = format!("malformed host in {target:?}");
        let _ = respond(&mut s, 400, "Bad Request", &msg).await;
        return;
    };
    let path = if path.is_empty() { "/" } else { path };
    let mut out = format!("{method} {path} {version}\r\n");
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or_default().trim();
        if [
            "proxy-connection",
            "proxy-authorization",
            "connection",
            "keep-alive",
        ]
        .iter()
        .any(|h| name.eq_ignore_ascii_case(h))
        {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\n\r\n");
    let mut up = match proxy.open(&host, port).await {
        Ok(up) => up,
        Err(r) => return refuse(&mut s, &r).await,
    };
    if up.write_all(out.as_bytes()).await.is_err() || up.write_all(&rest).await.is_err() {
        return;
    }
    let _ = super::carry_both(&mut s, &mut up).await;
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::parse_authority;

    #[test]
    fn authorities_parse_and_malformed_ones_do_not() {
        assert_eq!(
            parse_authority("example.com:443"),
            Some(("example.com".into(), 443))
        );
        assert_eq!(parse_authority("[::1]:80"), Some(("::1".into(), 80)));
        for bad in [
            "example.com",
            ":443",
            "exa mple.com:443",
            "a/b:1",
            "host:99999",
            "host:",
            "[::1]",
        ] {
            assert_eq!(parse_authority(bad), None, "{bad}");
        }
    }
}
