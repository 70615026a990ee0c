//! The fake-address resolver around a real sandbox: programs that ignore
//! the proxy variables look a name up, get a fake address, and connect to
//! it; the proxy decides the name they asked for. Local servers only.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use chock_sandbox::net::{
    BoxFuture, Decider, FakeConfig, FakeResolver, HostVerdict, PolicyDecider, Proxy,
};
use chock_sandbox::{Sandbox, SandboxSpec, Stdio};

use super::{RULES, Rt, config, origin, output_of, policy};

/// The test policy's decider, recording every verdict it gives.
struct Recording {
    inner: PolicyDecider,
    seen: Arc<Mutex<Vec<(String, HostVerdict)>>>,
}

impl Decider for Recording {
    fn decide<'a>(&'a self, host: &'a str) -> BoxFuture<'a, HostVerdict> {
        Box::pin(async move {
            let v = self.inner.decide(host).await;
            self.seen.lock().unwrap().push((host.to_owned(), v.clone()));
            v
        })
    }

    fn names_address(&self, addr: IpAddr) -> bool {
        self.inner.names_address(addr)
    }
}

type Seen = Arc<Mutex<Vec<(String, HostVerdict)>>>;

/// Runs `script` under `sh -c` in a sandbox with the router and (when
/// `fake` is given) the fake resolver; returns (stdout, stderr, code) and
/// the decisions made.
fn run(
    rules: &[(&str, &str)],
    fake: Option<FakeConfig>,
    script: &str,
) -> (String, String, i32, Vec<(String, HostVerdict)>) {
    let ws = tempfile::tempdir().unwrap();
    let rt = Rt::new();
    let base = SandboxSpec::new(ws.path());
    let mut spec = if fake.is_some() {
        base.with_fake_resolver()
    } else {
        base.with_router()
    };
    spec.stdin = Stdio::Null;
    spec.stdout = Stdio::Piped;
    spec.stderr = Stdio::Piped;
    let mut child = Sandbox::new(spec)
        .unwrap()
        .spawn(&["sh", "-c", script])
        .unwrap();
    let link = Arc::new(child.take_router().unwrap());
    let listener = link.listener().unwrap();
    let seen: Seen = Arc::default();
    let decider = Arc::new(Recording {
        inner: PolicyDecider::foreground(policy(ws.path(), rules), None),
        seen: Arc::clone(&seen),
    });
    let proxy = Proxy::new(decider, config());
    if let Some(fc) = fake {
        let udp = link.resolver_socket().unwrap();
        udp.set_nonblocking(true).unwrap();
        let resolver = FakeResolver::new(Arc::clone(&link), proxy.clone(), fc);
        rt.handle.spawn(async move {
            let udp = tokio::net::UdpSocket::from_std(udp).unwrap();
            let _ = resolver.serve(udp).await;
        });
    }
    rt.serve_on(listener, proxy);
    let (out, err, code) = output_of(child);
    let seen = seen.lock().unwrap().clone();
    (out, err, code, seen)
}

fn ports(p: &[u16]) -> Option<FakeConfig> {
    Some(FakeConfig {
        ports: p.to_vec(),
        ..FakeConfig::default()
    })
}

#[test]
fn a_program_ignoring_the_proxy_reaches_an_allowed_name_through_its_fake_address() {
    let port = origin("through a fake address");
    let script = format!(
        "getent hosts allowed.test; cat /etc/resolv.conf; \
         curl -sS --max-time 20 --noproxy '*' http://allowed.test:{port}/"
    );
    let (out, err, code, seen) = run(RULES, ports(&[80, port]), &script);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("127.77.0.1 "), "{out}");
    assert!(out.contains("nameserver 127.0.0.53\n"), "{out}");
    assert!(out.ends_with("through a fake address"), "{out}");
    assert_eq!(seen, vec![("allowed.test".to_owned(), HostVerdict::Allow)]);

    // bash's /dev/tcp after a lookup: no HTTP client at all.
    let script = format!(
        "exec 3<>/dev/tcp/allowed.test/{port} && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3"
    );
    let (out, err, code, _) = run(RULES, ports(&[port]), &format!("bash -c \"{script}\""));
    assert_eq!(code, 0, "{err}");
    assert!(out.ends_with("through a fake address"), "{out}");
}

#[test]
fn a_denied_name_is_reset_and_the_refusal_names_the_rule() {
    let port = origin("never");
    let script = format!("curl -sS --max-time 20 --noproxy '*' http://denied.test:{port}/");
    let (out, err, code, seen) = run(RULES, ports(&[port]), &script);
    assert_ne!(code, 0, "{out}");
    assert!(!out.contains("never"), "{out}");
    // The reset lands before or after curl's connect completes.
    assert!(
        err.contains("reset") || err.contains("Empty reply") || err.contains("Couldn't connect"),
        "{err}"
    );
    let [(host, HostVerdict::Refuse(why))] = seen.as_slice() else {
        panic!("{seen:?}");
    };
    assert_eq!(host, "denied.test");
    assert!(why.contains("net.connect.test.denied refused"), "{why}");
    assert!(why.contains(".decision = .allow"), "{why}");
}

