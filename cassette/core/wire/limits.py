"""How big and how deep a message from outside may be: the two limits that keep a hostile
peer or file from exhausting memory or the stack.

Size: one stdio line or one HTTP request body, 64 MiB unless configured
(``--max-message-bytes``, ``max-message-bytes`` in ``[tool.cassette]``). Fronts enforce it
where bytes arrive, before anything is kept.

Depth: JSON nested more than ``DEFAULT_MAX_DEPTH`` (256) arrays and objects is refused
before it is parsed. Python's parser would stop somewhere under its recursion limit
(about 1000), but with a ``RecursionError`` that says nothing useful, and a value that
parsed just under it could still overflow the recursive steps that follow (redaction,
matching, encoding). 256 is above what the official Python SDK accepts (pydantic-core
stops past 200 levels), so no message an SDK peer could exchange is refused; serde_json
stops at 128, Go's encoding/json at 10000, JavaScript's JSON.parse only at its stack.

Both limits are one frozen value, ``Limits``, that travels with the work, not a setting
of the process: every reader of one run (the recorder, the replayer, the fronts, the
cassette and manifest readers) must agree, or a recorder could write a message its own
reader then refuses. A caller passes it where a function takes one (``limits=``,
``limit=``); elsewhere the readers use the run's value, carried by a context variable
(``current_limits``): the command line sets it once from its options or the project's
settings (``use_limits``; ``set_max_depth`` and ``set_max_message_bytes`` change one of
the two), and the tasks and worker threads the run starts inherit it, while another run
in the same process (a test, a library caller) keeps its own. This module reads nothing
from the environment and holds no value a caller can change for everyone.

A cassette line holds one message and the event around it, so a reader accepts
``line_limit`` bytes per line: the size limit plus ``LINE_OVERHEAD``; it stops reading a
longer line there, so no file can make it hold more.

The depth check is cheap on the hot path: a message shorter than the limit cannot be too
deep; otherwise two ``count`` calls (C speed) bound the depth by the number of ``[`` and
``{``; only a message with more of them than the limit gets the exact scan
(``nesting_depth``), itself a handful of C-level calls, never a Python loop over characters.
"""

from __future__ import annotations

import re
from contextvars import ContextVar, Token
from itertools import accumulate
from operator import neg
from types import MappingProxyType
from typing import Final

from cassette.errors import UsageError

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "LINE_OVERHEAD",
    "Limits",
    "TooDeepError",
    "check_depth",
    "current_limits",
    "definitions_limit",
    "line_limit",
    "max_depth",
    "max_message_bytes",
    "nesting_depth",
    "parse_size",
    "set_max_depth",
    "set_max_message_bytes",
    "use_limits",
]

DEFAULT_MAX_BYTES: Final = 64 * 1024 * 1024
DEFAULT_MAX_DEPTH: Final = 256
#: Bytes a cassette line may hold beyond its message: the event's own fields (``kind``,
#: ``t``, ``dir``, ``meta``), generously.
LINE_OVERHEAD: Final = 64 * 1024


class Limits:
    """The size and depth limits of one run, as a value (frozen; compared by value).

    Built once where the options are known (the command line, from its flags and the
    project's settings) and passed down; a bad value is a ``UsageError`` saying which."""

    __slots__ = ("max_depth", "max_message_bytes")
    max_message_bytes: int
    max_depth: int

    def __init__(
        self, max_message_bytes: int = DEFAULT_MAX_BYTES, max_depth: int = DEFAULT_MAX_DEPTH
    ) -> None:
        if not _whole(max_message_bytes):
            raise UsageError(
                f"the size limit must be a whole number of bytes, not {max_message_bytes!r}"
            )
        if not _whole(max_depth):
            raise UsageError(
                f"the nesting limit must be a whole number of at least 1, not {max_depth!r}"
            )
        object.__setattr__(self, "max_message_bytes", max_message_bytes)
        object.__setattr__(self, "max_depth", max_depth)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Limits is frozen: cannot set {name}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Limits):
            return NotImplemented
        return (self.max_message_bytes, self.max_depth) == (
            other.max_message_bytes,
            other.max_depth,
        )

    def __hash__(self) -> int:
        return hash((self.max_message_bytes, self.max_depth))

    def __repr__(self) -> str:
        return f"Limits(max_message_bytes={self.max_message_bytes}, max_depth={self.max_depth})"

    @property
    def line_limit(self) -> int:
        """The longest cassette line a reader accepts: one message and its event's fields."""
        return self.max_message_bytes + LINE_OVERHEAD

    @property
    def definitions_limit(self) -> int:
        """The size limit for a file of definitions (a mock manifest, a scenarios file):
        the message size limit, but never below the default. Such a file holds many
        answers, not one message, so lowering the message limit to refuse large client
        messages must not refuse the file that answers them; it is still read whole, so it
        is bounded."""
        return max(self.max_message_bytes, DEFAULT_MAX_BYTES)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


#: The defaults, as a value.
DEFAULT_LIMITS: Final = Limits()
#: The run's limits, for the readers no caller hands a value (see the module docstring).
_CURRENT: Final[ContextVar[Limits]] = ContextVar("cassette_limits", default=DEFAULT_LIMITS)


