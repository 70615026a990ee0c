"""Measure what a person at the terminal waits for, on a real pseudo-terminal.

Usage: latency.py <state dir> <project> <program> <mode>

<mode> is one of
  echo      chock run <project> (interactive): 200 keystrokes at the prompt,
            the time from each byte written to its echo on the screen
  kernel    the same keystrokes to `cat`, whose echo the kernel's line
            discipline makes: the peer
  token     chock run <project> (interactive), the model played here over
            the OpenAI wire: 50 tokens, each sent only once the last is on
            the screen, the time from a token's write to the socket to its
            appearance on the screen; and the session's peak RSS (VmHWM)
  oneshot   the same 50 tokens to chock run <project> "<message>" (the
            model's text printed as it came): the peer, and its VmHWM

Prints one JSON object: the times in milliseconds, and the VmHWM in KiB.
"""
import http.server
import json
import os
import pty
import select
import socketserver
import sys
import threading
import time

state, project, program, mode = sys.argv[1:5]
TOKENS = 50
KEYS = 200
seen = bytearray()
seen_lock = threading.Condition()


def spawn(argv, env):
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(env)
        os.execvp(argv[0], argv)
    reader = threading.Thread(target=read_all, args=(fd,), daemon=True)
    reader.start()
    return pid, fd


def read_all(fd):
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            return
        if not data:
            return
        with seen_lock:
            seen.extend(data)
            seen_lock.notify_all()


def wait_for(needle, since=0, within=30.0):
    deadline = time.monotonic() + within
    with seen_lock:
        while needle not in seen[since:]:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SystemExit(f"timed out waiting for {needle!r}: {bytes(seen[-400:])!r}")
            seen_lock.wait(left)
        return time.monotonic()


def hwm(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None


def chunk(delta, finish=None):
    body = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


token_ms = []


class Model(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(chunk({"role": "assistant", "content": ""}))
        self.wfile.flush()
        for n in range(TOKENS):
            word = f"tok{n:03d} "
            with seen_lock:
                mark = len(seen)
            sent = time.monotonic()
            self.wfile.write(chunk({"content": word}))
            self.wfile.flush()
            shown = wait_for(word.strip().encode(), since=mark)
            token_ms.append((shown - sent) * 1000)
        self.wfile.write(chunk({}, "stop"))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def serve_model():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Model)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    config = os.path.join(state, "config", "chock")
    os.makedirs(config, exist_ok=True)
    with open(os.path.join(config, "config.zon"), "w") as f:
        f.write(
            ".{ .providers = .{ .fake = .{ .kind = .openai, "
            f'.base_url = "http://127.0.0.1:{port}/v1" }} }}, .model = "fake/m" }}\n'
        )


def keystrokes(fd):
    times = []
    for n in range(KEYS):
        key = b"abcdefghij"[n % 10 : n % 10 + 1]
        with seen_lock:
            mark = len(seen)
        sent = time.monotonic()
        os.write(fd, key)
        shown = wait_for(key, since=mark)
        times.append((shown - sent) * 1000)
    return times


env = {
    "CHOCK_STATE_DIR": state,
    "XDG_CONFIG_HOME": os.path.join(state, "config"),
    "TERM": "xterm-256color",
}
result = {"mode": mode}
if mode == "kernel":
    pid, fd = spawn(["cat"], env)
    time.sleep(0.2)
    result["ms"] = keystrokes(fd)
    os.write(fd, b"\n\x04")
elif mode == "echo":
    serve_model()
    pid, fd = spawn([program, "run", project], env)
    wait_for("› ".encode())
    time.sleep(0.2)
    result["ms"] = keystrokes(fd)
    os.write(fd, b"\x15\x04")
elif mode == "token":
    serve_model()
    pid, fd = spawn([program, "run", project], env)
    wait_for("› ".encode())
    os.write(fd, b"go\r")
    last = wait_for(f"tok{TOKENS - 1:03d}".encode())
    with seen_lock:
        mark = len(seen)
    wait_for("› ".encode(), since=mark)
    time.sleep(0.2)
    result["ms"] = token_ms
    result["hwm_kib"] = hwm(pid)
    os.write(fd, b"\x04")
elif mode == "oneshot":
    serve_model()
    pid, fd = spawn([program, "run", project, "go"], env)
    peak = None
    while True:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        peak = hwm(pid) or peak
        time.sleep(0.005)
    result["ms"] = token_ms
    result["hwm_kib"] = peak
    pid = None
if pid:
    os.waitpid(pid, 0)
print(json.dumps(result))
