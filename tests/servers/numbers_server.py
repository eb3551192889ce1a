"""An MCP server whose answers hold numbers Python cannot hold as written.

``1e400`` and ``-1e400`` (past a double), ``NaN`` and ``Infinity`` (what Python's own
``json.dumps`` writes for them) and an integer longer than Python converts: the
``initialize`` answer holds one too. Every answer is written as literal text, so the
bytes on the wire are exactly the ones the tests look for. ``http PORT`` serves the same
answers over streamable HTTP (JSON bodies, standard library only) instead of stdio.
"""

import json
import sys

NUMBERS = (
    '{"a":1e400,"b":-1e400,"c":NaN,"d":Infinity,"e":-Infinity,'
    '"f":123456789012345678901234567890,"g":' + "7" * 5000 + "}"
)


def answer(message: dict) -> str | None:
    """The answer's text, or ``None`` for a notification."""
    if "id" not in message:
        return None
    ident = json.dumps(message["id"])
    method = message.get("method")
    if method == "initialize":
        version = json.dumps(message["params"].get("protocolVersion", "2025-11-25"))
        result = (
            '{"protocolVersion":' + version + ',"capabilities":{"tools":{}},'
            '"serverInfo":{"name":"numbers","version":"1","limit":1e400}}'
        )
    elif method == "tools/list":
        result = '{"tools":[{"name":"numbers","inputSchema":{"type":"object"}}]}'
    else:
        result = '{"content":[],"structuredContent":' + NUMBERS + "}"
    return '{"jsonrpc":"2.0","id":' + ident + ',"result":' + result + "}"


def serve_http(port: int) -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            text = answer(json.loads(body))
            data = b"" if text is None else text.encode()
            self.send_response(202 if text is None else 200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    # the port bound (port 0: the one the system picked), as tests.helpers.support.listening reads
    # it
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


def main() -> int:
    if sys.argv[1:2] == ["http"]:
        serve_http(int(sys.argv[2]))
        return 0
    for line in sys.stdin:
        text = answer(json.loads(line))
        if text is not None:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
