"""What a secret is called: member, variable, header and option names whose values are
secret, and protocol fields that only sound like it (``progressToken``, ``maxTokens``).

Split from ``cassette.core.redaction.secret_rules`` (which re-exports all of it): names are judged
on every member of every message, shapes only on text that may hold one.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable
from functools import cache, lru_cache
from typing import Final

__all__ = [
    "SECRET_WORDS",
    "SHORT_NAMES",
    "credential_parts",
    "is_protocol_key",
    "is_secret_key",
    "is_secret_option",
    "secret_header_values",
]

# -- names ---------------------------------------------------------------------------------

_CAMEL: Final = r"(?<=[a-z0-9])(?=[A-Z])|[-_\s.]+"
#: Last words of a name that says its value is secret (``apiKey``, ``DB_PASS``, ``pwd``).
SECRET_WORDS: Final = frozenset(
    {
        "token",
        "secret",
        "password",
        "passwd",
        "passphrase",
        "passcode",
        "pass",
        "pwd",
        "pin",
        "otp",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "apikey",
        "cookie",
        "signature",
        "privatekey",
        "mnemonic",
        "pgpassword",
    }
)
#: Short last words that say a value is secret only as a whole member name (``pat``, a
#: personal access token; ``sig``, a signature): kept apart from ``SECRET_WORDS`` because
#: a raw message is scouted for them only as a quoted name (``pat"``), "path" being
#: everywhere.
SHORT_NAMES: Final = frozenset({"pat", "sig"})
#: A last word that says how a secret is written, not what it is (``client-key-data``,
#: ``private_key_pem``): the name is judged without it.
_ENCODING_WORDS: Final = frozenset({"data", "pem", "b64", "base64", "der", "hex"})
#: Words before ``tokens`` that make it a count (``inputTokens``, ``total_tokens``).
_COUNTS: Final = frozenset(
    {"input", "output", "total", "max", "min", "prompt", "completion", "cached", "reasoning"}
    | {"num", "used", "remaining", "context", "cache", "generated", "response", "request"}
)
# A name ending in "key" is a secret only after one of these (apiKey, privateKey, x-api-key).
_KEY_QUALIFIERS: Final = frozenset(
    {"api", "private", "secret", "access", "signing", "encryption", "account", "master", "client"}
    | {"session"}
)
#: Protocol fields that sound like secrets and are not: redacting them breaks the session.
_PROTOCOL_KEYS: Final = frozenset(
    {
        "progresstoken",
        "maxtokens",
        "cursor",
        "nextcursor",
        "requestid",
        "protocolversion",
    }
)


@cache
def _compiled(source: str, flags: int = 0) -> re.Pattern[str]:
    """``source`` compiled once, on first use (see the module docstring)."""
    return re.compile(source, flags)


def _folded(key: str) -> str:
    return key.lower().replace("-", "").replace("_", "")


@lru_cache(maxsize=4096)
def is_protocol_key(key: str) -> bool:
    """A JSON-RPC or MCP field whose value a redaction must never touch."""
    return _folded(key) in _PROTOCOL_KEYS


@lru_cache(maxsize=4096)
def is_secret_key(key: str) -> bool:
    """Whether a JSON member, variable or header name says its value is a secret.

    Judged by the last word, so ``maxTokens``, ``progressToken`` (protocol fields),
    ``tokenizer`` and ``passwordPolicy`` are not secrets, and ``GITHUB_TOKEN``, ``pwd``,
    ``client_secret`` and ``x-api-key`` are. Cached: a replay asks this of every member
    name of every request, and messages repeat the same few names."""
    if is_protocol_key(key):
        return False
    words = [w.lower() for w in _compiled(_CAMEL).split(key) if w]
    if len(words) > 1 and words[-1] in _ENCODING_WORDS:
        words.pop()
    if not words:
        return False
    last = words[-1]
    if last.endswith("s") and last[:-1] in SECRET_WORDS | {"key", "apikey", "privatekey"}:
        if last == "tokens" and len(words) > 1 and words[-2] in _COUNTS:
            return False  # a count of model tokens
        last = words[-1] = last[:-1]  # tokens, apiKeys, secrets, passwords, cookies
    if last in SECRET_WORDS or "".join(words[-2:]) in ("apikey", "privatekey"):
        return True
    if last in SHORT_NAMES:
        return True
    return last == "key" and len(words) > 1 and words[-2] in _KEY_QUALIFIERS


_OPTION: Final = r"^--?([A-Za-z0-9][A-Za-z0-9_-]*)$"


def is_secret_option(arg: str) -> bool:
    """``--token``, ``--api-key``, ``--secret-key``, ``--passphrase``; not ``--max-tokens``."""
    match = _compiled(_OPTION).match(arg)
    return match is not None and is_secret_key(match.group(1))


def secret_header_values(headers: Iterable[tuple[bytes, bytes]]) -> list[str]:
    """The credentials in HTTP request headers: an ``Authorization`` value and its
    credentials without the scheme, each cookie's value, any secret-named header's value."""
    out: list[str] = []
    for raw_name, raw_value in headers:
        name = bytes(raw_name).decode("latin-1").lower()
        value = bytes(raw_value).decode("latin-1").strip()
        if not value:
            continue
        if name == "cookie":
            out += [v.strip() for _, _, v in (c.partition("=") for c in value.split(";")) if v]
        elif name in ("authorization", "proxy-authorization") or is_secret_key(name):
            out += credential_parts(value)
    return out


#: ``Scheme credential``: an auth scheme (``Bot``, ``DeepL-Auth-Key``) and one credential.
_SCHEMED: Final = r"^([A-Za-z][A-Za-z0-9._-]{0,40})[ \t]+([^\s]+)$"


def credential_parts(value: str) -> list[str]:
    """``value`` and what it gives away that a server may echo alone: the credential of
    ``Scheme credential`` and, for ``Basic``, the ``user:password`` it decodes to and the
    password."""
    out = [value]
    match = _compiled(_SCHEMED).match(value.strip())
    if match is None:
        return out
    scheme, credential = match.groups()
    out.append(credential)
    if scheme.lower() == "basic":
        try:
            padded = credential + "=" * (-len(credential) % 4)
            decoded = base64.b64decode(padded, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return out
        password = decoded.partition(":")[2]
        if password:
            out += [decoded, password]
    return out
