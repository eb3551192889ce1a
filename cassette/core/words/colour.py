"""Colour on a terminal: when to use it, and how a report is painted without letting a
recording paint anything.

When: ``wanted`` decides once per stream, in the order people expect from other tools
(CPython's own, git's): ``--color always`` or ``never`` on the command line wins; then
``NO_COLOR`` (https://no-color.org: any non-empty value turns colour off), then
``FORCE_COLOR`` (any non-empty value turns it on, for a CI log that renders colour), then
``TERM=dumb`` (off); else colour only on a terminal. On Windows ``auto`` also needs a
console known to understand the escapes (Windows Terminal sets ``WT_SESSION``; Git Bash
and other ports set ``TERM``): the classic console prints them as text.

How: a report is built as plain text, made printable (``cassette.core.words.text``: every
control character a recording holds, ESC included, becomes its visible escape), and only
then painted by ``painted``, which wraps what each ``Rule`` matches in one SGR sequence
and a reset. So every escape sequence that reaches the terminal is one of ours, from a
fixed palette, and a report without colour is byte for byte the text it always was: the
tests, the JSON and the log file never see a colour. The rules match the report's own
grammar (a status word at the start of a line, a mark at its end), written by the module
that writes the report.

Sans-IO: the caller hands in the environment; ``on`` asks the stream it is given whether
it is a terminal, and nothing here writes.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from typing import Final, Literal

import attrs

__all__ = ["CHOICES", "Rule", "Style", "on", "paint", "painted", "wanted"]

#: the values ``--color`` takes
CHOICES: Final = ("auto", "always", "never")

Style = Literal["red", "green", "yellow", "bold", "dim"]

_SGR: Final[dict[str, str]] = {
    "red": "\x1b[31m",
    "green": "\x1b[32m",
    "yellow": "\x1b[33m",
    "bold": "\x1b[1m",
    "dim": "\x1b[2m",
}
_RESET: Final = "\x1b[0m"


def wanted(choice: str, environ: Mapping[str, str], tty: bool, *, windows: bool = False) -> bool:
    """Whether to colour a stream: ``choice`` is ``--color``'s value (``auto`` when the
    command has none), ``environ`` the process environment, ``tty`` whether the stream
    is a terminal."""
    if choice in ("always", "never"):
        return choice == "always"
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    if environ.get("TERM") == "dumb" or not tty:
        return False
    return not windows or bool(environ.get("WT_SESSION") or environ.get("TERM"))


def on(stream: object, environ: Mapping[str, str], choice: str = "auto") -> bool:
    """``wanted`` for ``stream`` (stdout, stderr): a stream that cannot say whether it is
    a terminal (closed, replaced by a test) is not one."""
    isatty = getattr(stream, "isatty", None)
    try:
        tty = bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):
        tty = False
    return wanted(choice, environ, tty, windows=sys.platform == "win32")


def paint(text: str, style: Style) -> str:
    """``text`` in ``style``, then back to the terminal's default."""
    return f"{_SGR[style]}{text}{_RESET}" if text else text


@attrs.frozen
class Rule:
    """Paint what ``pattern`` matches in ``style``: its first group when it has one (the
    rest of the match places it), else the whole match. Matched per line (``^`` and
    ``$`` are a line's ends)."""

    pattern: re.Pattern[str]
    style: Style

    @classmethod
    def of(cls, pattern: str, style: Style) -> Rule:
        return cls(re.compile(pattern, re.MULTILINE), style)


def painted(text: str, rules: Iterable[Rule]) -> str:
    """``text`` (already printable: no escape of its own) with each rule's matches
    painted; where two rules match overlapping text, the earlier rule wins."""
    spans: list[tuple[int, int, Style]] = []
    for rule in rules:
        for match in rule.pattern.finditer(text):
            group = 1 if match.re.groups else 0
            start, end = match.span(group)
            if start < end and not any(s < end and start < e for s, e, _ in spans):
                spans.append((start, end, rule.style))
    if not spans:
        return text
    out: list[str] = []
    at = 0
    for start, end, style in sorted(spans):
        out += [text[at:start], paint(text[start:end], style)]
        at = end
    out.append(text[at:])
    return "".join(out)
