"""A small MCP server speaking only revision 2026-07-28 (no initialize), or
misbehaving on purpose, for the gateway's tests.

Usage: scripted_server.py modern|garbage|die
Every request's method is appended to $SCRIPTED_LOG when set.
"""
import json
import os
import sys

MODE = sys.argv[1]
REVISION = "2026-07-28"
TOOLS = [
    {"name": "echo", "description": "Echo the arguments", "inputSchema": {"type": "object"}},
    {"name": "secret", "description": "A tool policy may hide", "inputSchema": {"type": "object"}},
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def log(method):
    path = os.environ.get("SCRIPTED_LOG")
    if path:
        with open(path, "a") as f:
            f.write(method + "\n")


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, rid = message["method"], message["id"]
    log(method)
    if MODE == "garbage":
        sys.stdout.write("Traceback (most recent call last): oops\n")
        sys.stdout.flush()
        continue
    if MODE == "die":
        sys.exit(3)
    params = message.get("params") or {}
    version = (params.get("_meta") or {}).get("io.modelcontextprotocol/protocolVersion")
    if version != REVISION:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32022, "message": "unsupported protocol version", "data": {"supported": [REVISION], "requested": version}}})
    elif method == "server/discover":
        send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", "supportedVersions": [REVISION], "capabilities": {"tools": {}}, "serverInfo": {"name": "scripted", "version": "1.0.0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", "tools": TOOLS}})
    elif method == "tools/call":
        text = "echo:" + json.dumps(params.get("arguments"), sort_keys=True)
        send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", "content": [{"type": "text", "text": text}], "isError": False}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method not found: " + method}})
