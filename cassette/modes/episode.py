"""What ``new_episodes`` is given and what it says: the options of an extension, a
request described for a person, the redaction of what it appends, and which of a
client's HTTP headers its live server gets.

Kept apart from ``cassette.modes.extend`` (the live leg's machinery) so that callers
building an extension, and the runner describing what was appended, read values only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from cassette.core.recording.recorder import BeforeRecord
from cassette.core.redaction.redactor import Redactor
from cassette.core.replay.matching import one_line
from cassette.core.wire.jsonrpc import JSONObject
from cassette.core.wire.meta import HEADERS
from cassette.store.storage import Cassette

__all__ = [
    "NOT_CARRIED",
    "ExtendOptions",
    "carried_headers",
    "describe_request",
    "redactor_of",
]

Info = Callable[[str], None]

# What a client's HTTP request says about its own replay session, its body or its
# connection, not about the leg: never carried on to the live server.
NOT_CARRIED: Final = frozenset(
    {
        "accept",
        "connection",
        "content-length",
        "content-type",
        "host",
        "keep-alive",
        "last-event-id",
        "mcp-method",
        "mcp-name",
        "mcp-protocol-version",
        "mcp-session-id",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)


@attrs.frozen(kw_only=True)
class ExtendOptions:
    """How an ``Extension`` reaches the live server and tells what it does.

    The server is reached with ``transport``; its stderr is shown to the person unless
    ``passthrough_stderr`` is off; ``before_record`` sees each message before it is
    appended; with ``prime`` a fresh server first gets the session's earlier requests.
    ``on_info`` hears what happens, ``on_appended`` each request answered live (as the
    client sent it) once its exchange is in the cassette."""

    transport: str = "stdio"
    on_info: Info | None = None
    on_appended: Callable[[JSONObject], None] | None = None
    passthrough_stderr: bool = True
    before_record: BeforeRecord | None = None
    prime: bool = False
    #: the command's redaction policy (``cassette.store.gate.policy``), widened by the
    #: cassette's header for what is appended (``None``: the project's)
    redactor: Redactor | None = None


def describe_request(message: JSONObject) -> str:
    """A request for a person: its method, and a tool call's tool."""
    method = one_line(message.get("method"))
    params = message.get("params")
    if method == "tools/call" and isinstance(params, dict):
        return f'{method} "{one_line(params.get("name"))}"'
    return method


def redactor_of(cassette: Cassette, base: Redactor | None = None) -> Redactor | None:
    """What is appended is redacted as the cassette was: the command's policy (``base``,
    else the project's) with the header's paths and named variables, refused in one line
    when a pattern it was recorded with is not given now (``cassette.store.gate.joined``:
    nothing read from a cassette is compiled), numbering its placeholders on after the
    cassette's so an appended session never reuses one for another value."""
    from cassette.store.gate import joined

    header = cassette.header
    return joined(base, header.redaction, events=(header, *cassette.events))


def carried_headers(meta: Mapping[str, Any] | None) -> dict[str, str] | None:
    """The client's HTTP headers worth carrying to the live server (credentials)."""
    raw = meta.get(HEADERS) if meta else None
    if not raw:
        return None
    headers: dict[str, str] = {}
    for name, value in raw:
        key = bytes(name).decode("latin-1").lower()
        if key not in NOT_CARRIED:
            headers[key] = bytes(value).decode("latin-1")
    return headers or None
