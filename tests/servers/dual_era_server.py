"""The modern test server (``modern_server.py``), with a truthful ``server/discover``.

The Python SDK's ``MCPServer`` accepts the legacy ``initialize`` handshake too, but its
default discovery lists only 2026-07-28, so a recording of it cannot prove that a legacy
client would have been served. This variant lists every revision it accepts, as a
dual-era server should; a cassette of it serves legacy clients as well
(``cassette.core.eras``). Run as ``modern_server.py`` is: stdio, or ``http PORT``.
"""

from __future__ import annotations

import sys
from typing import Any

import mcp_types as types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from modern_server import app

_server = app._lowlevel_server  # the SDK's documented way: replace the discover handler
_default = _server._handle_discover


async def _discover(ctx: Any, params: types.RequestParams) -> types.DiscoverResult:
    result = await _default(ctx, params)
    versions = [*MODERN_PROTOCOL_VERSIONS, *reversed(HANDSHAKE_PROTOCOL_VERSIONS)]
    return result.model_copy(update={"supported_versions": versions})


_server.add_request_handler("server/discover", types.RequestParams, _discover)

if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run("stdio")
