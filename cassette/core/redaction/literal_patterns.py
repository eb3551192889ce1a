"""Whether a redaction pattern is really a value: a regular expression that matches only
one text.

Theory of operation
-------------------
A user's patterns are written in the cassette's header (each with a digest), so that what
joins the cassette later is redacted by the same rules. That is right for a pattern, and
wrong for a value given as one: ``--redact-pattern "$API_KEY"`` writes the key itself
into a file that is committed, and its sha256 lets anyone confirm a guess of it. Such a
pattern is refused where it enters (``cassette.store.gate.check_rules``), with a pointer
to ``--redact-env``, which redacts a variable's value and writes only its name.

"Matches only itself" is decided on the pattern's *language*, the set of texts it
matches: a pattern is a literal when that set has exactly one non-empty member. So
``sk-live-abc``, ``sk\\-live\\-abc``, ``^sk-live-abc$``, ``(sk)-live-abc`` and
``a{3}`` are literals (``re.escape`` of a value always is); ``acct-[0-9]{6}``,
``tok.n``, ``(?i)token``, ``a|b`` and ``x+`` are not. It is computed from the parse
Python's ``re`` itself makes (``re._parser``), read conservatively: ordinary characters,
escapes of one character, anchors and lookarounds (they match no text), groups and back
references of a literal, a one-character class, an exact count ``{n}`` and alternatives
that are all the same text keep a pattern a literal; anything else (a class, a range, a
repeat, a case-insensitive letter, a construct not listed) makes it several texts. A
Python without that parser falls back to the plain reading: a pattern with none of
``.^$*+?{}[]\\|()`` is a literal.

Sans-IO: a string in, an answer out.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["is_literal", "only_text", "without_literals"]

_META: Final = frozenset(".^$*+?{}[]\\|()")
_ZERO_WIDTH: Final = frozenset({"AT", "ASSERT", "ASSERT_NOT"})
_REPEATS: Final = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})


def is_literal(pattern: str) -> bool:
    """Whether ``pattern`` matches exactly one text, and that text is not empty."""
    return bool(only_text(pattern))


def only_text(pattern: str) -> str | None:
    """The one text ``pattern`` matches, or ``None`` when it matches several (or none can
    be told, or it does not compile)."""
    try:
        parser: Any = importlib.import_module("re._parser")
        parsed = parser.parse(pattern)
    except (ImportError, AttributeError):
        return None if _META & set(pattern) else pattern
    except re.error:
        return None
    return _text(list(parsed), parsed.state.flags, {})


def _cased(text: str) -> bool:
    return text.lower() != text.upper()


def _text(items: list[tuple[Any, Any]], flags: int, groups: dict[int, str]) -> str | None:
    """The one text a parsed sequence matches, else ``None`` (see the module docstring)."""
    out: list[str] = []
    for op, arg in items:
        name = str(op)
        if name in _ZERO_WIDTH:
            continue
        if name == "LITERAL":
            found: str | None = chr(arg)
        elif name == "IN":
            found = chr(arg[0][1]) if len(arg) == 1 and str(arg[0][0]) == "LITERAL" else None
        elif name == "SUBPATTERN":
            group, added, removed, sub = arg
            found = _text(list(sub), (flags | added) & ~removed, groups)
            if found is not None and group:
                groups[group] = found
        elif name == "ATOMIC_GROUP":
            found = _text(list(arg), flags, groups)
        elif name in _REPEATS:
            low, high, sub = arg
            one = _text(list(sub), flags, groups) if low == high else None
            found = None if one is None else one * low
        elif name == "BRANCH":
            texts = {_text(list(branch), flags, dict(groups)) for branch in arg[1]}
            found = texts.pop() if len(texts) == 1 else None
        elif name == "GROUPREF":
            found = groups.get(arg)
        else:
            found = None
        if found is None or (flags & re.IGNORECASE and _cased(found)):
            return None
        out.append(found)
    return "".join(out)


def without_literals(info: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A cassette header's ``redaction`` without the patterns that are values (a header an
    older version wrote, before they were refused) nor their digests, and those values,
    as the text each matches: what a rewrite keeps, and what it must redact instead."""
    out = dict(info)
    patterns = info.get("patterns")
    if not isinstance(patterns, list):
        return out, []
    found = info.get("digests")
    digests: list[Any] = found if isinstance(found, list) and len(found) == len(patterns) else []
    kept, kept_digests, values = [], [], []
    for index, pattern in enumerate(patterns):
        value = only_text(pattern) if isinstance(pattern, str) else None
        if value:
            values.append(value)
            continue
        kept.append(pattern)
        if digests:
            kept_digests.append(digests[index])
    if not values:
        return out, []
    for key, remaining in (("patterns", kept), ("digests", kept_digests)):
        if remaining:
            out[key] = remaining
        else:
            out.pop(key, None)
    return out, values
