"""What a usage error says: the closest command, option or choice ("did you mean"), and
the one explanation of ``--`` for every command that takes a server command.

Imported only when a usage error is being reported: a replay starts without ``difflib``
(the command line is parsed on every replay start, thousands of times a day in a suite).
The closest choice is ``cassette.core.words.suggest``'s, the one every layer refuses a value
with, so an option, an environment variable and a pytest marker all suggest alike.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from collections.abc import Iterable, Sequence
from typing import Final

from cassette.core.words.suggest import closest

__all__ = [
    "closest",
    "dash_hint",
    "invalid_choice",
    "looks_like_cassette",
    "lost_dash",
    "misplaced_command",
    "no_command",
    "unknown_command",
    "unrecognized",
]

#: How each command that takes a server command is written with one: the example every
#: explanation of ``--`` ends with.
_WITH_COMMAND: Final = {
    "record": "record -o TAPE",
    "replay": "replay TAPE",
    "check": "check",
    "verify": "verify TAPE",
    "variant": "variant TAPE --as NAME",
}


def dash_hint(command: str, words: Sequence[str] = (), options: Sequence[str] = ()) -> str:
    """The one explanation of ``--``, the same for every command that takes a server
    command: where it goes, as a command line to copy, with ``words`` as the server
    command (none given: an example one) after the ``options`` that need it."""
    server = shlex.join(words) if words else "node server.js"
    given = "".join(f" {option}" for option in options)
    return f"a server command goes after --: cassette {_WITH_COMMAND[command]}{given} -- {server}"


def misplaced_command(command: str, words: Sequence[str]) -> str:
    """The error for words a command took for cassettes or left over, which read as a
    server command given without ``--`` (``cassette verify t.jsonl python srv.py``)."""
    return f"{command}: {' '.join(words)}: not a cassette or an option; {dash_hint(command, words)}"


def no_command(command: str, why: str, options: Sequence[str] = ()) -> str:
    """The error for a command that needs a server command and was given none (``why``:
    what needs it; ``options``: the options given that do, for the example)."""
    return f"{command}: {why}; {dash_hint(command, options=options)}"


#: what a server command's first words end with, and a cassette never does
_SCRIPTS: Final = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".exe")


def looks_like_cassette(word: str) -> bool:
    """Whether ``word`` may be the cassette a person meant: a name with a cassette's
    suffix (one still to be recorded, too), or a file there that is neither a program
    nor a script. ``python``, ``node``, ``/usr/bin/python3`` or ``srv.py`` is no
    cassette: it is a server command that lost its ``--``."""
    if word.endswith((".jsonl", ".json")):
        return True
    if word.lower().endswith(_SCRIPTS) or not os.path.isfile(word):
        return False
    return sys.platform == "win32" or not os.access(word, os.X_OK)


def lost_dash(args: argparse.Namespace) -> str | None:
    """The error for cassettes that read as a server command given without ``--`` (``None``:
    there are none): ``verify t.jsonl python srv.py`` (from the first word that is no
    cassette on) or ``check server.py``, when no server was given any other way. Refused
    as a lost ``--``, not as ``python: no such cassette``."""
    if args.server or getattr(args, "scenarios", None) is not None:
        return None
    if args.command == "verify" and args.upstream is None:
        tapes = list(args.tapes)
        lost = next((i for i, tape in enumerate(tapes) if not looks_like_cassette(tape)), None)
        return None if lost is None else misplaced_command("verify", tapes[lost:])
    if args.command == "check" and args.stdio is None and args.url is None:
        tape = args.tape
        return (
            None
            if tape is None or looks_like_cassette(tape)
            else misplaced_command("check", [tape])
        )
    return None


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
    extra: Sequence[str],
    parser: argparse.ArgumentParser,
    *,
    offers_dash: bool,
    taken: str | None = None,
) -> str:
    """The error for what ``parser`` did not take: an unknown option (with the one it most
    likely misspells), else the leftover words, explained as a server command that lost
    its ``--`` when ``offers_dash`` (the command takes a server command and none was given
    after ``--``); ``taken`` is the word the command took for its cassette, part of that
    server command when it is no cassette (``check node s.js``)."""
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
    if offers_dash:
        words = [taken, *extra] if taken and not looks_like_cassette(taken) else list(extra)
        return misplaced_command(command, words)
    return f"{command}: unrecognized arguments: {' '.join(extra)}; see cassette {command} --help"


_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)$")


def invalid_choice(message: str) -> str:
    """argparse's "invalid choice" message, with the choice most likely meant."""
    found = _CHOICE.search(message)
    if found is None:
        return message
    choices = [c.strip().strip("'") for c in found.group(2).split(",")]
    guess = closest(found.group(1), choices)
    return f"{message} (did you mean {guess}?)" if guess else message
