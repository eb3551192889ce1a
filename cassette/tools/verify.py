"""``cassette verify TAPE (-- COMMAND | --upstream URL)``: is the recording still true?

The command line over ``cassette.client.drift`` (which says how requests are re-fired,
answers compared and the server's own questions answered): options read once, the
project's ignores from ``[tool.cassette.verify]`` of pyproject.toml added to the command
line's, and the report printed on stdout. ``--update`` writes the drift into TAPE.

The calls that are sent execute for real: a tool that writes, sends or deletes does so
again, and a warning on stderr says so.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from cassette.client.compare import Ignores, classify
from cassette.client.connection import closed_errors
from cassette.client.drift import Progress, VerifyOptions, verify
from cassette.client.report import Verdict, VerifyReport, render
from cassette.client.snapshots import project_ignores
from cassette.client.target import ServerTarget
from cassette.core.urls import check_http_url
from cassette.errors import CassetteError, TransportError, UsageError
from cassette.runtime.keywords import deprecated_keywords
from cassette.store.headers import project_headers
from cassette.store.storage import Cassette
from cassette.tools._common import emit

__all__ = [
    "Verdict",
    "VerifyOptions",
    "VerifyReport",
    "classify",
    "main",
    "progress_bar",
    "project_ignores",
    "render",
    "verify_cassette",
]

_USAGE = (
    "usage: cassette verify TAPE [--update] [--ignore POINTER]... [--ignore-key NAME]... "
    "[--timeout S] [--transport NAME] (--upstream URL | -- COMMAND [ARG...])"
)


def progress_bar(done: int, total: int, width: int = 20) -> str:
    """``verify [#####...............] 5/20``: how far a verify run is, for a terminal."""
    filled = width if total <= 0 else min(width, width * done // total)
    return f"verify [{'#' * filled}{'.' * (width - filled)}] {done}/{total}"


def terminal_progress(stream: Any = None) -> Progress | None:
    """A progress callback redrawing one bar in place on ``stream`` (stderr), or ``None``
    when it is not a terminal: logs and CI output get no progress noise at all."""
    out = sys.stderr if stream is None else stream
    if not out.isatty():
        return None

    def draw(done: int, total: int) -> None:
        out.write("\r" + progress_bar(done, total))
        if done >= total:
            out.write("\n")
        out.flush()

    return draw


async def verify_cassette(
    tape: Cassette | str | os.PathLike[str],
    command: Sequence[str | os.PathLike[str]] | ServerTarget | None = None,
    options: VerifyOptions = VerifyOptions(),
    **legacy: Any,
) -> list[Verdict]:
    """Re-fire the recorded client requests at ``command`` (a stdio server's command
    line, or a ``ServerTarget``: ``ServerTarget(url=URL)`` for streamable HTTP, with
    ``transport="sse"`` for legacy SSE) and classify every answer, as ``options`` say; the
    verdicts (``cassette.client.drift.verify`` gives the whole report). The keyword
    options of earlier releases (``upstream=``, ``ignore=``, ...) still work, with a
    ``DeprecationWarning``."""
    deprecated_keywords(
        "verify_cassette",
        "verify_cassette(tape, ServerTarget(url=..., transport=...), "
        "VerifyOptions(ignores=Ignores(...), ...))",
        legacy,
        ("upstream", "ignore", "ignore_keys", "time_limit", "progress", "transport", "update"),
    )
    upstream, transport = legacy.pop("upstream", None), legacy.pop("transport", None)
    if legacy.keys() & {"ignore", "ignore_keys"}:
        ignores = Ignores(legacy.pop("ignore", ()), legacy.pop("ignore_keys", ()))
        options = attrs.evolve(options, ignores=ignores)
    options = attrs.evolve(options, **legacy)
    server = command
    if not isinstance(server, ServerTarget):
        if (server is None) == (upstream is None):
            raise UsageError("verify needs either a server command (-- COMMAND) or --upstream URL")
        argv = tuple(os.fspath(arg) for arg in server or ())
        server = ServerTarget(command=argv, url=upstream, transport=transport)
    report = await verify(tape, server, options)
    return list(report.verdicts)


def _take_value(option: str, item: str, rest: list[str]) -> str | None:
    """The value of ``option`` given as ``option VALUE`` or ``option=VALUE`` (else None)."""
    if item == option:
        if not rest:
            raise UsageError(f"verify: {option} needs a value")
        return rest.pop(0)
    if item.startswith(option + "="):
        return item.partition("=")[2]
    return None


def _parse(args: argparse.Namespace) -> list[str] | None:
    """Split ``rest`` (TAPE, options, ``--`` COMMAND) into ``args``; returns the command.

    argparse cannot take a command after a positional and options, so the part after
    ``--`` is cut off here and the options before it are read by hand."""
    rest = list(args.rest)
    command: list[str] | None = None
    if "--" in rest:
        cut = rest.index("--")
        rest, command = rest[:cut], rest[cut + 1 :]
    tapes: list[str] = []
    while rest:
        item = rest.pop(0)
        if item == "--update":
            args.update = True
        elif not _option(args, item, rest):
            if item.startswith("-"):
                raise UsageError(f"verify: unknown option {item}")
            tapes.append(item)
    _check_usage(args, tapes, command)
    args.tape = tapes[0]
    return command


def _option(args: argparse.Namespace, item: str, rest: list[str]) -> bool:
    """Read one option that takes a value into ``args``; ``False`` when ``item`` is none."""
    if (value := _take_value("--ignore", item, rest)) is not None:
        args.ignore.append(value)
    elif (value := _take_value("--ignore-key", item, rest)) is not None:
        args.ignore_key.append(value)
    elif (value := _take_value("--upstream", item, rest)) is not None:
        args.upstream = value
    elif (value := _take_value("--header", item, rest)) is not None:
        args.headers.append(value)
    elif (value := _take_value("--transport", item, rest)) is not None:
        args.transport = "streamable-http" if value == "http" else value
    elif (value := _take_value("--timeout", item, rest)) is not None:
        try:
            args.timeout = float(value)
        except ValueError:
            raise UsageError(f"verify: --timeout needs seconds, not {value!r}") from None
    elif (value := _take_value("--format", item, rest)) is not None:
        if value not in ("text", "json"):
            raise UsageError(f"verify: --format is text or json, not {value!r}")
        args.format = value
    else:
        return False
    return True


def _check_usage(args: argparse.Namespace, tapes: list[str], command: list[str] | None) -> None:
    if len(tapes) != 1:
        raise UsageError(_USAGE)
    if command is not None and args.upstream is not None:
        raise UsageError("verify: give either --upstream URL or -- COMMAND, not both")
    if command is None and args.upstream is None:
        raise UsageError(
            "verify needs the server: -- COMMAND (e.g. -- node server.js) or --upstream URL"
        )
    if command is not None and not command:
        raise UsageError(_USAGE)
    if not 0 < args.timeout < float("inf"):  # NaN fails this too
        raise UsageError("verify: --timeout must be a finite number of seconds above 0")
    if args.upstream is not None:
        check_http_url(args.upstream, "--upstream")
    elif args.headers:
        raise UsageError("verify: --header is for --upstream URL (a command reads its own)")
    if args.transport is not None:
        _check_transport(args.transport, url=args.upstream is not None)


def _check_transport(name: str, *, url: bool) -> None:
    from cassette.registry import get_connector

    get_connector(name)  # an unknown plugin, or one that cannot reach a server: usage
    if url == (name == "stdio"):
        needs = "a server command (-- COMMAND)" if name == "stdio" else "--upstream URL"
        raise UsageError(f"verify: --transport {name} needs {needs}")


def main(args: argparse.Namespace) -> int:
    import anyio

    command = _parse(args)
    cassette = Cassette.load(args.tape)
    ignores = project_ignores().merged(args.ignore, args.ignore_key)
    expanded = project_headers(args.headers) if args.upstream is not None else None
    headers = expanded.headers if expanded is not None else None
    server = ServerTarget(
        command=tuple(command or ()), url=args.upstream, transport=args.transport, headers=headers
    )
    if args.upstream is not None:
        _missing_headers(cassette, headers or {})
    sys.stderr.write("cassette: warning: verify re-runs the recorded calls for real\n")
    try:
        report = anyio.run(
            lambda: verify(
                cassette,
                server,
                VerifyOptions(
                    ignores=ignores,
                    time_limit=args.timeout,
                    update=args.update,
                    progress=terminal_progress(),
                ),
            )
        )
    except Exception as raised:
        exc = _unwrapped(raised)
        if not _server_failure(exc):
            raise exc from None
        closed = isinstance(exc, closed_errors()) or not str(exc)  # whichever side saw it
        line = "the server closed the connection" if closed else str(exc)
        sys.stderr.write(f"cassette: error: {line}\n")
        return 2
    emit(report.json() if args.format == "json" else report.text())
    return 0 if report.ok else 1


def _missing_headers(cassette: Cassette, headers: Mapping[str, str]) -> None:
    """Say which headers the recording was made with that this run does not send (their
    names are in the cassette's header; their values never were)."""
    recorded = cassette.header.target.get("headers")
    if not isinstance(recorded, list):
        return
    sent = {name.lower() for name in headers}
    missing = [str(n) for n in recorded if str(n).lower() not in sent]
    if missing:
        names = ", ".join(missing)
        where = cassette.source or "the cassette"
        sys.stderr.write(
            f"cassette: warning: {where} was recorded sending the header(s) {names}, which "
            f"this run does not send (give --header '{missing[0]}: ...' with its value from "
            "the environment, ${VAR}, or [tool.cassette] headers)\n"
        )


def _server_failure(exc: BaseException) -> bool:
    """Whether ``exc`` says the server could not be run, reached or kept talking (exit
    2), rather than something about the cassette (exit 3) or a bug."""
    import anyio

    if isinstance(exc, TransportError):
        return True
    if isinstance(exc, CassetteError):
        return False
    return isinstance(exc, OSError | anyio.EndOfStream)


def _unwrapped(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc
