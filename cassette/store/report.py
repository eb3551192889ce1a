"""The ``--report FILE`` side channel: facts of a session, one JSON line each.

A supervising process (a test runner, an agent harness) reads what happened without
parsing stderr. Each fact is appended with one ``os.write`` on an ``O_APPEND`` descriptor,
so facts from parallel processes never interleave within a line.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from cassette.core.text import surrogates_escaped

__all__ = ["Report"]


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
        # a lone surrogate from a recording stays a JSON escape: UTF-8 cannot carry it
        text = surrogates_escaped(json.dumps(record, ensure_ascii=False))
        data = (text + "\n").encode("utf-8")
        with contextlib.suppress(OSError):  # a report must never break the session it reports
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
