"""Drive an MCP server through `chock gateway` with the official Python SDK.

Usage: client.py <revision> <tool> <json args> -- <server command...>
Prints one JSON object: the tools listed and the outcome of one tools/call.
"""
import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    revision, tool, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    command = sys.argv[sys.argv.index("--") + 1 :]
    # The SDK passes only a few variables to the server by default; the
    # gateway needs the whole environment (HOME, CHOCK_STATE_DIR, ...).
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            if revision == "2025-11-25":
                await session.initialize()
            else:
                await session.discover()
            listed = await session.list_tools()
            outcome = {"revision": session.protocol_version, "tools": sorted(t.name for t in listed.tools)}
            try:
                result = await session.call_tool(tool, args)
                outcome["call"] = {"ok": True, "error": getattr(result, "is_error", None), "text": [c.text for c in result.content if hasattr(c, "text")]}
            except Exception as err:  # the SDK raises McpError for a JSON-RPC error
                error = getattr(err, "error", None)
                outcome["call"] = {"ok": False, "code": getattr(error, "code", None), "message": str(err)}
    print(json.dumps(outcome))


asyncio.run(main())
