"""Option values checked as they are parsed: a bad one is a usage error (exit 2) before
the banner, never a traceback once the server runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from cassette.errors import UsageError

__all__ = [
    "byte_size",
    "factor",
    "folder",
    "port_number",
    "positive_count",
    "regular_expression",
    "seconds",
]


def byte_size(text: str) -> int:
    """``--max-message-bytes``: a size, as ``16MiB`` or a number of bytes."""
    from cassette.core.wire.limits import parse_size

    try:
        return parse_size(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# -- option values checked as they are parsed: a bad one is a usage error (exit 2) before
# the banner, never a traceback once the server runs.


def port_number(text: str) -> int:
    """``--port``: 0 (a free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (0 to 65535; 0: a free one)")
    return port


def positive_count(text: str) -> int:
    """A count option (``--max-sessions``): a whole number of 1 or more."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{number}: must be 1 or more")
    return number


def _finite(text: str) -> float:
    try:
        number = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if number - number != 0.0:  # NaN or an infinity
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return number


def seconds(text: str) -> float:
    """A duration option: a finite number of seconds above 0."""
    number = _finite(text)
    if number <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} seconds: must be more than 0")
    return number


def factor(text: str) -> float:
    """A scale (``--pace-scale``) or a cap in seconds (``--pace-cap``): a finite number
    (the replay command refuses a negative one, naming the option)."""
    return _finite(text)


def regular_expression(text: str) -> str:
    """``--redact-pattern``: a regular expression Python compiles, and not a value written
    as one (``cassette.core.redaction.literal_patterns``). Neither refusal shows what was given: it
    may be a secret pasted in the wrong place."""
    from cassette.store.gate import pattern_problem

    problem = pattern_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def folder(text: str) -> str:
    """``--sessions``: a folder, or a path where one can be made (not a file)."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is not a folder")
    return text
