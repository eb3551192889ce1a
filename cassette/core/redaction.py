"""Keep secrets out of cassettes, without breaking the protocol they sit in.

Theory of operation
-------------------
A cassette is meant to be committed, so what the recorder writes passes through a
``Redactor`` first, and so does every request a replay receives before it is matched (a
test that sends a live token must still match its redacted recording). What counts as a
secret:

* **token shapes** anywhere inside a string: bearer tokens, JWTs, URL credentials of any
  scheme, GitHub, OpenAI/Anthropic-style ``sk-``, Slack, AWS access key ids, Google API
  keys; only the matching substring is replaced, so a secret inside a tool's text output
  goes and the text around it stays;
* the **value under a secret-sounding key** (``token``, ``apiKey``, ``client_secret``,
  ``password``, ``authorization``, ``credentials``...), when that value is a string or a
  number. A key is judged by its last word, so ``maxTokens`` and ``progressToken`` (protocol
  fields) and a JSON Schema *property named* like a secret (whose value is a schema object)
  are left alone: redacting them produced cassettes the official client rejected;
* whatever the user adds: regular expressions, JSON Pointer paths, and the values of named
  environment variables.

A secret becomes ``[REDACTED:<rule>:<digest>]``. The digest is an HMAC of the secret keyed
with a random salt kept in the cassette's header: the same secret always gets the same
placeholder within a cassette (so matching works), yet a placeholder cannot be checked
against guessed secrets without the file. Everything here is pure: values in, values out.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Final

import attrs

__all__ = [
    "PLACEHOLDER",
    "Redactor",
    "new_salt",
    "redact_argv",
    "redact_text",
]

PLACEHOLDER: Final = "[REDACTED]"

# Words that name secrets (not a secret, whatever a linter thinks).
_SECRET_WORD: Final = (
    r"(?:token|secret|password|passwd|api[-_]?key|auth|authorization|credentials?)"  # noqa: S105
)
# --token, --api-key, --github-token, --client-secret; not --max-tokens or --tokenizer.
_SECRET_OPTION: Final = re.compile(rf"^--?(?:[a-z0-9]+[-_])*{_SECRET_WORD}$", re.IGNORECASE)
# GITHUB_TOKEN=..., API_KEY=..., password=...
_SECRET_ASSIGNMENT: Final = re.compile(
    rf"^((?:[A-Za-z0-9]+[-_])*{_SECRET_WORD})=(.+)$", re.IGNORECASE
)
_TOKEN_SHAPES: Final = (
    ("bearer", r"(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,}"),
    ("jwt", r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"),
    ("github", r"(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    ("sk-key", r"sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{16,}"),
    ("slack", r"xox[abposr]-[A-Za-z0-9-]{10,}"),
    ("aws-key", r"(?:AKIA|ASIA)[A-Z0-9]{16}"),
    ("google-key", r"AIza[A-Za-z0-9_-]{35}"),
)
_SHAPES: Final = re.compile("|".join(f"(?P<{n.replace('-', '_')}>{p})" for n, p in _TOKEN_SHAPES))
# scheme://user:password@host -> scheme://[REDACTED]@host (any scheme)
_URL_CREDENTIALS: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)([^/@\s:]+(?::[^/@\s]*)?)@")
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[-_\s.]+")
_SECRET_LAST_WORDS: Final = frozenset(
    {
        "token",
        "secret",
        "password",
        "passwd",
        "passphrase",
        "authorization",
        "credential",
        "credentials",
        "apikey",
        "cookie",
    }
)
# A key ending in "key" is a secret only after one of these (apiKey, privateKey, x-api-key).
_KEY_QUALIFIERS: Final = frozenset({"api", "private", "secret", "access", "signing", "encryption"})
# Protocol fields that sound like secrets and are not: redacting them breaks the session.
_PROTOCOL_KEYS: Final = frozenset({"progresstoken", "maxtokens", "cursor", "nextcursor"})


def new_salt() -> str:
    """A fresh random salt for one cassette's placeholders."""
    return secrets.token_hex(16)


def _words(key: str) -> list[str]:
    return [w.lower() for w in _CAMEL.split(key) if w]


@lru_cache(maxsize=4096)
def is_secret_key(key: str) -> bool:
    """Whether a JSON member or variable name says its value is a secret.

    Cached: a replay asks this of every member name of every request it redacts, and
    messages repeat the same few names (``name``, ``arguments``, ...)."""
    if key.lower().replace("-", "").replace("_", "") in _PROTOCOL_KEYS:
        return False
    words = _words(key)
    if not words:
        return False
    last = words[-1]
    if last in _SECRET_LAST_WORDS or "".join(words[-2:]) == "apikey":
        return True
    return last == "key" and len(words) > 1 and words[-2] in _KEY_QUALIFIERS


