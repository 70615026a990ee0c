"""The peer of the edit benchmark (tests/perf/lsp_edit.rs): pylsp's own
latency, measured by a minimal client that speaks to it directly, with no
session, no sandbox and no file written. It opens a document, then makes
the same edits a session makes (didChange with the whole text, then
didSave) and times each from the didChange until the publishDiagnostics
for that version.

Usage: latency.py <pylsp> <edits>; prints one line per edit: milliseconds.
"""
import json
import subprocess
import sys
import time

PYLSP, EDITS = sys.argv[1], int(sys.argv[2])
server = subprocess.Popen([PYLSP], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL)


def send(message):
    body = json.dumps(message).encode()
    server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    server.stdin.flush()


def read():
    length = None
    while True:
        line = server.stdout.readline().strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(server.stdout.read(length))


def published(uri):
    while True:
        message = read()
        if message.get("method") == "textDocument/publishDiagnostics" and \
                message["params"]["uri"] == uri:
            return message
        if "id" in message and "method" in message:
            send({"jsonrpc": "2.0", "id": message["id"], "result": None})


URI = "file:///tmp/latency/app.py"
send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"processId": None, "rootUri": "file:///tmp/latency", "capabilities": {}}})
while read().get("id") != 1:
    pass
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
      "params": {"textDocument": {"uri": URI, "languageId": "python", "version": 1,
                                  "text": "import os\n\nprint(os.getcwd())\n"}}})
published(URI)
for i in range(EDITS):
    text = "import os\n\nprint(os.getcwd(), missing_%d)\n" % i
    start = time.monotonic()
    send({"jsonrpc": "2.0", "method": "textDocument/didChange",
          "params": {"textDocument": {"uri": URI, "version": i + 2},
                     "contentChanges": [{"text": text}]}})
    send({"jsonrpc": "2.0", "method": "textDocument/didSave",
          "params": {"textDocument": {"uri": URI}}})
    published(URI)
    print("%.3f" % ((time.monotonic() - start) * 1000), flush=True)
send({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
server.kill()
