"""``cassette prune TAPE --against REPORT [--dry-run]``: drop the recordings a run never
played, without recording anything again.

REPORT is what a run's replays wrote (``cassette replay --report FILE``, the record
modes' ``--report``, the pytest plugin's ``--mcp-cassette-report FILE``): each replay
of a cassette ends with an ``unplayed`` fact listing the recorded requests no session of
it played (``line``, ``request``). A request is pruned only when *every* replay of TAPE
in the report left it unplayed: tests that share a cassette each played their part. What
goes with a request (its answer, progress, the server's own requests meanwhile, the
client's answers to them, a cancellation) is ``cassette.core.tape.prune``'s to say; every line
that stays is kept byte for byte, so redaction placeholders keep their numbers and the
file still lints clean.

Safety: the report must name TAPE (else there is nothing to go by, and nothing is
done), and each line it names must still hold the very request it names (its
``request_digest``); a cassette recorded again, edited or pruned since the run is
refused, not pruned by stale line numbers.
The cassette is rewritten atomically under its lock.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from cassette.core.tape.prune import pruned_seqs, request_digest, requests_at
from cassette.core.wire.model import MessageEvent
from cassette.errors import CassetteError, UsageError
from cassette.modes.episode import describe_request
from cassette.store.report import read_facts
from cassette.store.storage import Cassette
from cassette.tools._common import emit

__all__ = ["PrunePlan", "main", "prune_cassette"]


@attrs.frozen
class PrunePlan:
    """What pruning ``cassette`` against a report does: the recorded requests that go
    (``(line, request)``), every line that goes with them, and how many replays of the
    cassette the report held."""

    cassette: str
    requests: tuple[tuple[int, str], ...]
    lines: tuple[int, ...]
    replays: int
    written: bool = False

    def as_data(self) -> dict[str, Any]:
        return {
            "cassette": self.cassette,
            "replays": self.replays,
            "pruned": [{"line": line, "request": text} for line, text in self.requests],
            "lines": list(self.lines),
            "written": self.written,
        }

    def text(self) -> str:
        verb = "pruned" if self.written else "would prune"
        if not self.requests:
            return (
                f"{self.cassette}: nothing to prune; every recorded request was played by "
                f"one of the {self.replays} replay(s) in the report"
            )
        lines = [f"{verb}: {self.cassette}:{line}: {text}" for line, text in self.requests]
        lines.append(
            f"{self.cassette}: {verb} {len(self.requests)} recording(s) that none of "
            f"{self.replays} replay(s) played ({len(self.lines)} line(s))"
        )
        return "\n".join(lines)


def prune_cassette(
    tape: str | os.PathLike[str], report: str | os.PathLike[str], *, dry_run: bool = False
) -> PrunePlan:
    """Drop from ``tape`` the recordings no replay of it in ``report`` played (see the
    module docstring); with ``dry_run``, only say which."""
    from cassette.store.lock import FileLock

    path = Path(tape)
    unplayed, replays = _unplayed(path, Path(report))
    lock = FileLock(path)
    if not dry_run and not lock.try_acquire():
        holder = lock.holder(within=1.0)
        who = f"process {holder}" if holder else "another process"
        raise CassetteError(f"{path}: {who} is writing it; prune it when that is done")
    try:
        data = _read(path)
        cassette = Cassette.loads(data, os.fspath(path))
        requests = _checked(cassette, unplayed, path)
        seqs = pruned_seqs(cassette.events, [line - 1 for line in requests])
        plan = PrunePlan(
            os.fspath(path),
            tuple(sorted(requests.items())),
            tuple(sorted(seq + 1 for seq in seqs)),
            replays,
        )
        if dry_run or not seqs:
            return plan
        _write(path, data, seqs)
        return attrs.evolve(plan, written=True)
    finally:
        lock.release()


#: what a report says of an unplayed request: its description and digest (``None``: a
#: report that gives none)
Named = tuple[str, str | None]


def _unplayed(tape: Path, report: Path) -> tuple[dict[int, Named], int]:
    """The requests (line: what the report says of it) every replay of ``tape`` in
    ``report`` left unplayed, and how many replays there were."""
    facts = [fact for _, fact in read_facts(report) if _names(fact, tape, report.parent)]
    runs = [fact for fact in facts if fact.get("event") == "unplayed"]
    if not runs:
        named = sorted({str(f.get("cassette")) for _, f in read_facts(report)} - {"None"})
        listed = f"; it names {', '.join(named)}" if named else ""
        raise UsageError(
            f"{report} holds no replay of {tape} (a run that recorded it or never used it "
            f"says nothing of what it did not play){listed}"
        )
    common: dict[int, Named] | None = None
    for run in runs:
        left = dict(_entries(run.get("requests"), report))
        common = left if common is None else {k: v for k, v in common.items() if k in left}
    return common or {}, len(runs)


def _entries(requests: Any, report: Path) -> Iterable[tuple[int, Named]]:
    if not isinstance(requests, list):
        raise CassetteError(f"{report}: an unplayed fact without its list of requests")
    for entry in requests:
        got = entry if isinstance(entry, dict) else {}
        line, text, digest = got.get("line"), got.get("request"), got.get("digest")
        if not isinstance(line, int) or isinstance(line, bool) or not isinstance(text, str):
            raise CassetteError(f"{report}: an unplayed request without its line and request")
        yield line, (text, digest if isinstance(digest, str) else None)


def _names(fact: dict[str, Any], tape: Path, beside: Path) -> bool:
    """Whether ``fact`` is about ``tape`` (a report names a cassette as its writer was
    given it: absolute, or relative to where it ran, most often the report's folder or
    here)."""
    named = fact.get("cassette")
    if not isinstance(named, str) or not named:
        return False
    wanted = tape.resolve()
    candidates = [Path(named)] if Path(named).is_absolute() else [Path(named), beside / named]
    return any(candidate.resolve() == wanted for candidate in candidates)


def _checked(cassette: Cassette, unplayed: dict[int, Named], path: Path) -> dict[int, str]:
    """``unplayed`` (line: description), each line checked to still hold the very request
    the report names."""
    found = requests_at(cassette.events, [line - 1 for line in unplayed])
    out: dict[int, str] = {}
    for line, (text, digest) in unplayed.items():
        held = _held(found.get(line - 1), text, digest)
        if held is not None:
            raise CassetteError(
                f"{path}:{line}: the report names {text}, but the line {held}: the cassette "
                "changed since the run; run again and prune against its report"
            )
        out[line] = text
    return out


def _held(event: MessageEvent | None, text: str, digest: str | None) -> str | None:
    """What the line holds instead of the request a report names (``None``: that one)."""
    if event is None:
        return "holds no recorded request"
    now = describe_request(event.message)
    if now != text:
        return f"holds {now}"
    if digest is not None and request_digest(event.message) != digest:
        return f"holds another {now}"
    return None


def _read(path: Path) -> bytes:
    from cassette.store.files import open_regular

    with open_regular(path) as file:
        return file.read()


def _write(path: Path, data: bytes, seqs: set[int]) -> None:
    """``data`` without the lines at ``seqs``, every other line as it was, written
    atomically; read back before it is (a cassette that would not read is a bug, never
    a file)."""
    from cassette.store.files import write_atomic

    lines = data.split(b"\n")  # as the reader numbers them: seq is the index here
    kept = b"\n".join(line for index, line in enumerate(lines) if index not in seqs)
    Cassette.loads(kept, os.fspath(path))
    write_atomic(path, kept)


def main(args: argparse.Namespace) -> int:
    plan = prune_cassette(args.tape, args.against, dry_run=args.dry_run)
    emit(json.dumps(plan.as_data(), indent=2) if args.format == "json" else plan.text())
    return 0
