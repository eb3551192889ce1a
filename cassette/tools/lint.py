"""``cassette lint``: a cassette against its own header and the format.

Every rule reads the events once and reports ``Finding`` values with the file line they
point at (an event's ``seq + 1``; the header is line 1). The rules:

* era: a modern cassette holds no ``initialize`` exchange, no HTTP sessions and no
  standalone GET stream; a legacy one whose requests succeeded began with ``initialize``;
* transport: a stdio cassette holds no HTTP facts; an HTTP one no process stderr or exit;
* pairing: every request has an answer, no id is reused while in flight, no answer
  answers nothing; a request the client cancelled needs no answer (information only);
* redaction: the header's ``redaction`` field is well formed (what a replay refuses; the
  reader refuses a file whose header is not, so this finding is for a ``Cassette`` built in
  memory);
* secrets: nothing the recorder's redaction rules would have removed is left (the one
  detector of ``cassette.tools._secrets``);
* success: some request got a successful answer. A session in which none did is a failed
  start (a typo in the command, a missing token), not a cassette: replaying it would only
  miss. The recorder keeps such a session as ``<cassette>.failed``; lint says so of one
  found under a cassette's name.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from cassette.core.eras.variants import group_era, split
from cassette.core.redaction.redactor import check_header
from cassette.core.wire.jsonrpc import Kind, pretty
from cassette.core.wire.meta import SESSION, STREAM
from cassette.core.wire.model import (
    Era,
    Event,
    ExitEvent,
    HttpEvent,
    MessageEvent,
    RawEvent,
    StderrEvent,
)
from cassette.core.wire.pairing import cancellations
from cassette.store.storage import Cassette
from cassette.tools._common import Finding, emit, exchanges, kind_of
from cassette.tools._secrets import secret_findings

__all__ = ["lint_cassette", "main", "secret_findings"]

_HTTP_TRANSPORTS = frozenset({"streamable-http", "http", "sse"})


def lint_cassette(tape: Cassette | str | os.PathLike[str]) -> list[Finding]:
    """Every finding in a cassette (a path or a loaded ``Cassette``), in line order."""
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    findings = [
        *_success_findings(cassette),
        *_era_findings(cassette),
        *_transport_findings(cassette),
        *_pairing_findings(cassette),
        *_redaction_findings(cassette),
        *secret_findings(cassette),
        *_cut_off_findings(cassette),
    ]
    return sorted(findings, key=lambda f: (f.line, f.code))


#: How the reader words a last line it dropped (``cassette.core.tape.codec.decode_lines``).
_CUT_OFF = re.compile(r":(\d+): dropped a last line cut off mid-write")


def _cut_off_findings(tape: Cassette) -> list[Finding]:
    """A last line without its newline that does not parse: what a kill (or a full disk)
    leaves while the recorder writes. The reader drops it quietly to replay the rest; a
    person linting the file should hear of it, and how much of the session survived."""
    for warning in tape.warnings:
        found = _CUT_OFF.search(warning)
        if found is not None:
            frames = len(tape.events)
            return [
                Finding(
                    int(found[1]),
                    "cut-off",
                    "the last line is cut off mid-write, as a kill while the recorder was "
                    f"writing leaves it: it is dropped, and the {frames} frame(s) before it "
                    "are readable",
                    "warning",
                )
            ]
    return []


def _success_findings(tape: Cassette) -> list[Finding]:
    pairs, _ = exchanges(tape.events)
    for pair in pairs:
        answer = pair.response
        if (
            pair.request.dir != "c2s"
            or answer is None
            or kind_of(answer.message) is not Kind.RESPONSE
        ):
            continue
        return []
    return [
        Finding(
            1,
            "no-success",
            "no request got a successful answer: a failed recording (the server did not "
            "start, or refused every request), not a cassette; record it again",
        )
    ]


def _line(event: Event) -> int:
    return event.seq + 1


def _session(event: MessageEvent) -> Any:
    meta = event.meta
    return meta.get(SESSION) if isinstance(meta, Mapping) else None


def _groups(tape: Cassette) -> list[tuple[Era | None, Sequence[Event]]]:
    """The main recording (the header's era) and each variant session (the era its
    handshake shows): the era and pairing rules hold within each, not across them."""
    main, variants = split(tape.events)
    return [(tape.header.era, main), *((group_era(v), v) for v in variants.values())]


def _era_findings(tape: Cassette) -> list[Finding]:
    return [f for era, events in _groups(tape) for f in _group_era_findings(era, events)]


def _group_era_findings(era: Era | None, events: Sequence[Event]) -> list[Finding]:
    out: list[Finding] = []
    first_request: MessageEvent | None = None
    for event in events:
        if isinstance(event, MessageEvent) and event.dir == "c2s":
            if kind_of(event.message) is Kind.REQUEST and first_request is None:
                first_request = event
            if era == "modern" and event.message.get("method") == "initialize":
                out.append(
                    Finding(
                        _line(event),
                        "era",
                        "initialize request in a modern-era cassette (modern sessions "
                        "have no handshake)",
                    )
                )
            if era == "modern" and _session(event) is not None:
                out.append(
                    Finding(
                        _line(event),
                        "era",
                        f"message in HTTP session {_session(event)} in a modern-era "
                        "cassette (modern servers keep no sessions)",
                    )
                )
        if era == "modern" and isinstance(event, HttpEvent) and event.method == "GET":
            out.append(
                Finding(_line(event), "era", "standalone GET stream in a modern-era cassette")
            )
    if era == "legacy" and first_request is not None:
        method = first_request.message.get("method")
        if method not in ("initialize", "server/discover", "ping"):
            out.append(
                Finding(
                    _line(first_request),
                    "era",
                    f"legacy-era cassette whose first request is {method!r}, not initialize",
                    "warning",
                )
            )
    return out


def _http_meta(event: Event) -> bool:
    if not isinstance(event, MessageEvent | RawEvent) or not isinstance(event.meta, Mapping):
        return False
    return STREAM in event.meta or SESSION in event.meta


def _transport_findings(tape: Cassette) -> list[Finding]:
    transport = tape.header.transport
    out: list[Finding] = []
    for event in tape.events:
        if transport == "stdio":
            if isinstance(event, HttpEvent):
                out.append(
                    Finding(
                        _line(event),
                        "transport",
                        f"HTTP {event.method} event in a stdio cassette",
                    )
                )
            elif _http_meta(event):
                out.append(
                    Finding(
                        _line(event),
                        "transport",
                        "HTTP stream or session metadata in a stdio cassette",
                    )
                )
        elif transport in _HTTP_TRANSPORTS and isinstance(event, StderrEvent | ExitEvent):
            out.append(
                Finding(
                    _line(event),
                    "transport",
                    f"process {event.kind} event in an HTTP ({transport}) cassette",
                )
            )
    return out


def _describe(event: MessageEvent) -> str:
    message = event.message
    text = f"{message.get('method')} (id {json.dumps(message.get('id'))})"
    return text


def _cancelled(events: Any) -> set[tuple[Any, str, Any]]:
    """(session, id type, id) of every request the client cancelled."""
    return {
        (_session(event), type(request_id).__name__, request_id)
        for event, request_id in cancellations(events)
    }


def _pairing_findings(tape: Cassette) -> list[Finding]:
    return [f for _, events in _groups(tape) for f in _group_pairing_findings(events)]


def _group_pairing_findings(events: Sequence[Event]) -> list[Finding]:
    pairs, problems = exchanges(list(events))
    cancelled = _cancelled(events)
    out: list[Finding] = []
    for pair in pairs:
        if pair.response is None:
            out.append(_unanswered(pair.request, cancelled))
    for problem, event in problems:
        if problem == "duplicate":
            out.append(
                Finding(
                    _line(event),
                    "duplicate-id",
                    f"request {_describe(event)} reuses an id still in flight",
                )
            )
        else:
            out.append(
                Finding(
                    _line(event),
                    "stray-answer",
                    f"answer with id {json.dumps(event.message.get('id'))} to no pending request",
                    "warning",
                )
            )
    return out


def _unanswered(request: MessageEvent, cancelled: set[tuple[Any, str, Any]]) -> Finding:
    """A request with no answer: an error, unless the client cancelled it (then it needed
    none, and a replay waits for the live client to cancel it too)."""
    msg_id = request.message.get("id")
    if request.dir == "c2s" and (_session(request), type(msg_id).__name__, msg_id) in cancelled:
        return Finding(
            _line(request),
            "cancelled",
            f"request {_describe(request)} was cancelled by the client: no answer expected",
            "info",
        )
    who = "client" if request.dir == "s2c" else "server"
    what = "server request" if request.dir == "s2c" else "request"
    return Finding(_line(request), "unanswered", f"{what} {_describe(request)} has no {who} answer")


def _redaction_findings(tape: Cassette) -> list[Finding]:
    """A header's redaction rules are read, never run: what a replay refuses, lint does."""
    info = tape.header.redaction
    if info is None:
        return []
    return [Finding(1, "redaction", problem) for problem in check_header(info)]


def render(source: str, findings: list[Finding], fmt: str) -> str:
    if fmt == "json":
        data = {
            "cassette": source,
            "ok": all(f.severity == "info" for f in findings),
            "findings": [f.as_data() for f in findings],
        }
        return pretty(data)
    if not findings:
        return f"{source}: header and frames agree"
    lines = [f"{source}:{f.line}: {f.severity}: [{f.code}] {f.message}" for f in findings]
    errors = sum(f.severity == "error" for f in findings)
    warnings = sum(f.severity == "warning" for f in findings)
    infos = len(findings) - errors - warnings
    counted = f"{errors} errors, {warnings} warnings" + (f", {infos} information" if infos else "")
    lines.append(f"{source}: {len(findings)} finding(s) ({counted})")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    tape = Cassette.load(args.tape)
    findings = lint_cassette(tape)
    emit(render(args.tape, findings, args.format))
    return 1 if any(f.severity != "info" for f in findings) else 0