class TooDeepError(ValueError):
    """JSON nested deeper than the limit; a ``ValueError`` so "not JSON" handlers see it."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"nested deeper than {limit} levels")
        self.limit = limit


def current_limits() -> Limits:
    """The limits of the run this code is part of (the defaults unless it set others)."""
    return _CURRENT.get()


def use_limits(limits: Limits) -> Token[Limits]:
    """Make ``limits`` the run's: for the rest of this context and every task and worker
    thread it starts. Returns the token that puts the previous ones back
    (``ContextVar.reset``), for a caller that runs more than one thing."""
    return _CURRENT.set(limits)


def max_depth() -> int:
    """The run's nesting limit for JSON from outside."""
    return _CURRENT.get().max_depth


def max_message_bytes() -> int:
    """The run's size limit for one message from outside (a line, a body, a file)."""
    return _CURRENT.get().max_message_bytes


def definitions_limit() -> int:
    """The run's size limit for a file of definitions (``Limits.definitions_limit``)."""
    return _CURRENT.get().definitions_limit


def line_limit() -> int:
    """The longest cassette line the run's readers accept (``Limits.line_limit``)."""
    return _CURRENT.get().line_limit


def set_max_message_bytes(limit: int) -> None:
    """Change the run's size limit (``use_limits`` with only that changed)."""
    _CURRENT.set(Limits(limit, _CURRENT.get().max_depth))


def set_max_depth(limit: int) -> None:
    """Change the run's nesting limit (``use_limits`` with only that changed)."""
    _CURRENT.set(Limits(_CURRENT.get().max_message_bytes, limit))


_KEEP: Final = b'[]{}"'
_OTHERS: Final = bytes(b for b in range(256) if b not in _KEEP)
_ONE_KIND: Final = bytes.maketrans(b"{}", b"[]")  # for depth, only opening and closing matter
_RUNS: Final = rb"\[+|\]+"  # compiled on first use: only deep nesting gets that far
_PEEL_BUDGET: Final = 4


def nesting_depth(data: bytes | str) -> int:
    """How deeply arrays and objects nest in ``data`` (0 for a scalar), ignoring brackets
    inside strings. Exact for JSON; for other text, an estimate.

    Every step is a C-level call over the data, never a Python loop over its characters:
    drop escaped backslashes, then escaped quotes (left to right, as a JSON reader pairs
    them); keep only brackets and quotes. When every quote sits next to its partner, no
    string holds a bracket and the quotes go; otherwise cut at the quotes and keep what is
    outside them. What is left are the brackets of the structure.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = raw.translate(_ONE_KIND, _OTHERS)
    quotes = kept.count(b'"')
    if quotes and kept.count(b'""') * 2 == quotes:
        kept = kept.translate(None, b'"')
    elif quotes:
        kept = b"".join(kept.split(b'"')[::2])
    return _bracket_depth(kept)


def _bracket_depth(brackets: bytes) -> int:
    """Depth of a string of ``[`` and ``]``.

    Ordinary nesting is peeled a level per pass: each pass removes every innermost ``[]``
    (one fast ``replace``), and a message a few levels deep is gone in a few passes. Deep
    nesting would take a pass per level, so peeling stops once the passes have read the
    string ``_PEEL_BUDGET`` times over; the rest is cut into runs of one bracket, and the
    deepest point is the highest running sum of their signed lengths.
    """
    peeled = 0
    budget = _PEEL_BUDGET * len(brackets)
    while brackets and budget > 0:
        inner = brackets.replace(b"[]", b"")
        if len(inner) == len(brackets):
            break  # brackets that do not pair up: not JSON
        budget -= len(brackets)
        brackets, peeled = inner, peeled + 1
    if not brackets:
        return peeled
    steps = list(map(len, re.findall(_RUNS, brackets)))
    closing = 1 if brackets.startswith(b"[") else 0  # runs alternate; closing ones count down
    steps[closing::2] = map(neg, steps[closing::2])
    deepest = max(accumulate(steps))
    return peeled + max(deepest, 0)


def check_depth(data: bytes | str, limit: int | None = None) -> None:
    """Raise ``TooDeepError`` when ``data`` nests deeper than ``limit`` (default: the
    run's, ``current_limits``). Costs two ``count`` calls unless the data has more brackets
    than that."""
    bound = _CURRENT.get().max_depth if limit is None else limit
    if len(data) <= bound:
        return  # too short to hold more than ``bound`` opening brackets
    if isinstance(data, str):
        opened = data.count("[") + data.count("{")
    else:
        opened = data.count(b"[") + data.count(b"{")
    if opened > bound and nesting_depth(data) > bound:
        raise TooDeepError(bound)


_SIZE: Final = r"\s*(\d+)\s*([kmg]i?b?|b)?\s*"  # compiled on first use (a size given)
_UNITS: Final = MappingProxyType({"": 1, "b": 1, "k": 1000, "m": 1000**2, "g": 1000**3})


def parse_size(text: str | int) -> int:
    """Bytes from ``65536``, ``64MiB``, ``10MB``, ``512k`` (KiB/MiB/GiB are powers of 1024;
    k/M/G with or without B are powers of 1000); a bad value is a ``UsageError``."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        found = re.fullmatch(_SIZE, text, re.IGNORECASE) if isinstance(text, str) else None
        if found is None:
            raise UsageError(
                f"bad size {text!r}: give bytes, or a number with KB, MB, GB, KiB, MiB or GiB"
            )
        unit = (found.group(2) or "").lower()
        base = 1024 if "i" in unit else 1
        scale = base ** "_kmg".index(unit[0]) if base == 1024 else _UNITS[unit.rstrip("b")]
        value = int(found.group(1)) * scale
    if value < 1:
        raise UsageError(f"bad size {text!r}: must be at least 1 byte")
    return value
