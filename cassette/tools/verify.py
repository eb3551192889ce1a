"""``cassette verify TAPE -- COMMAND`` / ``--upstream URL``: is the recording still true?

Re-fires every request the client made in the recording at a live server (a command over
stdio, or a streamable-HTTP endpoint), speaking the era the cassette's header names:

* **legacy**: the recorded ``initialize`` (the first; its answer must be a result) and
  ``notifications/initialized`` open the session, then every other request follows;
* **modern** (2026-07-28): no handshake; each request already carries its protocol
  version and capabilities in ``params._meta``, so it is sent as recorded (over HTTP the
  transport adds the ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers the
  body implies).

Each live answer is compared with the recorded one after normalizing volatile values on
both sides (``_meta``, timestamps, UUIDs; see ``cassette.tools.diff.normalize``) and
classified:

* ``MATCH``: the same answer;
* ``CHANGED``: both results (or both errors with one code) differ, at the listed paths;
* ``ERROR-SHAPE-CHANGED``: a result became an error, an error a result, or the code changed;
* ``MISSING``: the server no longer knows the method (-32601), or did not answer in time.

A request the recording shows unanswered (a cancelled call, a ``subscriptions/listen``
stream) is not sent: there is nothing to compare its answer with, and its effects would
be real. The calls that are sent execute for real: a tool that writes, sends or deletes
does so again.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from cassette.core.jsondiff import MISSING, differences
from cassette.core.matching import show_value
from cassette.errors import CassetteError, TransportError, UsageError
from cassette.store.storage import Cassette
from cassette.tools._common import Caller, Exchange, emit, exchanges
from cassette.tools.diff import label, normalize

__all__ = ["Verdict", "main", "progress_bar", "verify_cassette"]

_HANDSHAKE = frozenset({"initialize"})
_USAGE = (
    "usage: cassette verify TAPE [--ignore POINTER]... [--timeout S] "
    "(--upstream URL | -- COMMAND [ARG...])"
)

#: ``progress(done, total)``, called after each compared request
Progress = Callable[[int, int], None]


@attrs.frozen
class Verdict:
    line: int
    request: str
    status: str  # MATCH, CHANGED, ERROR-SHAPE-CHANGED, MISSING
    paths: tuple[tuple[str, Any, Any], ...] = ()
    detail: str = ""

    def as_data(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "request": self.request,
            "status": self.status,
            "paths": [
                {
                    "path": p,
                    "recorded": None if a is MISSING else a,
                    "live": None if b is MISSING else b,
                }
                for p, a, b in self.paths
            ],
            "detail": self.detail,
        }


def _ignored(path: str, ignore: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in ignore)


def classify(
    recorded: dict[str, Any], live: dict[str, Any] | None, ignore: tuple[str, ...] = ()
) -> tuple[str, tuple[tuple[str, Any, Any], ...], str]:
    """Compare one recorded answer with the live one (``None``: no live answer)."""
    if live is None:
        return "MISSING", (), "no answer from the live server"
    live_error, rec_error = live.get("error"), recorded.get("error")
    if isinstance(live_error, dict) and live_error.get("code") == -32601 and rec_error is None:
        return "MISSING", (), f"live server: {live_error.get('message', 'method not found')}"
    if (rec_error is None) != (live_error is None):
        was = "error" if rec_error is not None else "result"
        now = "error" if live_error is not None else "result"
        return "ERROR-SHAPE-CHANGED", (), f"recorded {was}, live {now}"
    if rec_error is not None:
        rec_code = rec_error.get("code") if isinstance(rec_error, dict) else None
        live_code = live_error.get("code") if isinstance(live_error, dict) else None
        if rec_code != live_code:
            return "ERROR-SHAPE-CHANGED", (), f"error code {rec_code} became {live_code}"
    key = "error" if rec_error is not None else "result"
    paths = tuple(
        (f"/{key}{d.path}", d.recorded, d.received)
        for d in differences(normalize(recorded.get(key)), normalize(live.get(key)))
        if not _ignored(f"/{key}{d.path}", ignore)
    )
    return ("CHANGED" if paths else "MATCH"), paths, ""


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


def _connection(command: list[str] | None, upstream: str | None) -> Any:
    from cassette.registry import get_connector
    from cassette.transport import Target

    if (command is None) == (upstream is None):
        raise UsageError("verify needs either a server command (-- COMMAND) or --upstream URL")
    if upstream is not None:
        if not upstream.startswith(("http://", "https://")):
            raise UsageError(f"--upstream needs an http:// or https:// URL, not {upstream!r}")
        return get_connector("streamable-http").connect(Target(url=upstream))
    return get_connector("stdio").connect(Target(command=tuple(command or ())))


def _plan(cassette: Cassette) -> tuple[list[Exchange], Exchange | None, int]:
    """The client's requests in recorded order, the one handshake to redo (legacy: the
    first ``initialize``), and how many answers will be compared.

    Order matters: a dual-era client's ``server/discover`` probe, recorded before the
    handshake, is sent before it too, so a legacy server answers it as it did then."""
    pairs = [p for p in exchanges(cassette.events)[0] if p.request.dir == "c2s"]
    handshake = None
    if cassette.era != "modern":
        handshake = next((p for p in pairs if p.method in _HANDSHAKE), None)
    compared = sum(p.response is not None and p.method not in _HANDSHAKE for p in pairs)
    return pairs, handshake, compared


async def _handshake(conn: Caller, pair: Exchange, time_limit: float) -> None:
    import anyio

    live: dict[str, Any] | None = None
    with anyio.move_on_after(time_limit) as scope:
        live = await conn.request("initialize", pair.request.message.get("params"))
        if "error" not in live:
            await conn.notify("notifications/initialized")
    if scope.cancelled_caught:
        raise TransportError(f"the live server did not finish the handshake in {time_limit:g}s")
    if live is None or "error" in live:
        raise TransportError(f"the live server refused initialize: {json.dumps(live)}")


async def verify_cassette(
    tape: Cassette | str | os.PathLike[str],
    command: Sequence[str | os.PathLike[str]] | None = None,
    *,
    upstream: str | None = None,
    ignore: tuple[str, ...] | list[str] = (),
    time_limit: float = 30.0,
    progress: Progress | None = None,
) -> list[Verdict]:
    """Re-fire the recorded client requests at ``command`` (stdio) or ``upstream`` (a
    streamable-HTTP URL) in the recorded era and classify every answer."""
    import anyio

    from cassette.runtime.harness import ClientConnection

    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    argv = None if command is None else [os.fspath(arg) for arg in command]
    pairs, handshake, total = _plan(cassette)
    skip = tuple(ignore)
    verdicts: list[Verdict] = []
    async with _connection(argv, upstream) as stream:
        conn = Caller(ClientConnection(stream))
        for pair in pairs:
            if pair is handshake:
                await _handshake(conn, pair, time_limit)
                continue
            if pair.response is None or pair.method in _HANDSHAKE:
                continue  # nothing to compare with; later handshakes are other sessions'
            message = pair.request.message
            live: dict[str, Any] | None = None
            with anyio.move_on_after(time_limit):
                live = await conn.request(pair.method, message.get("params"))
            status, paths, detail = classify(pair.response.message, live, skip)
            verdicts.append(Verdict(pair.request.seq + 1, label(message), status, paths, detail))
            if progress is not None:
                progress(len(verdicts), total)
    return verdicts


def render(source: str, verdicts: list[Verdict], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(
            {"cassette": source, "requests": [v.as_data() for v in verdicts]}, indent=2
        )
    lines = []
    for v in verdicts:
        lines.append(f"{v.status:<19} {v.request}  ({source}:{v.line})")
        if v.detail:
            lines.append(f"    {v.detail}")
        for path, old, new in v.paths:
            lines.append(f"    {path}: {show_value(old)} -> {show_value(new)}")
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.status] = counts.get(v.status, 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no requests"
    lines.append(f"{source}: {summary}")
    return "\n".join(lines)


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
        if (value := _take_value("--ignore", item, rest)) is not None:
            args.ignore.append(value)
        elif (value := _take_value("--upstream", item, rest)) is not None:
            args.upstream = value
        elif (value := _take_value("--timeout", item, rest)) is not None:
            try:
                args.timeout = float(value)
            except ValueError:
                raise UsageError(f"verify: --timeout needs seconds, not {value!r}") from None
        elif (value := _take_value("--format", item, rest)) is not None:
            if value not in ("text", "json"):
                raise UsageError(f"verify: --format is text or json, not {value!r}")
            args.format = value
        elif item.startswith("-"):
            raise UsageError(f"verify: unknown option {item}")
        else:
            tapes.append(item)
    _check_usage(args, tapes, command)
    args.tape = tapes[0]
    return command


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
    if args.timeout <= 0:
        raise UsageError("verify: --timeout must be more than 0 seconds")
    if args.upstream is not None and not args.upstream.startswith(("http://", "https://")):
        raise UsageError(f"--upstream needs an http:// or https:// URL, not {args.upstream!r}")


def main(args: argparse.Namespace) -> int:
    import anyio

    command = _parse(args)
    cassette = Cassette.load(args.tape)
    sys.stderr.write("cassette: warning: verify re-runs the recorded calls for real\n")
    try:
        verdicts = anyio.run(
            lambda: verify_cassette(
                cassette,
                command,
                upstream=args.upstream,
                ignore=args.ignore,
                time_limit=args.timeout,
                progress=terminal_progress(),
            )
        )
    except Exception as raised:
        exc: BaseException = raised
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        if isinstance(exc, UsageError) or not isinstance(
            exc, TransportError | CassetteError | OSError | anyio.EndOfStream
        ):
            raise exc from None
        sys.stderr.write(f"cassette: error: {exc or 'the server closed the connection'}\n")
        return 2
    emit(render(args.tape, verdicts, args.format))
    return 0 if all(v.status == "MATCH" for v in verdicts) else 1
