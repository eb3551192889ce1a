"""A streamable HTTP MCP server that tells what a recording proxy sent it, for the tests of
what the proxy may and may not pass on. Standard library, plain ASGI under uvicorn.

    visitor_server.py http PORT                      no authorization
    visitor_server.py http PORT --auth MODE [URL]    every MCP request wants a bearer token

Cookies: each ``initialize`` answer sets a cookie of its own, ``visitor=v<N>`` (N counts
sessions), as a load balancer's affinity cookie does; the tool ``cookie`` answers with the
``Cookie`` header its request carried and the one its session's ``initialize`` carried
(``none`` without one): ``visitor=v1 | initialize: none``. A client that keeps cookies
sends its own back; one that keeps none sends none, and must reach the server with none.

Authorization (``--auth``): a request without a bearer token gets 401 whose
``WWW-Authenticate`` names a protected resource metadata URL (RFC 9728). ``MODE`` says what
this server publishes:

* ``own``: its metadata at its own well-known URLs, ``resource`` naming it;
* ``parent``: the same, ``resource`` naming its origin (a parent of its MCP path);
* ``foreign``: its metadata names another resource (``URL``) as ``resource``;
* ``elsewhere``: no metadata of its own; the challenge names ``URL``, another origin (the
  test's own lure, which notes every request it gets).

PORT 0 takes any free port; it prints ``listening on 127.0.0.1:PORT`` once it listens.
"""

from __future__ import annotations

import itertools
import json
import socket
import sys
from typing import Any

import uvicorn

WELL_KNOWN = "/.well-known/oauth-protected-resource"
TOOLS = [
    {
        "name": "cookie",
        "description": "the Cookie header of this call",
        "inputSchema": {"type": "object"},
    }
]


class Visitor:
    def __init__(self, port: int, auth: str | None, url: str | None) -> None:
        self.me = f"http://127.0.0.1:{port}"
        self.auth = auth
        self.url = url
        self.sessions = itertools.count(1)
        self.at_initialize: dict[str, str] = {}  # session id -> the Cookie its opening carried

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        path = scope["path"]
        if path.startswith(WELL_KNOWN):
            await self.published(send)
        elif path != "/mcp" or scope["method"] != "POST":
            await answer(send, 405 if path == "/mcp" else 404, b"{}")
        elif self.auth is not None and not headers.get("authorization", "").startswith("Bearer "):
            where = self.url if self.auth == "elsewhere" else f"{self.me}{WELL_KNOWN}/mcp"
            challenge = f'Bearer resource_metadata="{where}"'
            await answer(send, 401, b'{"error":"invalid_token"}', [("www-authenticate", challenge)])
        else:
            await self.mcp(send, json.loads(body), headers)

    async def published(self, send: Any) -> None:
        mine = {"own": f"{self.me}/mcp", "parent": self.me, "foreign": self.url}
        resource = mine.get(str(self.auth))
        if resource is None:
            await answer(send, 404, b'{"error":"not_found"}')
        else:
            await self.metadata(send, resource)

    async def metadata(self, send: Any, resource: str) -> None:
        document = {"resource": resource, "authorization_servers": ["http://127.0.0.1:9/"]}
        await answer(send, 200, json.dumps(document).encode())

    async def mcp(self, send: Any, message: dict[str, Any], headers: dict[str, str]) -> None:
        method = message.get("method")
        if "id" not in message:
            await answer(send, 202, b"")
            return
        extra: list[tuple[str, str]] = []
        if method == "initialize":
            n = next(self.sessions)
            self.at_initialize[f"s{n}"] = headers.get("cookie", "none")
            extra = [("mcp-session-id", f"s{n}"), ("set-cookie", f"visitor=v{n}; Path=/")]
            result: Any = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "visitor", "version": "1.0.0"},
            }
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            opened = self.at_initialize.get(headers.get("mcp-session-id", ""), "unknown")
            said = f"{headers.get('cookie', 'none')} | initialize: {opened}"
            result = {"content": [{"type": "text", "text": said}]}
        else:
            result = {}
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        await answer(send, 200, json.dumps(reply).encode(), extra)


async def answer(
    send: Any, status: int, body: bytes, extra: list[tuple[str, str]] | None = None
) -> None:
    headers = [(b"content-type", b"application/json")]
    headers += [(k.encode(), v.encode()) for k, v in extra or ()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def main(argv: list[str]) -> None:
    # bound here, before uvicorn, so that port 0 works: the server must know its own URL
    # (its metadata names it), and a test reads the port from the line printed below
    sock = socket.socket()
    sock.bind(("127.0.0.1", int(argv[1])))
    sock.listen(128)
    port = sock.getsockname()[1]
    auth = argv[3] if len(argv) > 3 and argv[2] == "--auth" else None
    url = argv[4] if len(argv) > 4 else None
    app = Visitor(port, auth, url)
    print(f"listening on 127.0.0.1:{port}", flush=True)
    config = uvicorn.Config(app, log_level="info")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main(sys.argv[1:])