@attrs.frozen
class Redactor:
    """Replaces secrets in values; the same secret always gets the same placeholder."""

    salt: str = attrs.field(factory=new_salt)
    patterns: tuple[str, ...] = ()  # extra regular expressions (the whole match is secret)
    paths: tuple[str, ...] = ()  # JSON Pointers into messages whose values are secret
    literals: tuple[str, ...] = ()  # exact secret values (e.g. from named env variables)
    env_names: tuple[str, ...] = ()  # the variables ``literals`` came from (kept in the header)
    _extra: re.Pattern[str] | None = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        parts = [re.escape(s) for s in sorted(self.literals, key=len, reverse=True) if len(s) >= 4]
        parts += [f"(?:{p})" for p in self.patterns]
        object.__setattr__(self, "_extra", re.compile("|".join(parts)) if parts else None)

    # -- placeholders -----------------------------------------------------------------

    def placeholder(self, rule: str, secret: str) -> str:
        raw = secret.encode("utf-8", "surrogatepass")
        digest = hmac.new(self.salt.encode(), raw, hashlib.sha256)
        return f"[REDACTED:{rule}:{digest.hexdigest()[:12]}]"

    # -- text -------------------------------------------------------------------------

    def text(self, value: str) -> str:
        """Token shapes, URL credentials and user patterns inside free text."""
        if "[REDACTED:" in value and not _SHAPES.search(value):
            return value  # already redacted (idempotence: replay re-redacts its own output)
        # The substitutions run only where a match is possible: most strings hold no
        # secret, and a search (or a substring test) costs less than a sub that finds none.
        if "://" in value and "@" in value:
            value = _URL_CREDENTIALS.sub(
                lambda m: f"{m.group(1)}{self.placeholder('url-credentials', m.group(2))}@", value
            )
        if _SHAPES.search(value) is not None:
            value = _SHAPES.sub(
                lambda m: self.placeholder(str(m.lastgroup).replace("_", "-"), m.group(0)), value
            )
        if self._extra is not None:
            value = self._extra.sub(lambda m: self.placeholder("user", m.group(0)), value)
        return value

    # -- JSON values ------------------------------------------------------------------

    def value(self, value: Any) -> Any:
        """A JSON value with its secrets replaced (a new value; the input is not changed)."""
        redacted = self._walk(value, "")
        for path in self.paths:
            redacted = self._at_path(redacted, path)
        return redacted

    def _walk(self, value: Any, key: str) -> Any:
        if isinstance(value, str):
            if key and is_secret_key(key) and not value.startswith("[REDACTED:"):
                return self.placeholder("key", value) if value else value
            return self.text(value)
        if isinstance(value, dict):
            return {k: self._walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self._walk(v, "") for v in value]
        is_number = isinstance(value, int | float) and not isinstance(value, bool)
        if key and is_number and is_secret_key(key):
            return self.placeholder("key", str(value))
        return value

    def _at_path(self, value: Any, path: str) -> Any:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]
        return _replace_at(value, parts, lambda v: self.placeholder("path", _as_text(v)))

    # -- command lines ----------------------------------------------------------------

    def argv(self, argv: Sequence[str]) -> list[str]:
        """A command line safe to store: secret option values and token shapes removed."""
        out: list[str] = []
        hide_next = False
        for arg in argv:
            if hide_next:
                out.append(self.placeholder("argument", arg))
                hide_next = False
                continue
            name, eq, secret = arg.partition("=")
            if eq and _SECRET_OPTION.match(name):
                out.append(f"{name}={self.placeholder('argument', secret)}")
            elif _SECRET_OPTION.match(arg):
                out.append(arg)
                hide_next = True
            elif (match := _SECRET_ASSIGNMENT.match(arg)) and not arg.startswith("-"):
                out.append(f"{match.group(1)}={self.placeholder('argument', match.group(2))}")
            else:
                out.append(self.text(arg))
        return out

    def describe(self) -> dict[str, Any]:
        """What goes in the cassette header: the salt and the user's rules (not literals)."""
        out: dict[str, Any] = {"salt": self.salt}
        if self.patterns:
            out["patterns"] = list(self.patterns)
        if self.paths:
            out["paths"] = list(self.paths)
        if self.env_names:
            out["env"] = list(self.env_names)
        return out

    @classmethod
    def configured(
        cls,
        *,
        patterns: Iterable[str] = (),
        paths: Iterable[str] = (),
        env: Iterable[str] = (),
        environ: Mapping[str, str] | None = None,
        salt: str | None = None,
    ) -> Redactor:
        """A redactor with the user's rules; ``env`` names variables whose values are secret."""
        names = tuple(env)
        values = tuple(v for n in names if (v := (environ or {}).get(n)))
        return cls(
            salt=salt or new_salt(),
            patterns=tuple(patterns),
            paths=tuple(paths),
            literals=values,
            env_names=names,
        )

    @classmethod
    def from_header(cls, info: Mapping[str, Any], literals: Iterable[str] = ()) -> Redactor:
        """The redactor a cassette was written with, to redact live requests the same way."""
        return cls(
            salt=str(info.get("salt") or ""),
            patterns=tuple(str(p) for p in info.get("patterns") or ()),
            paths=tuple(str(p) for p in info.get("paths") or ()),
            literals=tuple(literals),
            env_names=tuple(str(n) for n in info.get("env") or ()),
        )


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


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


_PLAIN: Final = Redactor(salt="")


def redact_text(text: str) -> str:
    """Token shapes and URL credentials in free text, with unsalted placeholders."""
    return _PLAIN.text(text)


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line safe to store (unsalted placeholders)."""
    return _PLAIN.argv(argv)
