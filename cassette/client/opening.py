"""How cassette, as a client, opens a session in an era: the handshake every client-side
tool shares (``check``, ``verify``, the scenarios runner).

``legacy``: ``initialize`` and ``notifications/initialized``. ``modern`` (2026-07-28):
``server/discover``, and from then on every request carries the protocol version, the
client's capabilities and its info in ``params._meta`` (``Opening.params`` adds them).
``auto`` does what the official SDKs' dual-era clients do: probe with
``server/discover`` and fall back to ``initialize`` on anything that is not evidence of a
modern server we share a version with (any JSON-RPC error, or a result listing no modern
version we speak); only a -32022 naming nothing but modern versions we do not speak is an
incompatibility, since no fallback could work.

The answer to a failed opening is a ``TransportError`` naming what the server said: the
session cannot go on, and the caller reports it as "the server could not be reached".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, Protocol

import attrs

from cassette.core.eras.bridge import UNSUPPORTED_VERSION
from cassette.core.wire.jsonrpc import JSONObject
from cassette.core.wire.mcp import LATEST_LEGACY, META_PREFIX, MODERN_VERSION
from cassette.errors import TransportError, UsageError

__all__ = [
    "ERAS",
    "Opening",
    "Requester",
    "discovered",
    "envelope",
    "initialized",
    "open_session",
    "speaks_modern",
]

#: The eras a client-side tool can be asked to open.
ERAS: Final = ("auto", "legacy", "modern")


class Requester(Protocol):
    """What an opening needs of a connection: one request at a time, and notifications."""

    async def request(self, method: str, params: Any = None) -> JSONObject: ...

    async def notify(self, method: str, params: Any = None) -> None: ...


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def envelope(
    params: Mapping[str, Any] | None,
    client_info: Mapping[str, Any],
    capabilities: Mapping[str, Any],
) -> dict[str, Any]:
    """A modern request's params: what it asks, plus who asks and in which revision. A
    ``_meta`` the caller gave keeps its own keys beside the envelope's."""
    given = dict(params or {})
    meta = {
        **_dict(given.get("_meta")),
        META_PREFIX + "protocolVersion": MODERN_VERSION,
        META_PREFIX + "clientCapabilities": dict(capabilities),
        META_PREFIX + "clientInfo": dict(client_info),
    }
    return {**given, "_meta": meta}


@attrs.frozen
class Opening:
    """What the era's opening told us: the server, its capabilities, the version; and who
    we said we are, so that every later request of a modern session can say it again."""

    era: str  # "legacy" or "modern"
    protocol: str | None
    server: dict[str, Any]
    capabilities: dict[str, Any]
    missing_name: str  # the warning when the server gives no name
    client_info: Mapping[str, Any] = attrs.field(factory=dict)
    client_capabilities: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def modern(self) -> bool:
        return self.era == "modern"

    def params(self, params: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """``params`` as this session sends them: with the envelope when it is modern."""
        if self.modern:
            return envelope(params, self.client_info, self.client_capabilities)
        return None if params is None else dict(params)


def _only_other_modern(error: dict[str, Any]) -> bool:
    """A -32022 whose ``supported`` list has no version we speak, and no legacy one
    either: a modern-only server of another revision, which no fallback can reach."""
    supported = _dict(error.get("data")).get("supported")
    if error.get("code") != UNSUPPORTED_VERSION or not isinstance(supported, list):
        return False
    # revisions are dates: every legacy one sorts before the first modern one
    return MODERN_VERSION not in supported and all(str(v) >= MODERN_VERSION for v in supported)


def speaks_modern(reply: dict[str, Any], era: str) -> bool:
    """Whether a ``server/discover`` reply opens a modern session (``False``: fall back to
    ``initialize``, under ``auto`` only); a ``TransportError`` when neither era can work."""
    error, result = reply.get("error"), reply.get("result")
    if isinstance(error, dict) or not isinstance(result, dict):
        if era == "auto" and not (isinstance(error, dict) and _only_other_modern(error)):
            return False
        raise TransportError(f"the server refused server/discover: {json.dumps(error)}")
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or MODERN_VERSION not in versions:
        if era == "auto":
            return False  # it answers discover but advertises no revision we speak
        raise TransportError(
            f"server/discover lists no protocol version cassette speaks ({MODERN_VERSION}): "
            f"{json.dumps(versions)}"
        )
    return True


async def _initialize(
    conn: Requester,
    client_info: Mapping[str, Any],
    capabilities: Mapping[str, Any],
    version: str,
) -> Opening:
    reply = await conn.request(
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": dict(capabilities),
            "clientInfo": dict(client_info),
        },
    )
    if "error" in reply or not isinstance(reply.get("result"), dict):
        raise TransportError(f"the server refused initialize: {json.dumps(reply.get('error'))}")
    await conn.notify("notifications/initialized")
    return initialized(reply["result"], client_info, capabilities)


def initialized(
    result: Mapping[str, Any],
    client_info: Mapping[str, Any] | None = None,
    capabilities: Mapping[str, Any] | None = None,
) -> Opening:
    """The legacy opening an ``initialize`` result tells of (a live one, or a recorded one
    that ``check TAPE`` reads)."""
    protocol = result.get("protocolVersion")
    return Opening(
        "legacy",
        protocol if isinstance(protocol, str) else None,
        _dict(result.get("serverInfo")),
        _dict(result.get("capabilities")),
        "initialize result has no serverInfo.name",
        client_info or {},
        capabilities or {},
    )


async def _discover(
    conn: Requester, era: str, client_info: Mapping[str, Any], capabilities: Mapping[str, Any]
) -> Opening | None:
    """The modern opening, or ``None`` (auto only) when the answer says "legacy server"."""
    reply = await conn.request("server/discover", envelope(None, client_info, capabilities))
    if not speaks_modern(reply, era):
        return None
    return discovered(reply["result"], client_info, capabilities)


def discovered(
    result: Mapping[str, Any],
    client_info: Mapping[str, Any] | None = None,
    capabilities: Mapping[str, Any] | None = None,
) -> Opening:
    """The modern opening a ``server/discover`` result tells of (live, or recorded)."""
    return Opening(
        "modern",
        MODERN_VERSION,
        _dict(_dict(result.get("_meta")).get(META_PREFIX + "serverInfo")),
        _dict(result.get("capabilities")),
        "server/discover result has no serverInfo in _meta",
        client_info or {},
        capabilities or {},
    )


async def open_session(
    conn: Requester,
    era: str,
    *,
    client_info: Mapping[str, Any],
    capabilities: Mapping[str, Any] | None = None,
    legacy_version: str = LATEST_LEGACY,
) -> Opening:
    """Open a session in ``era`` (``auto``, ``legacy`` or ``modern``) on ``conn``; a legacy
    session asks for ``legacy_version``."""
    if era not in ERAS:
        from cassette.core.words.suggest import unknown_choice

        raise UsageError(unknown_choice("era", era, ERAS))
    caps = dict(capabilities or {})
    if era != "legacy":
        opening = await _discover(conn, era, client_info, caps)
        if opening is not None:
            return opening
    return await _initialize(conn, client_info, caps, legacy_version)
