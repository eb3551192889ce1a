"""What a redacted cassette holds, read by every replay: the placeholders a recording
wrote and its header's ``redaction`` field.

These live apart from ``cassette.core.redaction`` (which re-exports them) because a replay
needs only to recognise a placeholder and to check the header; importing the redactor
itself, with its rule tables and their module, was 2.5% of a replay's start-up, and a
replay builds a redactor only when a request misses or a warning shows what the client
sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

__all__ = [
    "ENVELOPE",
    "ENV_NAME",
    "PLACEHOLDER",
    "PLACEHOLDER_PATTERN",
    "check_header",
    "has_placeholder",
    "is_placeholder",
    "pattern_digest",
]

#: A message's own fields, which the redactor never changes (a replay gives it no message
#: holding nothing else, such as ``notifications/initialized``).
ENVELOPE: Final = frozenset({"jsonrpc", "id", "method"})
PLACEHOLDER: Final = "[REDACTED]"
#: Every placeholder this or an older version wrote (old ones carried an HMAC digest).
#: Inside a URL's authority a placeholder is percent-encoded (``%5B...%5D``), since brackets
#: there mean an IPv6 address and a URL parser would refuse the header's upstream URL.
PLACEHOLDER_PATTERN: Final = re.compile(
    r"(?:\[|%5B)REDACTED(?::[a-z0-9-]+:[0-9a-f]{6,64})?(?:\]|%5D)"
)


def is_placeholder(value: str) -> bool:
    """Whether the whole string is a placeholder."""
    return "REDACTED" in value and PLACEHOLDER_PATTERN.fullmatch(value) is not None


def has_placeholder(value: str) -> bool:
    """Whether the string holds a placeholder somewhere."""
    return "REDACTED" in value and PLACEHOLDER_PATTERN.search(value) is not None


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
    """``source`` compiled once, when a header first has something to check with it."""
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
    if info.get("placeholders") not in (None, "random"):
        problems.append('redaction.placeholders must be "random"')
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
