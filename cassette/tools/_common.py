"""Shared pieces of the toolbox: findings, request/response pairing."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any, Literal

import attrs

from cassette.core.wire.jsonrpc import dumps
from cassette.core.wire.model import Event, MessageEvent
from cassette.core.wire.pairing import Exchange, exchanges, kind_of, same_json_id
from cassette.core.words.colour import Rule, on, painted
from cassette.core.words.text import printable

__all__ = [
    "Exchange",
    "Finding",
    "emit",
    "exchanges",
    "kind_of",
    "same_json_id",
    "size_of",
]

Severity = Literal["error", "warning", "info"]


@attrs.frozen(slots=True)
class Finding:
    """One thing wrong with a cassette, at a line of its file (1 is the header)."""

    line: int
    code: str
    message: str
    severity: Severity = "error"

    def as_data(self) -> dict[str, Any]:
        return attrs.asdict(self)


def size_of(event: Event) -> int:
    """Bytes the event's payload takes as compact JSON (or text)."""
    if isinstance(event, MessageEvent):
        text = dumps(event.message)
        return len(text.encode("utf-8", "surrogatepass"))
    text = getattr(event, "text", None) or getattr(event, "b64", None) or ""
    return len(str(text).encode("utf-8", "surrogatepass"))


def emit(text: str, colours: Sequence[Rule] = (), choice: str = "auto") -> None:
    """Reports go to stdout: these commands carry no protocol there. What a recording
    holds is shown, never obeyed: control characters (terminal escapes) and lone
    surrogates are written as their escapes (``cassette.core.words.text``). Then, when stdout
    takes colour (``choice`` is ``--color``'s value), the report's ``colours`` paint its
    marks: after the escaping, so every escape sequence written is one of ours."""
    shown = printable(text, lines=True)
    if colours and on(sys.stdout, os.environ, choice):
        shown = painted(shown, colours)
    sys.stdout.write(shown if shown.endswith("\n") or not shown else shown + "\n")
    sys.stdout.flush()
