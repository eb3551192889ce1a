"""What each era's specification asks of a request before a session sees it, sans I/O.

A replay front stands for the server it recorded, so it must refuse what that server
refused, with the status and JSON-RPC error code its era names, before anything is
matched: a client that sends a wrong header would otherwise pass every test against the
replay and fail against the real server. The rules, and the live server each one was
compared with (docs/transports.md has the table, status by status):

* **streamable HTTP, legacy era** (2025-03-26 to 2025-11-25, sessions; the reference is
  server-everything on the TypeScript SDK): ``Accept`` must list both
  ``application/json`` and ``text/event-stream`` (406), the body must be
  ``application/json`` (415) and one JSON-RPC message or a batch (400, -32700), an
  ``initialize`` inside a session is refused (400, -32600), ``MCP-Protocol-Version``, when
  sent, must be a legacy revision (400);
* **streamable HTTP, modern era** (2026-07-28, stateless; the reference is the Python
  SDK): the body must be ``application/json`` (400), ``Accept`` must cover both types,
  wildcards included (406), the body must be one request or notification (a batch, a
  response or an ``id: null`` is 400, -32600), the request must carry the per-request
  envelope (400, -32602), its routing headers must agree with it and appear once (400,
  -32020), and its protocol version must be one the recorded server speaks (400, -32022,
  with the supported versions in ``data``);
* **legacy HTTP+SSE** (2024-11-05; the reference is server-everything in ``sse`` mode): a
  POST must be ``application/json`` (400) and one JSON-RPC message (400).

Each check returns a ``Refusal`` (what to answer instead) or ``None``; the fronts apply
them in the order the reference servers do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from cassette.core.wire.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    Classified,
    Kind,
    dumps_bytes,
    error_response,
)
from cassette.core.wire.mcp import LEGACY_VERSIONS, META_PREFIX, NAMED_PARAM, VERSION_META

__all__ = [
    "HEADER_MISMATCH",
    "INVALID_PARAMS",
    "UNSUPPORTED_VERSION",
    "Refusal",
    "decode_header_value",
    "json_refusal",
    "legacy_get_refusal",
    "legacy_post_refusal",
    "legacy_version_refusal",
    "modern_post_refusal",
    "sse_post_refusal",
]

#: 2026-07-28: a routing header disagrees with the body (or appears twice).
HEADER_MISMATCH: Final = -32020
#: 2026-07-28: the request's protocol version is not one the server speaks.
UNSUPPORTED_VERSION: Final = -32022
INVALID_PARAMS: Final = -32602
#: The envelope keys every 2026-07-28 request carries in ``params._meta``.
CAPABILITIES_META: Final = META_PREFIX + "clientCapabilities"
_ROUTING: Final = (b"mcp-protocol-version", b"mcp-method", b"mcp-name")
_JSON: Final = b"application/json"
_TEXT: Final = b"text/plain; charset=utf-8"
_SSE: Final = "text/event-stream"

#: A request's headers as the front parsed them once: lower-cased names, Latin-1 values
#: in the order sent (``cassette.transports.http._http.headers_of``).
Headers = Mapping[bytes, Sequence[str]]


@attrs.frozen
class Refusal:
    """What a front answers in place of a request it must not pass on."""

    status: int
    body: bytes = b""
    content_type: bytes | None = None


def json_refusal(
    status: int, code: int, message: str, msg_id: object = None, **data: Any
) -> Refusal:
    """A refusal with a JSON-RPC error body (``data`` when given)."""
    error = error_response(msg_id, code, message, data or None)
    return Refusal(status, dumps_bytes(error), _JSON)


def _values(headers: Headers, name: bytes) -> Sequence[str]:
    return headers.get(name, ())


def _first(headers: Headers, name: bytes) -> str | None:
    found = headers.get(name)
    return found[0] if found else None


def media_types(value: str | None) -> set[str]:
    """The media types an ``Accept`` value lists, lowercase, parameters dropped."""
    return {part.split(";")[0].strip().lower() for part in (value or "").split(",")} - {""}


def _is_json(content_type: str | None) -> bool:
    return (content_type or "").split(";")[0].strip().lower() == "application/json"


def decode_header_value(value: str | None) -> str | None:
    """Undo the ``=?base64?...?=`` form the 2026-07-28 revision uses for non-ASCII values."""
    import base64

    if value is not None and value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except ValueError:
            return None
    return value


# -- streamable HTTP, legacy era ----------------------------------------------------------


def legacy_post_refusal(headers: Headers, classified: Classified) -> Refusal | None:
    """A legacy-era POST's media types and body, checked as the TypeScript SDK's transport
    does before its server sees the message."""
    accepted = media_types(_first(headers, b"accept"))
    if not {"application/json", _SSE} <= accepted:
        text = "Not Acceptable: Client must accept both application/json and text/event-stream"
        return json_refusal(406, -32000, text)
    if not _is_json(_first(headers, b"content-type")):
        text = "Unsupported Media Type: Content-Type must be application/json"
        return json_refusal(415, -32000, text)
    if classified.kind is Kind.NOT_JSON:
        detail = f": {classified.problem}" if classified.problem else ""
        return json_refusal(400, PARSE_ERROR, f"Parse error{detail}")
    if classified.kind is Kind.INVALID:
        return json_refusal(400, PARSE_ERROR, "Parse error: Invalid JSON-RPC message")
    return None


def legacy_version_refusal(headers: Headers) -> Refusal | None:
    """``MCP-Protocol-Version``, when sent to a legacy session, names a legacy revision."""
    version = _first(headers, b"mcp-protocol-version")
    if version is None or version in LEGACY_VERSIONS:
        return None
    supported = ", ".join(sorted(LEGACY_VERSIONS, reverse=True))
    text = f"Bad Request: Unsupported protocol version: {version} (supported versions: {supported})"
    return json_refusal(400, -32000, text)


def legacy_get_refusal(headers: Headers) -> Refusal | None:
    """A legacy GET must accept an event stream."""
    if _SSE not in media_types(_first(headers, b"accept")):
        return json_refusal(406, -32000, "Not Acceptable: Client must accept text/event-stream")
    return None


# -- streamable HTTP, modern era (2026-07-28) ---------------------------------------------


def modern_post_refusal(
    headers: Headers, classified: Classified, supported: Iterable[str]
) -> Refusal | None:
    """A 2026-07-28 POST checked as the specification's ladder says, first failure wins:
    media types, the body's shape, the envelope, the routing headers, the version."""
    return (
        _modern_media_refusal(headers)
        or _modern_shape_refusal(classified)
        or _modern_request_refusal(headers, classified, tuple(supported))
    )


