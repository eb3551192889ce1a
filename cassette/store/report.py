"""The ``--report FILE`` side channel: facts of a session, one JSON line each.

A supervising process (a test runner, an agent harness) reads what happened without
parsing stderr. Each fact is appended with one ``os.write`` on an ``O_APPEND`` descriptor,
so facts from parallel processes never interleave within a line. ``cassette prune``
reads a report back (``read_facts``): what the run's replays never played.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from cassette.core.words.text import surrogates_escaped
from cassette.errors import CassetteError

__all__ = ["Report", "append_facts", "read_facts", "start_report"]


class Report:
    """The side channel a supervising process reads (``--report FILE``): one JSON line per
    fact, each appended with one write; a no-op without a path. Here rather than in
    ``mode_runner`` because a plain replay reports its misses too and should not import
    the mode machinery to do it (``cassette.modes.runner`` says what is written when)."""

    def __init__(self, path: str | os.PathLike[str] | None, cassette: str | os.PathLike[str]):
        self.path = None if path is None else os.fspath(path)
        self.cassette = os.fspath(cassette)

    def write(self, event: str, **fields: Any) -> None:
        if self.path is None:
            return
        record = {"event": event, "cassette": self.cassette, "pid": os.getpid(), **fields}
        append_facts(self.path, [record])


def append_facts(path: str | os.PathLike[str], facts: Iterable[Mapping[str, Any]]) -> None:
    """Append ``facts`` to the report at ``path``, one JSON line each, in one write (so
    another process's facts never land inside them); a report that cannot be written is
    let be: it must never break the session it reports."""
    # a lone surrogate from a recording stays a JSON escape: UTF-8 cannot carry it
    text = "".join(surrogates_escaped(json.dumps(f, ensure_ascii=False)) + "\n" for f in facts)
    if not text:
        return
    with contextlib.suppress(OSError):
        fd = os.open(os.fspath(path), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)


def start_report(path: str | os.PathLike[str]) -> None:
    """Make the report at ``path`` empty (its folder created): a run that reports from
    many processes (pytest-xdist workers append to one file) starts from nothing, so
    what reads it afterwards (``cassette prune``) goes by this run alone. An
    ``OSError`` is the caller's to explain: unlike a fact, a report that cannot be
    started is a usage error."""
    folder = os.path.dirname(os.fspath(path))
    if folder:
        os.makedirs(folder, exist_ok=True)
    fd = os.open(os.fspath(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.close(fd)


def read_facts(path: str | os.PathLike[str]) -> list[tuple[int, dict[str, Any]]]:
    """The facts of the report at ``path``, each with its line; a line that is not a JSON
    object is a ``CassetteError`` naming ``path:line``."""
    from cassette.store.files import describe_os_error, open_regular

    source = os.fspath(path)
    try:
        with open_regular(source, "report") as file:
            data = file.read()
    except CassetteError:
        raise
    except OSError as exc:
        raise CassetteError(f"{source}: cannot read: {describe_os_error(exc)}") from exc
    facts: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            fact = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            fact = None
        if not isinstance(fact, dict):
            raise CassetteError(f"{source}:{number}: not a fact of a --report (a JSON object)")
        facts.append((number, fact))
    return facts
