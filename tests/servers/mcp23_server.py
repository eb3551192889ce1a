"""The dual-era test server as the Python SDK 2.3.0 ships it: dual_era_server.py's tools,
prompts and resource, with the SDK's own ``server/discover``, which lists only
``2026-07-28`` although the server accepts a legacy ``initialize`` too (as fastmcp 4 does).
A 2026-07-28 recording of it proves nothing of legacy clients by its discovery: the
recorder's probe (cassette.runtime.probe) is what tells the cassette.

It has one tool more, ``read_file``, gated by the client's roots as a file server checks
access: it asks the client for its roots (``roots/list``, or an ``input_required`` round)
and reads a file of its own small tree only when the path lies under one of them, else
refuses the call. What a client gets from it depends on its roots: the matrix drivers
answer ``file:///matrix/root`` (tests/clients/session.json), under which the file lies;
an agent answers its working folder; the Inspector answers none; a client that declares
no roots is refused before anything is read.

    mcp23_server.py                 stdio
    mcp23_server.py http PORT       streamable HTTP on 127.0.0.1:PORT/mcp
    mcp23_server.py sse PORT        legacy HTTP+SSE on 127.0.0.1:PORT/sse
"""

from __future__ import annotations

import sys
from typing import Annotated

from dual_era_server import app, ask_roots, serve
from mcp.server.mcpserver.resolve import Resolve
from mcp.types import ListRootsResult

#: the server's tree: the one file the roots-gated tool reads
FILES = {"/matrix/root/notes.txt": "notes of the matrix"}


@app.tool()
def read_file(path: str, listed: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """Read PATH, only when it lies under one of the client's roots."""
    for root in listed.roots:
        base = str(root.uri).removeprefix("file://").rstrip("/")
        if path == base or path.startswith(base + "/"):
            return FILES.get(path, f"no such file: {path}")
    raise ValueError(f"access denied: {path} is not under the client's roots")


if __name__ == "__main__":
    serve(sys.argv[1:])
