#!/usr/bin/env bash
# The fake-address resolver's costs, measured inside one sandbox:
#   a lookup of a new name (an address and a listener per port opened),
#   a lookup of a name already in the table,
#   a tiny HTTP request through a fake address against the same request
#   through the router's HTTP proxy, taking turns.
# Local servers only: allowed.test resolves (proxy side) to 127.0.0.1.
# Usage: tests/perf/fake_resolver.sh   (builds chock --release)
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo build --release -p chock --quiet
chock="$PWD/target/release/chock"
ws="$(mktemp -d)"
trap 'rm -rf "$ws"; kill "$origin" 2>/dev/null || true' EXIT

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$ws" >/dev/null 2>&1 &
origin=$!
echo tiny >"$ws/tiny"
cat >"$ws/chock.zon" <<ZON
.{ .policy = .{ .net = .{ .resolver = .fake, .resolver_ports = .{ $port } }, .rules = .{
    .{ .action = "net.connect.test.*", .decision = .allow },
    .{ .action = "net.connect.127.0.0.1", .decision = .allow },
} } }
ZON
for _ in $(seq 50); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port)).close()" 2>/dev/null && break
    sleep 0.1
done

resolve=()
for i in $(seq 0 199); do resolve+=(--resolve "n$i.test=127.0.0.1"); done
"$chock" sandbox --workspace "$ws" --net --resolve allowed.test=127.0.0.1 "${resolve[@]}" -- \
    python3 - "$port" <<'PY'
import socket, statistics, sys, time
port = int(sys.argv[1])

def ms(f, n):
    out = []
    for i in range(n):
        t = time.perf_counter()
        f(i)
        out.append((time.perf_counter() - t) * 1000)
    return out

def show(name, xs):
    print(f"{name:34} median {statistics.median(xs):7.3f} ms  p90 {sorted(xs)[int(len(xs) * 0.9)]:7.3f} ms  (n={len(xs)})")

show("lookup, new name", ms(lambda i: socket.gethostbyname(f"n{i}.test"), 200))
show("lookup, name in the table", ms(lambda i: socket.gethostbyname("n0.test"), 1000))

def get(sock, target):
    sock.sendall(f"GET {target} HTTP/1.0\r\nHost: allowed.test\r\n\r\n".encode())
    body = b""
    while chunk := sock.recv(65536):
        body += chunk
    assert body.endswith(b"tiny\n"), body[:200]

def fake(_):
    get(socket.create_connection((socket.gethostbyname("allowed.test"), port)), "/tiny")

def proxied(_):
    get(socket.create_connection(("127.0.0.1", 3128)), f"http://allowed.test:{port}/tiny")

fa, px = [], []
for _ in range(10):
    fa += ms(fake, 10)
    px += ms(proxied, 10)
show("tiny request via fake address", fa)
show("tiny request via HTTP proxy", px)
PY
