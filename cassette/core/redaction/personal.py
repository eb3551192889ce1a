"""Personal data: e-mail addresses and phone numbers, found in free text (opt-in rules).

Theory of operation
-------------------
MCP servers for CRMs, mail and calendars return people's addresses and numbers in
almost every answer. They are not credentials, so the built-in rules leave them alone;
with ``--redact-pii`` (or ``pii = true`` in ``[tool.cassette.redact]``) a recording also
replaces them, by placeholders of the same kind (``cassette.core.redaction.redacted``) so a client
that checks an answer's shape still accepts the replay.

An address is found from its ``@`` (``str.find``; the local part is walked back from it
and the whole checked with one anchored expression), so a text without ``@`` costs one
search. Phone numbers have no such trigger; they are found with one expression per form,
each demanding what a phone number has and other numbers lack:

* international: ``+`` or ``00``, a country code, then 8 to 15 digits in all, in groups
  (``+47 987 65 432``, ``+44 (0)20 7946 0958``, ``0049 30 1234567``);
* North American: ``(415) 555-2671``, ``415-555-2671``, ``415.555.2671``,
  ``1-800-555-0199``, with the numbering plan's first digits (2-9) and the same separator
  throughout;
* national with a trunk ``0``: ``020 7946 0958``, ``07700 900123``, ``030/1234567``,
  ``01 23 45 67 89``, ``06-12345678``: at least one separator and 9 to 12 digits.

Finding numbers is slow on digit-heavy text (one expression tried at each position;
docs/architecture.md, "Speed exceptions", has the figure), which is why the rules are
opt-in.

What must not be taken for one (``tests/unit/test_personal.py`` holds them): version
strings (``1.2.3``, ``10.0.19041.1``), dates and times (``2024-01-15``, ``01/02/2024``,
``+05:30``), IPv4 addresses, UUIDs, timestamps and other digit runs with no separator,
amounts, a number inside a longer group of digits (an IBAN, a card number), file names
(``icon@2x.png``), package versions (``pkg@1.2.3``), and the placeholders themselves.

Everything here is pure: text in, spans out.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Final

from cassette.core.redaction.redacted import EMAIL_RULE, PHONE_RULE, is_placeholder
from cassette.core.redaction.secret_table import Span

__all__ = ["find_pii", "may_hold_pii"]

_LOCAL_CHARS: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-'"
)
_MAX_LOCAL: Final = 64
#: endings that make ``name@2x.png`` a file, not an address; and ``.invalid``, the
#: reserved domain no address has (placeholders and typed sentinels live there)
_NOT_ADDRESSES: Final = frozenset(
    {"png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "bmp", "pdf", "css", "js", "mjs"}
    | {"ts", "map", "json", "txt", "md", "html", "htm", "xml", "zip", "gz", "tar", "wasm"}
    | {"invalid"}
)
_EMAIL: Final = (
    r"[A-Za-z0-9%+_'-](?:[A-Za-z0-9._%+'-]{0,62}[A-Za-z0-9%+_'-])?"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+([A-Za-z]{2,24})"
    r"(?![A-Za-z0-9-]|\.[A-Za-z0-9])"
)
# Around every phone number: not glued to letters, digits or a number's punctuation, and
# not one group of a longer run of digit groups (``4111 1111 1111 1111``).
_BEFORE: Final = r"(?<![0-9A-Za-z_.+/-])(?<![0-9][ ./-])"
_AFTER: Final = r"(?![0-9A-Za-z_]|[ ./-][0-9])"
_PHONES: Final = (
    # international: + or 00, a country code, groups
    r"(?P<intl>(?:\+|00)[1-9][0-9]{0,3}"
    r"(?:[ .-]?\(0?[0-9]{1,4}\)|[ .-]?[0-9]{1,5}){1,7})",
    # North American: (415) 555-2671, 415-555-2671, 1-800-555-0199
    r"(?P<nanp>(?:1(?P<s0>[-. ]))?(?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}(?P<s1>[-. ]))"
    r"[2-9][0-9]{2}[-. ][0-9]{4})",
    # national, with a trunk 0: 020 7946 0958, 030/1234567, 01 23 45 67 89
    r"(?P<trunk>0[1-9][0-9]{0,4}(?P<s2>[ -])[0-9]{2,4}(?:(?P=s2)?[0-9]{2,4}){0,3})",
    # a / only after the area code (06/2024/1234 is a lot number or a date)
    r"(?P<slash>0[1-9][0-9]{1,4}/[0-9]{3,4}(?: ?[0-9]{2,4}){0,2})",
)


@cache
def _email() -> re.Pattern[str]:
    return re.compile(_EMAIL)


@cache
def _phone() -> re.Pattern[str]:
    return re.compile(_BEFORE + "(?:" + "|".join(_PHONES) + ")" + _AFTER)


_TWO_DIGITS: Final = re.compile(r"[0-9]{2}")


def may_hold_pii(text: str) -> bool:
    """Whether ``text`` is worth looking into (``find_pii`` says for sure): an ``@``, a
    ``+``, or two digits in a row, which every national form of a number begins with.
    Cheap and never wrong the other way, so a message skipped here holds none."""
    return "@" in text or "+" in text or _TWO_DIGITS.search(text) is not None


def find_pii(text: str) -> list[Span]:
    """Every e-mail address and phone number in ``text`` (rules ``email`` and ``phone``)."""
    spans = _emails(text) if "@" in text else []
    return spans + [s for m in _phone().finditer(text) if (s := _phone_span(m)) is not None]


def _emails(text: str) -> list[Span]:
    spans: list[Span] = []
    at = text.find("@")
    while at != -1:
        start = at
        while start > 0 and at - start < _MAX_LOCAL and text[start - 1] in _LOCAL_CHARS:
            start -= 1
        while start < at and text[start] == ".":
            start += 1
        found = _email().match(text, start) if start < at else None
        if found is not None and found.group(1).lower() not in _NOT_ADDRESSES:
            spans.append(Span(found.start(), found.end(), EMAIL_RULE))
            at = text.find("@", found.end())
        else:
            at = text.find("@", at + 1)
    return spans


def _phone_span(found: re.Match[str]) -> Span | None:
    number = found.group(0)
    digits = sum(c.isdigit() for c in number)
    if found.group("intl") is not None:
        plain = number.startswith("00")
        if plain and not any(c in number for c in " .-("):
            return None  # 00 and a run of digits is an id, not a number dialled abroad
        if not 8 <= digits - (2 if plain else 0) <= 15:
            return None
    elif found.group("nanp") is not None:
        s0, s1 = found.group("s0"), found.group("s1")
        last = number[-5]  # the separator before the last four digits
        if (s1 is not None and last != s1) or (s0 is not None and s1 is not None and s0 != s1):
            return None
    elif not 9 <= digits <= 12:
        return None
    if is_placeholder(number):
        return None
    return Span(found.start(), found.end(), PHONE_RULE)
