"""A model server of the plain kind: Python's http.server speaking HTTP/1.1
with keep-alive, answering OpenAI Chat Completions with server-sent events.

Usage: keepalive_model.py CALLS TIMES_FILE [--nodelay]

The first CALLS requests are answered with one `run_command` call of `true`,
the next with the text "done". Each frame is its own write, as a streaming
server sends them. Without --nodelay the accepted sockets keep Nagle's
algorithm on (http.server's default), so a write that follows an
unacknowledged one waits for the peer's ACK. The arrival time of each
request (time.monotonic, seconds) is appended to TIMES_FILE, one a line.
The port is printed on stdout once listening.
"""

import http.server
import json
import sys
import time

CALLS = int(sys.argv[1])
TIMES = sys.argv[2]
NODELAY = "--nodelay" in sys.argv[3:]
seen = 0


def frame(delta, finish=None):
    body = {
        "id": "chatcmpl-py",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return ("data: " + json.dumps(body) + "\n\n").encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = NODELAY

    def log_message(self, *args):
        pass

    def do_POST(self):
        global seen
        at = time.monotonic()
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        with open(TIMES, "a") as out:
            out.write(f"{at}\n")
        n = seen
        seen += 1
        frames = [frame({"role": "assistant", "content": ""})]
        if n < CALLS:
            args = json.dumps({"command": ["true"]})
            frames.append(frame({"tool_calls": [{
                "index": 0, "id": f"c{n}", "type": "function",
                "function": {"name": "run_command", "arguments": args}}]}))
            frames.append(frame({}, "tool_calls"))
        else:
            frames.append(frame({"content": "done"}))
            frames.append(frame({}, "stop"))
        frames.append(b"data: [DONE]\n\n")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(sum(len(f) for f in frames)))
        self.end_headers()
        for f in frames:
            self.wfile.write(f)
            self.wfile.flush()


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
