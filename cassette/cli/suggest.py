"""What a usage error says: the closest command, option or choice ("did you mean"), and
the ``--`` hint only where a server command could go.

Imported only when a usage error is being reported: a replay starts without ``difflib``
(the command line is parsed on every replay start, thousands of times a day in a suite).
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Iterable, Sequence

__all__ = ["closest", "invalid_choice", "unknown_command", "unrecognized"]

#: the hint for words left over by a command that takes a server command after ``--``
DASH_HINT = "(a server command goes after --, e.g. -- node server.js)"


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``word`` most likely misspells, if one is close enough."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def unknown_command(word: str, commands: Iterable[str]) -> str:
    """``cassette relpay``: the command meant, or the list to choose from."""
    names = list(commands)
    guess = closest(word, names)
    if guess is not None:
        return f"unknown command {word!r} (did you mean {guess}?); cassette --help lists them"
    return f"unknown command {word!r}; choose from {', '.join(names)}"


def _options(parser: argparse.ArgumentParser) -> list[str]:
    """Every long and short option ``parser`` takes, hidden ones left out."""
    out: list[str] = []
    for action in parser._actions:  # argparse keeps them here; there is no public list
        if action.help is not argparse.SUPPRESS:
            out.extend(action.option_strings)
    return out


def unrecognized(
    extra: Sequence[str], parser: argparse.ArgumentParser, *, offers_dash: bool
) -> str:
    """The error for what ``parser`` did not take: an unknown option (with the one it most
    likely misspells), else the leftover words, with the ``--`` hint when ``offers_dash``
    (the command takes a server command and none was given after ``--``)."""
    command = parser.prog.removeprefix("cassette").strip() or "cassette"
    options = [word.split("=", 1)[0] for word in extra if word.startswith("-") and word != "-"]
    if options:
        known = _options(parser)
        parts = []
        for option in options:
            guess = closest(option, known)
            parts.append(f"{option} (did you mean {guess}?)" if guess else option)
        noun = "option" if len(parts) == 1 else "options"
        return f"{command}: unknown {noun} {', '.join(parts)}; see cassette {command} --help"
    words = " ".join(extra)
    if offers_dash:
        return f"unrecognized arguments: {words} {DASH_HINT}"
    return f"{command}: unrecognized arguments: {words}; see cassette {command} --help"


_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)$")


def invalid_choice(message: str) -> str:
    """argparse's "invalid choice" message, with the choice most likely meant."""
    found = _CHOICE.search(message)
    if found is None:
        return message
    choices = [c.strip().strip("'") for c in found.group(2).split(",")]
    guess = closest(found.group(1), choices)
    return f"{message} (did you mean {guess}?)" if guess else message
