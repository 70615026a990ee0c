"""A language server that misbehaves on purpose, for the session tests.

Usage: fault_server.py hang|garbage|crash|flood|silent

hang     reads initialize and never answers it.
garbage  answers initialize with a line that is not an LSP frame.
crash    answers initialize, then exits when a document is opened.
flood    answers initialize, then sends notifications without end once a
         document is opened.
silent   answers initialize and publishes nothing, ever.
"""
import json
import sys

MODE = sys.argv[1]
IN = sys.stdin.buffer
OUT = sys.stdout.buffer


def read():
    length = None
    while True:
        line = IN.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(IN.read(length))


def send(message):
    body = json.dumps(message).encode()
    OUT.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    OUT.flush()


while True:
    message = read()
    method = message.get("method")
    if method == "initialize":
        if MODE == "hang":
            continue
        if MODE == "garbage":
            OUT.write(b"Traceback (most recent call last): oops\n")
            OUT.flush()
            continue
        send({"jsonrpc": "2.0", "id": message["id"],
              "result": {"capabilities": {"textDocumentSync": 1}}})
    elif method == "textDocument/didOpen":
        if MODE == "crash":
            sys.stderr.write("fault_server: crashing on didOpen\n")
            sys.exit(3)
        if MODE == "flood":
            note = {"jsonrpc": "2.0", "method": "window/logMessage",
                    "params": {"type": 4, "message": "x"}}
            while True:
                send(note)
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": message["id"], "result": None})
    elif method == "exit":
        sys.exit(0)
