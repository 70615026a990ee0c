"""A small MCP server for the session tests, speaking one revision or
misbehaving on purpose.

Usage: session_server.py modern|legacy|garbage|silent|names|sleepy

modern   2026-07-28 only: no handshake, `_meta` checked on every request.
legacy   2025-11-25 only: the initialize handshake; server/discover is an
         unknown method.
garbage  writes a Python traceback instead of an answer.
silent   reads every request and answers none.
names    modern, listing tool names a session must refuse.
sleepy   modern, after sleeping 400 ms first (a server slow to start that
         costs no CPU meanwhile, for the start benchmark).

Tools: echo (its arguments back), die (exits mid-call), stray (answers with
another id), hang (never answers), big (300,000 characters), env (its working directory and environment), huge (one
message over 16 MiB).
"""
import json
import os
import sys

MODE = sys.argv[1]
if MODE == "sleepy":
    import time

    time.sleep(0.4)
    MODE = "modern"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def tool(name):
    return {"name": name, "description": "scripted " + name, "inputSchema": {"type": "object"}}


TOOLS = [tool(n) for n in ["echo", "die", "stray", "hang", "big", "env", "huge"]]
if MODE == "names":
    TOOLS = [tool("echo"), tool("two words"), tool("twice"), tool("twice")]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(rid, body):
    if MODE != "legacy":
        body = dict(body, resultType="complete")
    send({"jsonrpc": "2.0", "id": rid, "result": body})


def call(rid, params):
    name = params.get("name")
    if name == "die":
        sys.exit(3)
    if name == "stray":
        send({"jsonrpc": "2.0", "id": "not-" + str(rid), "result": {"content": []}})
        return
    if name == "hang":
        return
    if name == "huge":
        # One message over the 16 MiB a session reads from a server.
        text = "y" * (17 << 20)
        send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", "content": [{"type": "text", "text": text}]}})
        return
    if name == "big":
        text = "x" * 300000
    elif name == "env":
        text = json.dumps({"cwd": os.getcwd(), "env": dict(os.environ)})
    else:
        text = "echo:" + json.dumps(params.get("arguments"), sort_keys=True)
    result(rid, {"content": [{"type": "text", "text": text}], "isError": False})


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, rid = message["method"], message["id"]
    params = message.get("params") or {}
    if MODE == "garbage":
        sys.stdout.write("Traceback (most recent call last): oops\n")
        sys.stdout.flush()
        continue
    if MODE == "silent":
        continue
    if MODE == "legacy":
        if method == "initialize":
            result(rid, {"protocolVersion": LEGACY, "capabilities": {"tools": {}}, "serverInfo": {"name": "legacy", "version": "1.0.0"}})
        elif method == "tools/list":
            result(rid, {"tools": TOOLS})
        elif method == "tools/call":
            call(rid, params)
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method not found: " + method}})
        continue
    version = (params.get("_meta") or {}).get("io.modelcontextprotocol/protocolVersion")
    if version != MODERN:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32022, "message": "unsupported protocol version", "data": {"supported": [MODERN], "requested": version}}})
    elif method == "server/discover":
        result(rid, {"supportedVersions": [MODERN], "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "public", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1.0.0"}}})
    elif method == "tools/list":
        result(rid, {"tools": TOOLS})
    elif method == "tools/call":
        call(rid, params)
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method not found: " + method}})
