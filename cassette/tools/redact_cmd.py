"""``cassette redact``: apply the recorder's redaction rules to a cassette, or scan for secrets.

Both use the one detector recording uses (``cassette.tools._secrets``), so a cassette
recorded with ``--no-redact`` or by an older version gets exactly what a recording would
have given it. Rewriting drops an older cassette's ``salt`` from the header: with it,
anyone holding the file could confirm a guessed secret against the old placeholders (their
digests were keyed with it); without it they are as irreversible as new ones, and replays
never needed it (redacted positions are wildcards).
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

import attrs

from cassette.core.redaction.redactor import Redactor
from cassette.core.wire.jsonrpc import pretty
from cassette.store.storage import Cassette
from cassette.tools._common import Finding, emit
from cassette.tools._secrets import Cleaned, clean, secret_findings

__all__ = ["main", "redact_cassette", "redact_values", "scan_cassette"]


def scan_cassette(tape: Cassette | str | os.PathLike[str]) -> list[Finding]:
    """Secrets the redaction rules would remove, one finding per place (``file:line``),
    and the suspects no rule claimed that no one reviewed (code ``suspect``)."""
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    return secret_findings(cassette)


def _header_rules(info: Any) -> dict[str, Any]:
    """The user's rules an older header recorded, kept as a record (never run); not a
    value it kept as a pattern (``cassette.core.redaction.literal_patterns``), which is dropped
    (the scanning policy redacts it wherever else it is)."""
    if not isinstance(info, dict):
        return {}
    from cassette.core.redaction.literal_patterns import without_literals

    info = without_literals(info)[0]
    return {k: info[k] for k in ("patterns", "paths", "env") if isinstance(info.get(k), list)}


def redact_cassette(
    tape: Cassette | str | os.PathLike[str], redactor: Redactor | None = None
) -> tuple[Cassette, int]:
    """A redacted copy of the cassette and how many lines changed."""
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    copy, result = _redacted(cassette, redactor)
    changed = sum(1 for old, new in zip(cassette.events, copy.events, strict=True) if old != new)
    changed += result.target != dict(cassette.header.target)
    return copy, changed


def redact_values(cassette: Cassette, redactor: Redactor) -> tuple[Cassette, int]:
    """A copy of ``cassette`` redacted by ``redactor`` (a policy of the one gate), and how
    many values it replaced: each placeholder written, each typed sentinel (what
    ``cassette import`` says)."""
    copy, result = _redacted(cassette, redactor)
    return copy, result.replaced


def _redacted(cassette: Cassette, redactor: Redactor | None) -> tuple[Cassette, Cleaned]:
    """The cassette through ``redactor`` (default: the scanning policy), its header saying
    so, and what changed where."""
    from cassette.store.gate import numbered_after, scan_policy

    policy = redactor or scan_policy(cassette.header.redaction)
    # a secret found now is numbered after the placeholders the cassette holds already
    numbered = numbered_after(policy, (cassette.header, *cassette.events))
    assert numbered is not None
    result = clean(cassette, numbered)
    info = {**_header_rules(cassette.header.redaction), **policy.describe()}
    header = attrs.evolve(cassette.header, target=result.target, redaction=info)
    return attrs.evolve(cassette, header=header, events=result.events), result


def _summary(tape: str, found: int, suspects: int) -> str:
    parts = []
    if found:
        parts.append(f"{found} secret(s) found; run: cassette redact TAPE -o OUT")
    if suspects:
        parts.append(
            f"{suspects} suspect(s) to review: redact them, or list them as reviewed in "
            "[tool.cassette.redact]"
        )
    return f"{tape}: " + "; ".join(parts)


def main(args: argparse.Namespace) -> int:
    if args.scan:
        if args.overwrite:
            from cassette.errors import UsageError

            raise UsageError("--overwrite goes with -o OUT, not --scan")
        findings = scan_cassette(args.tape)
        found = [f for f in findings if f.code != "suspect"]
        suspects = [f for f in findings if f.code == "suspect"]
        if args.format == "json":
            data = {
                "cassette": args.tape,
                "secrets": [f.as_data() for f in found],
                "suspects": [f.as_data() for f in suspects],
            }
            emit(pretty(data))
        elif findings:
            emit("\n".join(f"{args.tape}:{f.line}: {f.message}" for f in findings))
            emit(_summary(args.tape, len(found), len(suspects)))
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
