"""What the command line tells a person: one line on stderr (``err``), painted on a
terminal, and the log file those lines also go to (``--log``, ``CASSETTE_LOG``).

Everything for people goes to stderr: in stdio modes stdout belongs to the protocol.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["LOG_ENV", "err", "log_option", "log_to"]

LOG_ENV: Final = "CASSETTE_LOG"
#: where every line ``err`` prints is also appended (``log_to``)
_LOG: list[Any] = []


def err(text: str) -> None:
    """One line for a person, on stderr, prefixed ``cassette:``; recorded text in it (a
    miss quotes what was recorded) is shown, never obeyed (``cassette.core.words.text``). The
    same line goes to the log file, if one was asked for (``log_to``): clients that start
    a server hide its stderr, so a miss or a warning would otherwise be seen by nobody."""
    from cassette.core.words.text import printable

    line = f"cassette: {printable(text, lines=True)}\n"
    marked = text.startswith(_PAINTED) or _UNANSWERED in text
    sys.stderr.write(_painted(line) if marked else line)
    sys.stderr.flush()
    for log in _LOG:
        with contextlib.suppress(OSError):  # a full disk must not end a replay
            log.write(line)
            log.flush()


#: the words that open a line ``err`` paints on a terminal, and the head of the miss
#: summary at the end of a replay (``cassette.core.replay.replay_parts``)
_PAINTED: Final = ("miss:", "error:", "warning:")
_UNANSWERED: Final = "had no recording:"


def _painted(line: str) -> str:
    """``line`` (printable already) with its opening word coloured, when stderr takes
    colour (``cassette.core.words.colour``: a terminal, ``NO_COLOR`` unset): a miss or an error
    red, a warning yellow. The log file gets the plain line."""
    from cassette.core.words.colour import Rule, on, painted

    if not on(sys.stderr, os.environ):
        return line
    rules = (
        Rule.of(r"^cassette: (miss:|error:|\d+ request\(s\) had no recording:)", "red"),
        Rule.of(r"^cassette: (warning:)", "yellow"),
    )
    return painted(line, rules)


def log_to(option: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """Append every line ``err`` prints to the file ``--log`` names, else the one
    ``CASSETTE_LOG`` names; the path logged to (``None``: none). The lines are the very
    ones printed on stderr, so what a miss shows there (redacted) is all the file gets."""
    import os

    path = option or (os.environ if environ is None else environ).get(LOG_ENV) or None
    if path is None:
        return None
    from cassette.store.files import open_log

    handle = open_log(path)
    _LOG[:] = [handle]
    return path


def log_option(parser: Any) -> None:
    """``--log FILE``, as ``record`` and ``replay`` take it."""
    parser.add_argument(
        "--log",
        metavar="FILE",
        default=None,
        help=f"also append every line this command prints for people (banner, warnings, "
        f"misses, summary) to FILE; for clients that hide a server's stderr (default: "
        f"${LOG_ENV})",
    )
