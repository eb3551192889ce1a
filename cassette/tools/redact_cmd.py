"""``cassette redact``: apply the recorder's redaction rules to a cassette, or scan for secrets.

Rewriting keeps the header's salt (and its user rules) when the cassette has one, so a
secret already redacted by the recorder and the same secret found now get the same
placeholder, and replays that redact live requests with the header's rules still match.
A cassette recorded without redaction gets a fresh salt, written to ``header.redaction``.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

import attrs

from cassette.core.model import Event, MessageEvent, RawEvent, StderrEvent
from cassette.core.redaction import Redactor
from cassette.store.storage import Cassette
from cassette.tools._common import Finding, emit
from cassette.tools.lint import secret_findings

__all__ = ["main", "redact_cassette", "scan_cassette"]


def scan_cassette(tape: Cassette | str | os.PathLike[str]) -> list[Finding]:
    """Secrets the redaction rules would remove, one finding per place (``file:line``)."""
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    return secret_findings(cassette)


def _redactor(tape: Cassette) -> Redactor:
    info = tape.header.redaction
    if info and info.get("salt"):
        return Redactor.from_header(info)
    return Redactor()


def _target(redactor: Redactor, target: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in dict(target).items():
        if key == "command" and isinstance(value, list):
            out[key] = redactor.argv([str(v) for v in value])
        else:
            out[key] = redactor.value({key: value})[key]
    return out


def _event(redactor: Redactor, event: Event) -> Event:
    if isinstance(event, MessageEvent):
        return attrs.evolve(event, message=redactor.value(event.message))
    if isinstance(event, RawEvent | StderrEvent) and event.text is not None:
        return attrs.evolve(event, text=redactor.text(event.text))
    return event


def redact_cassette(
    tape: Cassette | str | os.PathLike[str], redactor: Redactor | None = None
) -> tuple[Cassette, int]:
    """A redacted copy of the cassette and how many events changed."""
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    rules = redactor or _redactor(cassette)
    events = tuple(_event(rules, e) for e in cassette.events)
    changed = sum(1 for old, new in zip(cassette.events, events, strict=True) if old != new)
    target = _target(rules, cassette.header.target)
    changed += target != dict(cassette.header.target)
    header = attrs.evolve(cassette.header, target=target, redaction=rules.describe())
    return attrs.evolve(cassette, header=header, events=events), changed


def main(args: argparse.Namespace) -> int:
    if args.scan:
        if args.overwrite:
            from cassette.errors import UsageError

            raise UsageError("--overwrite goes with -o OUT, not --scan")
        findings = scan_cassette(args.tape)
        if args.format == "json":
            data = {"cassette": args.tape, "secrets": [f.as_data() for f in findings]}
            emit(json.dumps(data, indent=2))
        elif findings:
            emit("\n".join(f"{args.tape}:{f.line}: {f.message}" for f in findings))
            emit(f"{args.tape}: {len(findings)} secret(s) found; run: cassette redact TAPE -o OUT")
        else:
            emit(f"{args.tape}: no secrets found")
        return 1 if findings else 0
    redacted, changed = redact_cassette(args.tape)
    redacted.dump(args.output, overwrite=args.overwrite)
    if args.format == "json":
        emit(json.dumps({"cassette": args.tape, "output": args.output, "changed": changed}))
    else:
        emit(f"{args.output}: written; {changed} line(s) redacted from {args.tape}")
    return 0
