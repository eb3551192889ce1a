"""Recorded text made safe to show: what a server sent never acts on the reader's screen.

A cassette holds whatever the recorded server said, and a server may say anything: raw
terminal escape sequences (which recolour, retitle or rewrite a terminal), carriage
returns that hide a line behind another, bidirectional overrides that make text read
otherwise than it is, and lone UTF-16 surrogates (legal as JSON escapes, impossible to
encode as UTF-8, so printing one crashes the printer). Every tool that prints recorded
text (``show``, ``lint``, ``diff``, the messages of ``record``) passes it through
``printable``, which writes each such character as the JSON escape that names it
(``\\u001b``, ``\\ud800``): visible, unambiguous, and what the cassette file itself holds.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, Final

__all__ = ["has_surrogates", "one_line", "printable", "show_value", "surrogates_escaped"]

# C0 controls, DEL and C1 controls, line and paragraph separators, bidirectional
# embeddings, overrides and isolates, and every surrogate (only a lone one survives
# decoding into a Python string).
_UNSAFE: Final = "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
_UNSAFE_KEEP_LINES: Final = (
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_SURROGATE: Final = "[\ud800-\udfff]"


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """A pattern compiled on first use: a character class reaching into the surrogates
    is costly to compile (docs/architecture.md, "Speed exceptions", has the figure), and a clean
    replay prints nothing of what it plays."""
    return re.compile(pattern)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def printable(text: str, *, lines: bool = False) -> str:
    """``text`` with every character that could act on a screen written as its escape;
    ``lines`` keeps newlines and tabs (for a multi-line block)."""
    pattern = _compiled(_UNSAFE_KEEP_LINES if lines else _UNSAFE)
    return pattern.sub(_escape, text) if pattern.search(text) else text


def has_surrogates(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (which UTF-8 cannot encode)."""
    return _compiled(_SURROGATE).search(text) is not None


def surrogates_escaped(text: str) -> str:
    """``text`` with each lone surrogate written as its escape, the rest untouched."""
    return _compiled(_SURROGATE).sub(_escape, text)


def one_line(value: object) -> str:
    """A method or tool name as a message shows it: on one line, every control
    character as its escape, so a name holding a newline cannot forge a line of our own
    (``cassette: error: ...``) on a terminal or in a log."""
    return printable(str(value))


def show_value(value: Any) -> str:
    """A JSON value shortened for a one-line message."""
    from cassette.core.wire.jsonrpc import dumps
    from cassette.core.words.jsondiff import MISSING

    if value is MISSING:
        return "(absent)"
    text = dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
