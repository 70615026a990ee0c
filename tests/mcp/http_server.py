"""A remote MCP server for the session tests: the official Python SDK's
MCPServer over streamable HTTP on 127.0.0.1:<port>, with one tool, add.

Usage: http_server.py <port> [<redirect url> | tls <cert> <key>]
With a redirect url it is no MCP server at all: every request is answered
307 with that Location, as a server moved to another host would be. With
tls it serves https with the certificate given (a self-signed one, which
no system root vouches for).
"""
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

PORT = int(sys.argv[1])

if len(sys.argv) > 2 and sys.argv[2] != "tls":
    TARGET = sys.argv[2]

    class Redirect(BaseHTTPRequestHandler):
        def answer(self):
            self.send_response(307)
            self.send_header("Location", TARGET)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = do_DELETE = answer

        def log_message(self, *args):
            pass

    HTTPServer(("127.0.0.1", PORT), Redirect).serve_forever()
else:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("notes")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    if len(sys.argv) > 2:
        import uvicorn

        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=PORT, ssl_certfile=sys.argv[3], ssl_keyfile=sys.argv[4], log_level="warning")
    else:
        server.run("streamable-http", host="127.0.0.1", port=PORT)