def _modern_media_refusal(headers: Headers) -> Refusal | None:
    """HTTP-level refusals, before any JSON-RPC: no JSON-RPC error body (as live)."""
    if not _is_json(_first(headers, b"content-type")):
        return Refusal(400, b"Invalid Content-Type header", _TEXT)
    accepted = media_types(_first(headers, b"accept"))
    wildcard = "*/*" in accepted
    json_ok = wildcard or bool(accepted & {"application/json", "application/*"})
    sse_ok = wildcard or bool(accepted & {_SSE, "text/*"})
    return None if json_ok and sse_ok else Refusal(406)


def _modern_shape_refusal(classified: Classified) -> Refusal | None:
    """One request or notification per POST: no batch, no posted response, no null id."""
    if classified.kind is Kind.NOT_JSON:
        return json_refusal(400, PARSE_ERROR, "Parse error")
    if classified.kind not in (Kind.REQUEST, Kind.NOTIFICATION):
        text = "Body must be a single JSON-RPC request or notification object"
        return json_refusal(400, INVALID_REQUEST, text)
    return None


def _modern_request_refusal(
    headers: Headers, classified: Classified, supported: tuple[str, ...]
) -> Refusal | None:
    value: dict[str, Any] = classified.value
    if classified.kind is Kind.NOTIFICATION:
        return _unsupported(_first(headers, b"mcp-protocol-version"), supported, None)
    msg_id = value.get("id")
    raw_params = value.get("params")
    params: Mapping[str, Any] = raw_params if isinstance(raw_params, dict) else {}
    meta = params.get("_meta")
    if not isinstance(meta, dict) or VERSION_META not in meta or CAPABILITIES_META not in meta:
        text = f"params._meta must carry {VERSION_META!r} and {CAPABILITIES_META!r}"
        return json_refusal(400, INVALID_PARAMS, text, msg_id)
    mismatch = _routing_mismatch(headers, value["method"], params, meta)
    if mismatch is not None:
        return json_refusal(400, HEADER_MISMATCH, mismatch, msg_id)
    version = meta[VERSION_META]
    if not isinstance(version, str):
        return json_refusal(400, INVALID_PARAMS, "the protocol version must be a string", msg_id)
    return _unsupported(version, supported, msg_id)


def _routing_mismatch(
    headers: Headers, method: str, params: Mapping[str, Any], meta: Any
) -> str | None:
    """Why the routing headers disagree with the body, or ``None`` when they agree."""
    for name in _ROUTING:
        if len(_values(headers, name)) > 1:
            return f"{name.decode()} header appears more than once"
    version = _first(headers, b"mcp-protocol-version")
    if version is None or version != meta.get(VERSION_META):
        return "MCP-Protocol-Version header does not match the request envelope's version"
    if _first(headers, b"mcp-method") != method:
        return "Mcp-Method header does not match the request body's method"
    name_key = NAMED_PARAM.get(method)
    expected = params.get(name_key) if name_key else None
    if isinstance(expected, str) and decode_header_value(_first(headers, b"mcp-name")) != expected:
        return f"Mcp-Name header does not match the request body's {name_key!r}"
    return None


def _unsupported(version: str | None, supported: tuple[str, ...], msg_id: object) -> Refusal | None:
    if version in supported:
        return None
    return json_refusal(
        400,
        UNSUPPORTED_VERSION,
        "Unsupported protocol version",
        msg_id,
        supported=list(supported),
        requested=version,
    )


# -- legacy HTTP+SSE (2024-11-05) ----------------------------------------------------------


def sse_post_refusal(headers: Headers, classified: Classified) -> Refusal | None:
    """A 2024-11-05 POST: one JSON-RPC message, sent as ``application/json``."""
    content_type = _first(headers, b"content-type")
    if not _is_json(content_type):
        shown = content_type or "none"
        return Refusal(400, f"Unsupported content-type: {shown}".encode(), _TEXT)
    if classified.kind is Kind.NOT_JSON:
        return Refusal(400, b"Could not parse message", _TEXT)
    if not classified.is_message:
        return Refusal(400, b"Invalid message: not one JSON-RPC message", _TEXT)
    return None
