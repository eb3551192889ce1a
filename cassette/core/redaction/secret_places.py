"""Where a secret stands in JSON: what a member name, a pair or a container says about
the value beside it, and the values a found secret also gives away.

Theory of operation
-------------------
A value is secret because of where it stands, whatever it looks like. In a JSON value
that is: under a secret-sounding member name (``_key_kind``); the ``value`` of a
``{"name": ..., "value": ...}`` pair that is a cookie or a secret-named header
(``_secret_pair``); the second of a ``[name, value]`` pair in a list of such pairs whose
name is secret (``header_pairs``: header lists as HTTP clients log them, as ``_meta``
carries them); a JWK's private members (``JWK_PRIVATE`` beside ``kty``). JSON held in a
string (a tool's text content, a log line) is read for the same places
(``nested_json``), so nesting hides nothing. A secret found also gives away parts of it
that a server may echo alone (``derived``): the password of ``user:password``, the
credential of ``Scheme credential``, and what a ``Basic`` credential decodes to.

The redaction session (``cassette.core.redaction.redactor``) walks messages with these; everything
here is pure: values in, values out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, Final

from cassette.core.redaction.redacted import ENVELOPE
from cassette.core.redaction.secret_names import (
    _compiled,
    credential_parts,
    is_protocol_key,
    is_secret_key,
)
from cassette.core.redaction.secret_table import Span, decoded_text

_SCHEMA_KEYS: Final = frozenset({"inputSchema", "outputSchema", "requestedSchema"})


#: Where a value sits in a message: ``None`` at the root, else (the parent's path, the
#: member name or list index); flattened only when a pointer or a schema needs it.
Path = tuple[Any, str | int] | None
_KEY_KIND_PLAIN: Final = 0
_KEY_KIND_PROTOCOL: Final = 1
_KEY_KIND_SECRET: Final = 2
_KEY_KIND_SCHEMA: Final = 3


@lru_cache(maxsize=4096)
def _key_kind(key: str) -> int:
    """What a member name says about its value (cached: messages repeat their names)."""
    if key in _SCHEMA_KEYS:
        return _KEY_KIND_SCHEMA
    if is_protocol_key(key):
        return _KEY_KIND_PROTOCOL
    return _KEY_KIND_SECRET if is_secret_key(key) else _KEY_KIND_PLAIN


#: Members beside ``name`` and ``value`` that make the pair a cookie (a browser's or an
#: HTTP client's cookie jar) or an HTTP header (a HAR file).
_COOKIE_KEYS: Final = frozenset(
    {"domain", "path", "expires", "httpOnly", "secure", "sameSite", "hostOnly", "session"}
)


def _secret_pair(value: Mapping[str, Any]) -> bool:
    """A ``{"name": ..., "value": ...}`` pair whose value is a credential: a cookie, or a
    header or variable with a secret name (``{"name": "Authorization", "value": ...}``)."""
    name = value.get("name")
    if not isinstance(name, str) or "value" not in value:
        return False
    return is_secret_key(name) or not _COOKIE_KEYS.isdisjoint(value)


def _strings(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` with ``change`` applied to every string in it (keys and envelope kept)."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [_strings(v, change) for v in value]
    if isinstance(value, dict):
        return {k: v if k in ENVELOPE else _strings(v, change) for k, v in value.items()}
    return value


def _overlaps(span: Span, held: list[tuple[int, int]]) -> bool:
    return any(span.start < end and start < span.end for start, end in held)


def _flat(path: Path) -> tuple[str, ...]:
    parts: list[str] = []
    while path is not None:
        path, key = path
        parts.append(str(key))
    return tuple(reversed(parts))


def _pointer(path: Path) -> str:
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in _flat(path))


_NUMBER_START: Final = frozenset("-0123456789")
_JSON_NUMBER: Final = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


def _bare_json_number(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a number standing as a JSON value in JSON text
    (after ``:``, ``[`` or ``,``, before ``,``, ``}`` or ``]``): a placeholder there must
    be quoted, or the text stops being JSON."""
    if not _JSON_NUMBER.fullmatch(text, start, end):
        return False
    i = start - 1
    while i >= 0 and text[i] in " \t\r\n":
        i -= 1
    j = end
    while j < len(text) and text[j] in " \t\r\n":
        j += 1
    return i >= 0 and j < len(text) and text[i] in ":[," and text[j] in ",}]"


