"""``cassette check``: connect to a server as a client and report what it offers and what is wrong.

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
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from cassette.client.connection import McpClient, closed_errors
from cassette.client.opening import ERAS, Opening, open_session, speaks_modern
from cassette.client.target import ServerTarget
from cassette.core.definitions import TOOL_NAME, Issue, schema_checker, schema_issues
from cassette.core.mcp import LATEST_LEGACY, MODERN_VERSION
from cassette.core.urls import check_http_url
from cassette.errors import CassetteError, TransportError, UsageError
from cassette.store.headers import project_headers
from cassette.tools._common import emit

__all__ = [
    "ERAS",
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


@attrs.frozen
class CheckReport:
    """What ``check`` found; ``passed`` is true when there is no error."""

    server: dict[str, Any]
    protocol: str | None
    era: str
    counts: dict[str, int]
    issues: tuple[Issue, ...]

    @property
    def errors(self) -> int:
        return sum(i.severity == "error" for i in self.issues)

    @property
    def warnings(self) -> int:
        return sum(i.severity == "warning" for i in self.issues)

    @property
    def passed(self) -> bool:
        return self.errors == 0

    def as_data(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "protocol": self.protocol,
            "era": self.era,
            "counts": self.counts,
            "findings": [attrs.asdict(i) for i in self.issues],
            "result": "PASS" if self.passed else "FAIL",
            "errors": self.errors,
            "warnings": self.warnings,
        }

    def text(self) -> str:
        name = self.server.get("name", "(unnamed)")
        version = self.server.get("version", "(no version)")
        c = self.counts
        lines = [
            f"server: {name} {version}",
            f"protocol: {self.protocol or 'unknown'} ({self.era} era)",
            f"surface: {c['tools']} tools, {c['resources']} resources, {c['prompts']} prompts, "
            f"{c['templates']} resource templates",
        ]
        lines += [f"{i.severity}: {i.message}" for i in self.issues]
        verdict = "PASS" if self.passed else "FAIL"
        lines.append(f"result: {verdict} ({self.errors} errors, {self.warnings} warnings)")
        return "\n".join(lines)


def _tool_issues(tools: list[Any], jsonschema: Any) -> list[Issue]:
    out: list[Issue] = []
    seen: set[str] = set()
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            out.append(Issue("error", f"tool #{index} has no name"))
            continue
        name = tool["name"]
        label = f"tool {json.dumps(name)}"
        if name in seen:
            out.append(Issue("error", f"{label}: duplicate tool name"))
        seen.add(name)
        if not TOOL_NAME.match(name):
            out.append(Issue("error", f"{label}: name must be 1-128 of A-Z a-z 0-9 _ . -"))
        if not str(tool.get("description") or "").strip():
            out.append(Issue("warning", f"{label}: no description"))
        out += schema_issues(
            jsonschema, f"{label} inputSchema", tool.get("inputSchema"), required=True
        )
        out += schema_issues(
            jsonschema, f"{label} outputSchema", tool.get("outputSchema"), required=False
        )
    return out


async def _list_all(
    conn: Any, method: str, key: str, opening: Opening
) -> tuple[list[Any], str | None]:
    """Every item of a paginated list, or the error that stopped it."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(_PAGES):
        params = {"cursor": cursor} if cursor else None
        reply = await conn.request(method, opening.params(params))
        if "error" in reply:
            error = reply["error"] if isinstance(reply["error"], dict) else {}
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


async def _session(conn: Any, era: str = "auto") -> CheckReport:
    opening = await open_session(conn, era, client_info=_CLIENT_INFO)
    caps, server = opening.capabilities, opening.server
    issues: list[Issue] = []
    counts = {"tools": 0, "resources": 0, "prompts": 0, "templates": 0}
    jsonschema = schema_checker()
    if jsonschema is None:
        issues.append(
            Issue(
                "warning",
                f"schemas not validated: jsonschema is not installed ({_install('tools')})",
            )
        )
    surfaces = (
        ("tools", "tools/list", "tools", "tools"),
        ("resources", "resources/list", "resources", "resources"),
        ("resources", "resources/templates/list", "resourceTemplates", "templates"),
        ("prompts", "prompts/list", "prompts", "prompts"),
    )
    for capability, method, key, counted in surfaces:
        if capability not in caps:
            continue
        items, failure = await _list_all(conn, method, key, opening)
        counts[counted] = len(items)
        if failure is not None:
            issues.append(Issue("error", f"{capability} advertised but {method} failed: {failure}"))
        if counted == "tools":
            issues += _tool_issues(items, jsonschema)
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
            "check needs one server: TAPE (the one its header names), -- COMMAND [ARG...], "
            '--stdio "COMMAND" or --url URL'
        )
    if args.url is not None:
        check_http_url(args.url, "--url")
    elif args.headers:
        raise UsageError("--header is for --url URL (a command reads its own)")
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


def _recorded(tape: str) -> ServerTarget:
    """The server ``tape``'s header recorded (``check TAPE``), started as ``verify`` and
    ``variant`` start it."""
    from cassette.client.launch import recorded_server
    from cassette.store.storage import Cassette

    return recorded_server(Cassette.load(tape).header, tape, source=tape)


def _install(extra: str) -> str:
    from cassette_mcp._install import install_command

    return install_command(extra)
