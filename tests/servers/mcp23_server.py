"""The dual-era test server as the Python SDK 2.3.0 ships it: dual_era_server.py's tools,
prompts and resource, with the SDK's own ``server/discover``, which lists only
``2026-07-28`` although the server accepts a legacy ``initialize`` too (as fastmcp 4 does).
A 2026-07-28 recording of it proves nothing of legacy clients by its discovery: the
recorder's probe (cassette.runtime.probe) is what tells the cassette.

    mcp23_server.py                 stdio
    mcp23_server.py http PORT       streamable HTTP on 127.0.0.1:PORT/mcp
    mcp23_server.py sse PORT        legacy HTTP+SSE on 127.0.0.1:PORT/sse
"""

from __future__ import annotations

import sys

from dual_era_server import serve

if __name__ == "__main__":
    serve(sys.argv[1:])
