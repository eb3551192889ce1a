"""``cassette verify TAPE -- COMMAND``: is the recording still what the server says?

Re-fires every request the client made in the recording at a live server, after the
handshake the recording shows (its own ``initialize`` and ``notifications/initialized``;
legacy era only so far), and compares each live answer with the recorded one after
normalizing volatile values on both sides (``_meta``, timestamps, UUIDs; see
``cassette.tools.diff.normalize``). Each request is classified:

* ``MATCH``: the same answer;
* ``CHANGED``: both results (or both errors with one code) differ, at the listed paths;
* ``ERROR-SHAPE-CHANGED``: a result became an error, an error a result, or the code changed;
* ``MISSING``: the server no longer knows the method (-32601), or did not answer in time.

The calls execute for real: a tool that writes, sends or deletes does so again.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import attrs

from cassette.errors import CassetteError, TransportError, UsageError
from cassette.jsondiff import MISSING, differences
from cassette.matching import show_value
from cassette.storage import Cassette
from cassette.tools._common import emit, exchanges
from cassette.tools.diff import label, normalize

__all__ = ["Verdict", "main", "verify_cassette"]

_HANDSHAKE = frozenset({"initialize"})


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


async def verify_cassette(
    tape: Cassette | str,
    command: list[str],
    *,
    ignore: tuple[str, ...] | list[str] = (),
    time_limit: float = 30.0,
) -> list[Verdict]:
    """Re-fire the recorded client requests at ``command`` and classify every answer."""
    import anyio

    from cassette.registry import load_transport
    from cassette.session import ClientConnection
    from cassette.transport import Target

    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    if cassette.era != "legacy":
        raise UsageError("verify speaks the legacy (initialize) era only so far")
    pairs = [p for p in exchanges(cassette.events)[0] if p.request.dir == "c2s"]
    skip = tuple(ignore)
    verdicts: list[Verdict] = []
    async with load_transport("stdio")().connect(Target(command=tuple(command))) as upstream:
        conn = ClientConnection(upstream)
        for pair in pairs:
            message = pair.request.message
            method = str(message.get("method"))
            live: dict[str, Any] | None = None
            with anyio.move_on_after(time_limit):
                live = await conn.request(method, message.get("params"))
            if method in _HANDSHAKE:
                if live is None or "error" in live:
                    raise TransportError(f"the live server refused {method}: {live}")
                await conn.notify("notifications/initialized")
                continue
            if pair.response is None:
                continue  # nothing recorded to compare with (lint reports it)
            status, paths, detail = classify(pair.response.message, live, skip)
            verdicts.append(Verdict(pair.request.seq + 1, label(message), status, paths, detail))
            if sys.stderr.isatty():  # a progress line for people, not for logs
                sys.stderr.write(f"\rverify: {len(verdicts)}/{len(pairs)} requests")
                sys.stderr.flush()
    if sys.stderr.isatty():
        sys.stderr.write("\n")
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


def main(args: argparse.Namespace) -> int:
    import anyio

    rest = list(args.rest)
    if "--" not in rest:
        raise UsageError("verify needs the server command after --, e.g. -- node server.js")
    cut = rest.index("--")
    before, command = rest[:cut], rest[cut + 1 :]
    tapes: list[str] = []
    ignore = list(args.ignore)
    while before:
        item = before.pop(0)
        if item == "--ignore" and before:
            ignore.append(before.pop(0))
        elif item.startswith("--ignore="):
            ignore.append(item.partition("=")[2])
        elif item == "--format" and before and before[0] in ("text", "json"):
            args.format = before.pop(0)
        elif item.startswith("-"):
            raise UsageError(f"verify: unknown option {item}")
        else:
            tapes.append(item)
    if len(tapes) != 1 or not command:
        raise UsageError("usage: cassette verify TAPE [--ignore POINTER]... -- COMMAND [ARG...]")
    args.tape, args.ignore = tapes[0], ignore
    cassette = Cassette.load(args.tape)
    sys.stderr.write("cassette: warning: verify re-runs the recorded calls for real\n")
    try:
        verdicts = anyio.run(lambda: verify_cassette(cassette, command, ignore=args.ignore))
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