#[test]
fn an_allowed_name_that_resolves_to_loopback_no_rule_names_is_refused() {
    let port = origin("never");
    let rules = &[("net.connect.test.rebind", "allow")];
    let script = format!("curl -sS --max-time 20 --noproxy '*' http://rebind.test:{port}/");
    let (out, _, code, seen) = run(rules, ports(&[port]), &script);
    assert_ne!(code, 0, "{out}");
    assert_eq!(seen, vec![("rebind.test".to_owned(), HostVerdict::Allow)]);
    assert!(!out.contains("never"), "{out}");
}

#[test]
fn a_port_the_fake_addresses_do_not_listen_on_is_refused_by_the_kernel() {
    let port = origin("never");
    let script = format!("curl -sS --max-time 20 --noproxy '*' http://allowed.test:{port}/");
    let (_, err, code, seen) = run(RULES, ports(&[80, 443]), &script);
    assert_eq!(code, 7, "{err}");
    assert!(seen.is_empty(), "{seen:?}");
}

#[test]
fn without_the_mode_there_is_no_resolver() {
    let (out, err, code, _) = run(
        RULES,
        None,
        "getent hosts allowed.test || echo unresolved; \
         grep -c 127.0.0.53 /etc/resolv.conf || true",
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("unresolved\n"), "{out}");
}

/// Malformed packets, then 1,000 queries: every query gets its answer, and
/// a name already given keeps its address.
const HAMMER: &str = r#"
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
def q(name, qtype=1, ident=7):
    body = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"
    return struct.pack(">HHHHHH", ident, 0x0100, 1, 0, 0, 0) + body + struct.pack(">HH", qtype, 1)
def ask(pkt):
    s.sendto(pkt, ("127.0.0.53", 53))
    while True:
        r = s.recv(4096)
        if r[:2] == pkt[:2]:
            return r
for junk in [b"", b"\x01", b"\xff" * 11, b"\x00" * 12, q("a.test")[:15], b"\x12\x34\x01\x00\x00\x01" + b"\xc0" * 40]:
    s.sendto(junk, ("127.0.0.53", 53))
r = ask(b"\x43\x21\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03abc")
print("formerr", r[3] & 15)
first = ask(q("allowed.test", 1, 99))[-4:]
codes = {}
for i in range(1000):
    r = ask(q("n%d.test" % (i % 5), 1 if i % 2 else 28, 1000 + i))
    codes[r[3] & 15] = codes.get(r[3] & 15, 0) + 1
print("codes", sorted(codes.items()))
print("same", ask(q("allowed.test", 1, 98))[-4:] == first)
print("nx", ask(q("bad name.test", 1, 97))[3] & 15)
"#;

#[test]
fn malformed_packets_and_a_thousand_queries_do_not_stop_it() {
    let fc = FakeConfig {
        ports: vec![80],
        ..FakeConfig::default()
    };
    let script = format!(
        "python3 -c '{}' && getent hosts allowed.test",
        HAMMER.replace('\'', "\"")
    );
    let (out, err, code, _) = run(RULES, Some(fc), &script);
    assert_eq!(code, 0, "{out}{err}");
    // Each of the 1,000 (A and AAAA alternately, five names) is answered
    // NOERROR under its own id, after the junk, which gets nothing or
    // FORMERR; allowed.test keeps the address it got first.
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "formerr 1", "{out}");
    assert_eq!(lines[1], "codes [(0, 1000)]", "{out}");
    assert_eq!(lines[2], "same True", "{out}");
    assert_eq!(lines[3], "nx 3", "{out}");
    assert!(lines[4].starts_with("127.77.0.1 "), "{out}");
}

#[test]
fn a_full_table_refuses_new_names_and_keeps_the_old() {
    let fc = FakeConfig {
        ports: vec![80],
        max_names: 2,
        ..FakeConfig::default()
    };
    let (out, err, _, _) = run(
        RULES,
        Some(fc),
        "for n in allowed.test other.test third.test allowed.test; do \
         r=$(getent ahostsv4 $n | head -1); echo ${r:-none}; done",
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}{err}");
    assert!(lines[0].starts_with("127.77.0.1 "), "{out}");
    assert!(lines[1].starts_with("127.77.0.2 "), "{out}");
    assert_eq!(lines[2], "none", "{out}");
    assert!(lines[3].starts_with("127.77.0.1 "), "{out}");
}

#[test]
fn asking_a_sandbox_without_the_mode_for_its_resolver_socket_is_an_error_not_a_hang() {
    let ws = tempfile::tempdir().unwrap();
    let mut spec = SandboxSpec::new(ws.path()).with_router();
    spec.stdin = Stdio::Null;
    let mut child = Sandbox::new(spec).unwrap().spawn(&["true"]).unwrap();
    let link = child.take_router().unwrap();
    let _listener = link.listener().unwrap();
    let err = link.resolver_socket().unwrap_err();
    assert!(err.to_string().contains("with_fake_resolver"), "{err}");
    child.wait().unwrap();
}
