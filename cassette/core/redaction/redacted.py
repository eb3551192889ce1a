"""What a redacted cassette holds, read by every replay: the placeholders a recording
wrote and its header's ``redaction`` field.

These live apart from ``cassette.core.redaction.redactor`` (which re-exports them) because a replay
needs only to recognise a placeholder and to check the header; importing the redactor
itself, with its rule tables and their module, costs a replay's start-up (docs/
architecture.md, "Speed exceptions", has the figure), and a
replay builds a redactor only when a request misses or a warning shows what the client
sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    PLACEHOLDER_PATTERN: re.Pattern[str]

__all__ = [
    "ENVELOPE",
    "ENV_NAME",
    "PLACEHOLDER",
    "PLACEHOLDER_PATTERN",
    "canonical",
    "check_header",
    "has_placeholder",
    "highest_numbers",
    "is_placeholder",
    "make_placeholder",
    "numbered_placeholder",
    "pattern_digest",
    "placeholder_pattern",
]

#: A message's own fields, which the redactor never changes (a replay gives it no message
#: holding nothing else, such as ``notifications/initialized``).
ENVELOPE: Final = frozenset({"jsonrpc", "id", "method"})
PLACEHOLDER: Final = "[REDACTED]"
#: Every placeholder this or an older version wrote: ``[REDACTED:<rule>:<n>]``, numbered
#: per rule in order of first appearance; older ones carried 48 random bits in hex, and
#: older still an HMAC digest. Inside a URL's authority a placeholder is percent-encoded
#: (``%5B...%5D``), since brackets there mean an IPv6 address and a URL parser would refuse
#: the header's upstream URL. The personal-data rules write values of their own kind so a
#: replay still validates: an e-mail address in the reserved ``.invalid`` domain, and a
#: phone number in E.164 form whose exchange code (``010``) no telephone network assigns.
#: (``placeholder_pattern()``: every pattern here is compiled on first use, since a replay
#: of a cassette without placeholders never needs one and compiling is paid at start-up.)
_PLACEHOLDER: Final = (
    r"(?:\[|%5B)REDACTED(?::[a-z0-9-]+:(?:[0-9a-f]{6,64}|[1-9][0-9]{0,9}))?(?:\]|%5D)"
    r"|(?<![A-Za-z0-9._%+-])redacted-[1-9][0-9]{0,9}@example\.invalid(?![A-Za-z0-9.-])"
    r"|(?<![0-9+])\+1555010[0-9]{4,8}(?![0-9])"
)


def placeholder_pattern() -> re.Pattern[str]:
    """Every placeholder this or an older version wrote (``_PLACEHOLDER``), compiled."""
    return _compiled(_PLACEHOLDER)


#: The rules whose placeholders are not ``[REDACTED:...]`` (``make_placeholder``).
EMAIL_RULE: Final = "email"
PHONE_RULE: Final = "phone"
_PHONE_PREFIX: Final = "+1555010"
_EMAIL_FORM: Final = "redacted-{}@example.invalid"


def _marked(value: str) -> bool:
    """Whether ``value`` can hold a placeholder at all (three substring tests, no regex:
    this runs on every string a replay matches)."""
    return "REDACTED" in value or "redacted-" in value or _PHONE_PREFIX in value


def is_placeholder(value: str) -> bool:
    """Whether the whole string is a placeholder."""
    return _marked(value) and placeholder_pattern().fullmatch(value) is not None


def has_placeholder(value: str) -> bool:
    """Whether the string holds a placeholder somewhere."""
    return _marked(value) and placeholder_pattern().search(value) is not None


def make_placeholder(rule: str, number: int) -> str:
    """The placeholder of the ``number``-th distinct value ``rule`` found in a recording.

    Numbered, not random: the same session recorded again gives the same bytes, and the
    number depends only on the order in which values were met, never on a value, so it
    can neither be recomputed from a guess nor confirm one (SECURITY.md)."""
    if rule == EMAIL_RULE:
        return _EMAIL_FORM.format(number)
    if rule == PHONE_RULE:
        return f"{_PHONE_PREFIX}{number:04d}"
    return f"[REDACTED:{rule}:{number}]"


_NUMBERED: Final = (
    r"(?:\[|%5B)REDACTED:([a-z0-9-]+):([1-9][0-9]{0,9})(?:\]|%5D)"
    r"|redacted-([1-9][0-9]{0,9})@example\.invalid"
    r"|\+1555010([0-9]{4,8})(?![0-9])"
)
#: a typed sentinel that names its placeholder's rule (``redacted-key-3@example.invalid``)
_SENTINEL_RULE: Final = r"redacted-([a-z][a-z0-9-]*)-([1-9][0-9]{0,9})\b"
_LAST_DIGITS: Final = r"([0-9]{1,10})[^0-9]*$"


def _number_of(found: re.Match[str]) -> tuple[str, int]:
    rule, number, email, phone = found.groups()
    if rule is not None:
        return rule, int(number)
    if email is not None:
        return EMAIL_RULE, int(email)
    return PHONE_RULE, int(phone)


def numbered_placeholder(value: str) -> tuple[str, int] | None:
    """The rule and number of the numbered placeholder in ``value``
    (``[REDACTED:key:3]``: ``("key", 3)``), else ``None``."""
    found = _compiled(_NUMBERED).search(value) if _marked(value) else None
    return None if found is None else _number_of(found)


def highest_numbers(strings: Iterable[str], sentinels: Iterable[str] = ()) -> dict[str, int]:
    """The highest number each rule's placeholders use in ``strings`` (what a cassette
    holds), and in ``sentinels`` (its typed sentinels, at its ``redacted`` pointers): where
    a session appended to it numbers on from, so a new value never gets a placeholder an
    earlier recording gave another. A sentinel that does not name its rule carries a
    ``key`` number, if any (``cassette.core.redaction.schemas``); an old random token made of digits
    reads as a number too, and numbering past it keeps placeholders unique all the same."""
    highest: dict[str, int] = {}

    def note(rule: str, number: int) -> None:
        highest[rule] = max(highest.get(rule, 0), number)

    for text in strings:
        if _marked(text):
            for found in _compiled(_NUMBERED).finditer(text):
                note(*_number_of(found))
    for text in sentinels:
        named = _compiled(_SENTINEL_RULE).search(text)
        last = _compiled(_LAST_DIGITS).search(text)
        if named is not None:
            note(named.group(1), int(named.group(2)))
        elif last is not None:
            note("key", int(last.group(1)))
    return highest


_ANY_PLACEHOLDER: Final = r"((?:\[|%5B)REDACTED:[a-z0-9-]+):[0-9a-f]{1,64}((?:\]|%5D))"


def canonical(value: str) -> str:
    """``value`` with each placeholder reduced to its rule (``[REDACTED:key:3]`` and an old
    ``[REDACTED:key:3f9a0c1d2e4b]`` both ``[REDACTED:key]``): what ``cassette diff``
    compares, so that two recordings differing only in which placeholder a secret got are
    the same."""
    if not _marked(value):
        return value
    value = _compiled(_ANY_PLACEHOLDER).sub(r"\1\2", value)
    value = re.sub(r"redacted-[1-9][0-9]{0,9}@example\.invalid", "redacted@example.invalid", value)
    return re.sub(r"\+1555010[0-9]{4,8}(?![0-9])", _PHONE_PREFIX, value)


def pattern_digest(pattern: str) -> str:
    """What a header records of a pattern beside its text, so that the rules a cassette
    was redacted with are recognised later without running anything read from it."""
    import hashlib

    return "sha256:" + hashlib.sha256(pattern.encode("utf-8")).hexdigest()[:32]


# -- the header ----------------------------------------------------------------------------

_MAX_RULES: Final = 256
_MAX_RULE_CHARS: Final = 1024
_SALT: Final = r"^[0-9a-fA-F]{0,256}$"
#: What an environment variable's name may be (the header's ``env`` list, and a
#: ``NAME=value`` argument the redactor looks at).
ENV_NAME: Final = r"^[A-Za-z_][A-Za-z0-9_.-]*$"
_DIGEST: Final = r"^sha256:[0-9a-f]{16,64}$"
_HEADER_LISTS: Final = ("patterns", "paths", "env")


@cache
def _compiled(source: str) -> re.Pattern[str]:
    """``source`` compiled once, when first used (a header to check, a placeholder to read)."""
    return re.compile(source)


def check_header(info: Any) -> list[str]:
    """What is wrong with a header's ``redaction`` field, as one-line problems.

    A replay refuses a cassette with any (``lint`` reports the same): the field is read,
    never run. Its patterns are kept as a record of what was redacted, and are not
    compiled by anything that reads a cassette."""
    if not isinstance(info, Mapping):
        return ["redaction must be an object"]
    problems: list[str] = []
    salt = info.get("salt")
    if salt is not None and (not isinstance(salt, str) or not _compiled(_SALT).match(salt)):
        problems.append("redaction.salt must be a hex string of at most 256 digits")
    if info.get("placeholders") not in (None, "random", "numbered"):
        problems.append('redaction.placeholders must be "numbered" (or "random")')
    if info.get("pii") not in (None, True, False):
        problems.append("redaction.pii must be true or false")
    for name in _HEADER_LISTS:
        rules = info.get(name)
        if rules is None:
            continue
        if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
            problems.append(f"redaction.{name} must be a list of strings")
        elif len(rules) > _MAX_RULES:
            problems.append(f"redaction.{name} holds {len(rules)} rules (at most {_MAX_RULES})")
        elif any(len(r) > _MAX_RULE_CHARS for r in rules):
            problems.append(f"redaction.{name} holds a rule over {_MAX_RULE_CHARS} characters")
        elif name == "paths" and any(p and not p.startswith("/") for p in rules):
            problems.append("redaction.paths must be JSON Pointers (starting with /)")
        elif name == "env" and any(not _compiled(ENV_NAME).match(n) for n in rules):
            problems.append("redaction.env must hold environment variable names")
    digests = info.get("digests")
    if digests is not None and (
        not isinstance(digests, list)
        or not all(isinstance(d, str) and _compiled(_DIGEST).match(d) for d in digests)
    ):
        problems.append("redaction.digests must be a list of sha256:HEX digests")
    return problems


if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        """``PLACEHOLDER_PATTERN``, compiled on first use (``placeholder_pattern``)."""
        if name != "PLACEHOLDER_PATTERN":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return placeholder_pattern()