def _replace_at(value: Any, parts: list[str], make: Any) -> Any:
    if not parts:
        return make(value) if value is not None else value
    head, rest = parts[0], parts[1:]
    if isinstance(value, dict) and head in value:
        return {**value, head: _replace_at(value[head], rest, make)}
    if isinstance(value, list) and head.isdigit() and int(head) < len(value):
        copy = list(value)
        copy[int(head)] = _replace_at(value[int(head)], rest, make)
        return copy
    return value


#: A JWK's private members: the RSA private exponent, primes and CRT values, an EC or
#: OKP private key (``d``), a symmetric key (``k``), other primes (``oth``).
JWK_PRIVATE: Final = frozenset({"d", "p", "q", "dp", "dq", "qi", "k", "oth"})


def is_jwk(value: Mapping[str, Any]) -> bool:
    """A JSON Web Key (its ``kty``): its private members are secrets, whatever their names."""
    return isinstance(value.get("kty"), str)


def header_pairs(value: list[Any]) -> bool:
    """A list of ``[name, value]`` pairs (headers as clients log them): the value of each
    pair with a secret name is secret. Only a list of pairs counts, so a pair of words
    (``["password", "email"]``, fields a form asks for) is left alone."""
    return all(
        isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) for pair in value
    )


def derived(rule: str, secret: str) -> list[str]:
    """What a secret found by ``rule`` gives away beside itself, each also redacted wherever
    a server echoes it alone: the password of ``user:password`` (URL credentials, ``curl
    -u``), the credential of ``Scheme credential``, and a ``Basic`` credential decoded
    (``user:password``, then the password)."""
    if rule in ("url-credentials", "command-line"):
        password = secret.partition(":")[2]
        return [password] if password else []
    if rule == "basic-auth":
        return credential_parts("Basic " + secret)[1:]
    if rule == "key" and " " in secret:
        return credential_parts(secret)[1:]
    if rule == "base64":  # what the rules find in the text it decodes to
        from cassette.core.redaction.secret_rules import find_spans

        text = decoded_text(secret)
        return [text[s.start : s.end] for s in find_spans(text)] if text else []
    return []


#: The most text read as nested JSON: a longer string is searched as text only.
_NESTED_JSON_MAX: Final = 1 << 20


def nested_json(text: str) -> Any:
    """The JSON value a string holds (an object or an array, as a tool's text content or a
    log line carries one), or ``None``."""
    if not 8 <= len(text) <= _NESTED_JSON_MAX:
        return None
    first, last = text[0], text[-1]
    if first.isspace() or last.isspace():
        text = text.strip()
        if not text:
            return None
        first, last = text[0], text[-1]
    if not ((first == "{" and last == "}") or (first == "[" and last == "]")):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


# Compiled on first use (``_compiled``), like the rules: a replay never needs them.
_PEM_BEGIN: Final = r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
_PEM_END: Final = r"-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
_PPK_LINES: Final = r"Private-Lines:[ \t]*([0-9]{1,4})[ \t]*$"
_YAML_BLOCK: Final = r"^([ \t]*)([A-Za-z0-9_.-]+)[ \t]*:[ \t]*[|>][-+0-9]{0,2}[ \t]*$"
#: How deep a JSON value in a string is read for secret places (deeper is left to the
#: text rules): a bound on the recursion, as the message's own depth limit is.
_NESTED_DEPTH: Final = 64
_NESTED_START: Final = frozenset("{[ \t\r\n")
_NESTED_END: Final = frozenset("}] \t\r\n")


def line_starts(value: str) -> tuple[str, int] | None:
    """Whether a line opens a secret the next lines hold: a PEM private key (to its END
    line), a PuTTY key's private lines (their count), a YAML block scalar under a secret
    name (its lines indented deeper than the name)."""
    if "PRIVATE" in value and _compiled(_PEM_BEGIN).search(value):
        return None if _compiled(_PEM_END).search(value) else ("pem", 0)
    if "Private-Lines:" in value:
        found = _compiled(_PPK_LINES).search(value)
        return ("lines", int(found.group(1))) if found else None
    if ">" in value or "|" in value:
        found = _compiled(_YAML_BLOCK).match(value)
        if found and is_secret_key(found.group(2)):
            return ("block", len(found.group(1)))
    return None
