"""``cassette verify TAPE... [-- COMMAND | --upstream URL]``, ``cassette verify --scenarios
FILE``: are the recordings still true?

The command line over ``cassette.client.drift`` (which says how requests are re-fired,
answers compared and the server's own questions answered): options read once, the
project's ignores from ``[tool.cassette.verify]`` of pyproject.toml added to the command
line's, and the report printed on stdout. ``--update`` writes the drift into TAPE.
Without a server given, each cassette is verified against the server its header recorded;
with ``--scenarios``, each scenario's cassette against the file's ``[target]``. Several
cassettes end with one summary line and one exit code.

The calls that are sent execute for real: a tool that writes, sends or deletes does so
again, and a warning on stderr says so.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from cassette.client.compare import classify
from cassette.client.connection import closed_errors
from cassette.client.drift import Progress, VerifyOptions, verify
from cassette.client.launch import recorded_server, with_hint
from cassette.client.report import COLOURS, Verdict, VerifyReport, render
from cassette.client.snapshots import project_ignores
from cassette.client.target import ServerTarget
from cassette.core.wire.urls import check_http_url
from cassette.core.words.colour import Rule
from cassette.errors import CassetteError, TransportError, UsageError
from cassette.store.gate import RedactOptions, policy
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
    "verify needs a cassette: cassette verify TAPE... [-- COMMAND [ARG...] | --upstream URL], "
    "or cassette verify --scenarios FILE"
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
) -> list[Verdict]:
    """Re-fire the recorded client requests at ``command`` (a stdio server's command
    line, or a ``ServerTarget``: ``ServerTarget(url=URL)`` for streamable HTTP, with
    ``transport="sse"`` for legacy SSE) and classify every answer, as ``options`` say; the
    verdicts (``cassette.client.drift.verify`` gives the whole report)."""
    server = command
    if not isinstance(server, ServerTarget):
        if server is None:
            raise UsageError("verify needs either a server command (-- COMMAND) or --upstream URL")
        server = ServerTarget(command=tuple(os.fspath(arg) for arg in server))
    report = await verify(tape, server, options)
    return list(report.verdicts)


@attrs.frozen
class _Job:
    """One cassette to verify, and the server to verify it against (``None``: the one its
    header recorded)."""

    tape: str
    server: ServerTarget | None


def _jobs(args: argparse.Namespace) -> tuple[list[_Job], str | None]:
    """What to verify (each cassette and its server), and the label of the summary line
    when there is more than one: the scenarios file, or ``None``."""
    command = [arg for arg in args.server]
    if args.transport == "http":
        args.transport = "streamable-http"
    if not 0 < args.timeout < float("inf"):  # NaN fails this too
        raise UsageError("verify: --timeout must be a finite number of seconds above 0")
    if args.scenarios is not None:
        return _scenario_jobs(args, command), args.scenarios
    if args.scenario:
        raise UsageError("--scenario NAME picks from a scenarios file: give --scenarios FILE")
    if not args.tapes:
        raise UsageError(_USAGE)
    if command and args.upstream is not None:
        raise UsageError("verify: give either --upstream URL or -- COMMAND, not both")
    if args.upstream is not None:
        check_http_url(args.upstream, "--upstream")
    elif args.headers:
        raise UsageError("verify: --header is for --upstream URL (a command reads its own)")
    if args.transport is not None and (command or args.upstream is not None):
        _check_transport(args.transport, url=args.upstream is not None)
    server = None
    if command or args.upstream is not None:
        expanded = project_headers(args.headers) if args.upstream is not None else None
        server = ServerTarget(
            command=tuple(command),
            url=args.upstream,
            transport=args.transport,
            headers=expanded.headers if expanded is not None else None,
        )
    return [_Job(tape, server) for tape in args.tapes], None


def _scenario_jobs(args: argparse.Namespace, command: list[str]) -> list[_Job]:
    """``--scenarios FILE``: each chosen scenario's cassette, against the file's target."""
    from cassette.client.scenarios import load_scenarios

    if args.tapes or command or args.upstream is not None or args.transport is not None:
        raise UsageError(
            "verify --scenarios takes the cassettes and the server from the file (its "
            "[target]): no TAPE, -- COMMAND, --upstream or --transport with it"
        )
    file = load_scenarios(args.scenarios)
    chosen = [file.scenario(name) for name in args.scenario] or list(file.scenarios)
    server = file.server()
    return [_Job(str(file.cassette_path(s.name)), server) for s in chosen]


def _check_transport(name: str, *, url: bool) -> None:
    from cassette.registry import get_connector

    get_connector(name)  # an unknown plugin, or one that cannot reach a server: usage
    if url == (name == "stdio"):
        needs = "a server command (-- COMMAND)" if name == "stdio" else "--upstream URL"
        raise UsageError(f"verify: --transport {name} needs {needs}")


def main(args: argparse.Namespace) -> int:
    import anyio

    jobs, label = _jobs(args)
    ignores = project_ignores().merged(args.ignore, args.ignore_key)
    redact = RedactOptions.from_args(args)
    policy(redact)  # every rule checked before the server is started
    options = VerifyOptions(
        ignores=ignores, time_limit=args.timeout, update=args.update, progress=None, redact=redact
    )
    loaded = [Cassette.load(job.tape) for job in jobs]  # every one readable before a call
    servers = [
        job.server or recorded_server(cassette.header, job.tape, args.transport, job.tape)
        for job, cassette in zip(jobs, loaded, strict=True)
    ]
    for each_tape, each_server in zip(loaded, servers, strict=True):
        if each_server.is_url:
            _missing_headers(each_tape, each_server.headers or {})
    sys.stderr.write("cassette: warning: verify re-runs the recorded calls for real\n")
    reports: list[VerifyReport] = []
    job: _Job | None = None
    server: ServerTarget | None = None
    try:
        for each_job, cassette, server in zip(jobs, loaded, servers, strict=True):
            job = each_job  # the one a server failure names
            each = attrs.evolve(options, progress=terminal_progress())
            reports.append(anyio.run(verify, cassette, server, each))
    except Exception as raised:
        exc = _unwrapped(raised)
        if not _server_failure(exc):
            raise exc from None
        # a stdio server's end reads the same whichever side saw it first; a URL that
        # cannot be reached says why
        url = server is not None and server.is_url
        closed = (isinstance(exc, closed_errors()) and not url) or not str(exc)
        line = "the server closed the connection" if closed else str(exc)
        from_header = job is not None and job.server is None
        line = with_hint(line, job.tape if from_header and job is not None else None)
        sys.stderr.write(f"cassette: error: {line}\n")
        return 2
    ok = all(report.ok for report in reports)
    if args.format == "json":
        if len(reports) == 1 and label is None:
            emit(reports[0].json())
        else:
            data = {"reports": [r.as_data() for r in reports], "ok": ok}
            emit(json.dumps(data, indent=2))
        return 0 if ok else 1
    lines = [report.text() for report in reports]
    if len(reports) > 1 or label is not None:
        lines.append(_summary(reports, label))
    emit("\n".join(lines), (*COLOURS, *_SUMMARY_COLOURS), getattr(args, "color", "auto"))
    return 0 if ok else 1


#: the closing line of a run over several cassettes, painted on a terminal
_SUMMARY_COLOURS = (
    Rule.of(r" verified: (\d+ as recorded)", "green"),
    Rule.of(r" verified: .*?, ([1-9]\d* drifted)", "red"),
)


def _summary(reports: list[VerifyReport], label: str | None) -> str:
    """The one line that ends a run over several cassettes."""
    drifted = sum(1 for report in reports if not report.ok)
    updated = sum(1 for report in reports if report.updated)
    what = f"{label}: {len(reports)} scenario(s)" if label else f"{len(reports)} cassette(s)"
    tail = f", {updated} updated" if updated else ""
    return f"{what} verified: {len(reports) - drifted} as recorded, {drifted} drifted{tail}"


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
