"""``cassette check``: connect to a server as a client and report what it offers and what is wrong.

``check -- COMMAND`` (and ``--url``) checks a live server, here; ``check TAPE`` checks
what a cassette recorded, offline, with the same rules and the same report
(``cassette.tools.check_tape``); ``check TAPE --live`` starts the server TAPE's header
names and checks it live.

The client is cassette's own (``ClientConnection`` over a transport plugin), not the SDK,
so the core stays SDK-free and a replay of the session answers exactly what the live
server did: ``check`` against a server and against a replay of its recording print the
same report. The session is fixed: the era's opening, then every advertised list, page by
page, in a fixed order.

The era (``--era``) decides the opening. ``legacy``: ``initialize`` and
``notifications/initialized``. ``modern`` (2026-07-28): ``server/discover``, and every
request carries the protocol version, capabilities and client info in ``params._meta``.
``auto`` (the default) does what the official SDKs' dual-era clients do: probe with
``server/discover`` and fall back to ``initialize`` on anything that is not evidence of a
modern server we share a version with (any JSON-RPC error, or a result listing no modern
version we speak); only a -32022 naming nothing but modern versions we do not speak is an
incompatibility. The report names the era that was negotiated.

Schemas are validated with ``jsonschema`` (the ``tools`` extra) against the draft each
declares in ``$schema`` (2020-12 when none is declared). Without it the report says so.

The server may be a replay (``check -- cassette replay TAPE``) of a recording whose client
never listed everything the server advertises: a list the replay answers with its miss
(``-32099``, "cassette-mcp: ... never recorded") was never recorded, which says nothing
of the server, so it is a note, not an error.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from cassette.client.connection import McpClient, closed_errors
from cassette.client.opening import ERAS, Opening, open_session, speaks_modern
from cassette.client.target import ServerTarget
from cassette.core.wire.definitions import TOOL_NAME, Issue, schema_checker, schema_issues
from cassette.core.wire.jsonrpc import REPLAY_MISS
from cassette.core.wire.mcp import LATEST_LEGACY, MODERN_VERSION
from cassette.core.wire.urls import check_http_url
from cassette.errors import CassetteError, TransportError, UsageError
from cassette.store.headers import project_headers
from cassette.tools._common import emit
from cassette.tools._surface import SURFACES, CheckReport, schema_validator, tool_issues

__all__ = [
    "ERAS",
    "SURFACES",
    "TOOL_NAME",
    "CheckReport",
    "check_server",
    "main",
    "schema_checker",
    "schema_issues",
    "speaks_modern",
]

CLIENT_PROTOCOL = LATEST_LEGACY
MODERN_PROTOCOL = MODERN_VERSION
_CLIENT_INFO = {"name": "cassette-check", "version": "1"}
_PAGES = 50  # a server that paginates forever is a finding, not a hang


async def _list_all(
    conn: Any, method: str, key: str, opening: Opening
) -> tuple[list[Any], str | Issue | None]:
    """Every item of a paginated list, or the error that stopped it (a note, when a
    replayed server says the page was never recorded)."""
    items: list[Any] = []
    cursor: str | None = None
    for number in range(_PAGES):
        params = {"cursor": cursor} if cursor else None
        reply = await conn.request(method, opening.params(params))
        if "error" in reply:
            error = reply["error"] if isinstance(reply["error"], dict) else {}
            if _never_recorded(error):
                where = f"page {number + 1} of {method}" if number else method
                return items, Issue("note", f"{where}: not in the recording replayed, not checked")
            return items, f"{error.get('code')} {error.get('message', '')}".strip()
        result = reply.get("result") if isinstance(reply.get("result"), dict) else {}
        page = result.get(key) if isinstance(result, dict) else None
        if not isinstance(page, list):
            return items, f"the result has no {key!r} list"
        items += page
        cursor = result.get("nextCursor") if isinstance(result, dict) else None
        if not isinstance(cursor, str) or not cursor:
            return items, None
    return items, f"still paginating after {_PAGES} pages"


def _never_recorded(error: Mapping[str, Any]) -> bool:
    """Whether an error is a replay's miss: the request was never recorded."""
    message = error.get("message")
    return error.get("code") == REPLAY_MISS and str(message).startswith("cassette-mcp:")


async def _session(conn: Any, era: str = "auto") -> CheckReport:
    opening = await open_session(conn, era, client_info=_CLIENT_INFO)
    caps, server = opening.capabilities, opening.server
    counts = {"tools": 0, "resources": 0, "prompts": 0, "templates": 0}
    jsonschema, issues = schema_validator()
    for capability, method, key, counted in SURFACES:
        if capability not in caps:
            continue
        items, failure = await _list_all(conn, method, key, opening)
        counts[counted] = len(items)
        if isinstance(failure, Issue):
            issues.append(failure)
        elif failure is not None:
            issues.append(Issue("error", f"{capability} advertised but {method} failed: {failure}"))
        if counted == "tools":
            issues += tool_issues(items, jsonschema)
    if not server.get("name"):
        issues.append(Issue("warning", opening.missing_name))
    return CheckReport(dict(server), opening.protocol, opening.era, counts, tuple(issues))


async def check_server(
    *,
    command: Sequence[str | os.PathLike[str]] | None = None,
    url: str | None = None,
    time_limit: float = 60.0,
    era: str = "auto",
    headers: Mapping[str, str] | None = None,
    server: ServerTarget | None = None,
) -> CheckReport:
    """Connect to a server (a command over stdio, or a streamable HTTP URL, or ``server``:
    one with a working directory, as ``cassette.client.launch.recorded_server`` makes
    it) and check it, in ``era`` (``auto``: discover, falling back to ``initialize``). A
    server that fails is reported with what it last said on stderr."""
    import anyio

    from cassette.client.launch import StderrTail, explained
    from cassette.errors import sole_exception
    from cassette.registry import get_connector
    from cassette.transport import ConnectOptions

    if sum(x is not None for x in (command, url, server)) != 1:
        raise UsageError("give either a server command (--stdio) or a URL (--url)")
    if server is None:
        argv = tuple(os.fspath(arg) for arg in command or ())
        server = ServerTarget(command=argv, url=url, headers=headers)
    transport = get_connector(server.transport_name)
    tail = StderrTail()
    try:
        with anyio.fail_after(time_limit):
            async with transport.connect(server.target(), ConnectOptions(on_side_event=tail)) as up:
                return await _session(McpClient(up), era)
    except Exception as raised:
        exc = explained(sole_exception(raised), tail, _CLOSED)  # groups wrap the one error
        if isinstance(exc, TimeoutError):
            raise TransportError(f"the server did not answer within {time_limit:g}s") from exc
        if isinstance(exc, closed_errors()):
            raise TransportError(_CLOSED) from exc
        if isinstance(exc, OSError) and not isinstance(exc, CassetteError):
            raise TransportError(f"the connection to the server failed: {exc}") from exc
        raise exc from None


_CLOSED = "the server closed the connection before answering"


def main(args: argparse.Namespace) -> int:
    import anyio

    command = shlex.split(args.stdio) if args.stdio is not None else None
    if command is not None and not command:
        raise UsageError("--stdio needs a command")
    after = list(getattr(args, "server", None) or [])
    tape = getattr(args, "tape", None)
    given = sum(x is not None for x in (command, args.url, tape)) + bool(after)
    if given != 1:
        raise UsageError(
            "check needs one server: TAPE (what it recorded, offline; with --live, the "
            'server its header names), -- COMMAND [ARG...], --stdio "COMMAND" or --url URL'
        )
    if args.url is not None:
        check_http_url(args.url, "--url")
    elif args.headers:
        raise UsageError("--header is for --url URL (a command reads its own)")
    if args.live and tape is None:
        raise UsageError("--live is for check TAPE: it starts the server TAPE's header names")
    if tape is not None and not args.live:
        return _offline(tape, args)
    command = command or after or None
    expanded = project_headers(args.headers) if args.url is not None else None
    headers = expanded.headers if expanded is not None else None
    server = _recorded(tape) if tape is not None else None
    try:
        report = anyio.run(
            lambda: check_server(
                command=command,
                url=args.url,
                time_limit=args.timeout,
                era=args.era,
                headers=headers,
                server=server,
            )
        )
    except (TransportError, CassetteError) as exc:
        if isinstance(exc, UsageError):
            raise
        from cassette.client.launch import with_hint

        sys.stderr.write(f"cassette: error: {with_hint(str(exc), tape)}\n")
        return 2
    emit(json.dumps(report.as_data(), indent=2) if args.format == "json" else report.text())
    return 0 if report.passed else 1


def _offline(tape: str, args: argparse.Namespace) -> int:
    """``check TAPE``: the recorded surface, no server started."""
    if args.era != "auto":
        raise UsageError(
            f"--era {args.era} opens a live session: check TAPE reads the opening TAPE "
            "recorded (add --live to check the server its header names)"
        )
    from cassette.tools.check_tape import check_cassette

    report = check_cassette(tape)
    emit(json.dumps(report.as_data(), indent=2) if args.format == "json" else report.text())
    return 0 if report.passed else 1


def _recorded(tape: str) -> ServerTarget:
    """The server ``tape``'s header recorded (``check TAPE --live``), started as ``verify``
    and ``variant`` start it."""
    from cassette.client.launch import recorded_server
    from cassette.store.storage import Cassette

    return recorded_server(Cassette.load(tape).header, tape, source=tape)
