"""Constants of the MCP specification that more than one layer needs.

Kept in one module so the fronts, the recorder and the replayer cannot disagree about a
revision name or an envelope key.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "LATEST_LEGACY",
    "LEGACY_VERSIONS",
    "LOG_LEVEL_META",
    "META_PREFIX",
    "MODERN_VERSION",
    "NAMED_PARAM",
    "SUBSCRIPTION_ID_META",
    "VERSION_META",
]

#: The protocol revisions of the legacy (``initialize``) era.
LEGACY_VERSIONS: Final = frozenset(
    {"2024-10-07", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
)
LATEST_LEGACY: Final = max(LEGACY_VERSIONS)
#: The stateless revision that opened the modern era (``server/discover``, no handshake).
MODERN_VERSION: Final = "2026-07-28"
#: The prefix of the ``_meta`` keys the specification reserves for itself.
META_PREFIX: Final = "io.modelcontextprotocol/"
#: Where a modern request names its protocol revision: ``params._meta[VERSION_META]``.
VERSION_META: Final = META_PREFIX + "protocolVersion"
#: Where a modern request names the log level it wants.
LOG_LEVEL_META: Final = META_PREFIX + "logLevel"
#: Where a modern notification names the ``subscriptions/listen`` stream it belongs to.
SUBSCRIPTION_ID_META: Final = META_PREFIX + "subscriptionId"
#: The parameter that names what a request acts on (the ``Mcp-Name`` header carries it).
NAMED_PARAM: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
