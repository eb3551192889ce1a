"""Keep secrets out of cassettes, without breaking the protocol or the schemas they sit in.

Theory of operation
-------------------
A ``Redactor`` is a *policy*: the user's rules (patterns, JSON Pointer paths, literal values
such as those of named environment variables). It is frozen and may be shared. Each
recorded session redacts through its own ``RedactionSession`` (``Redactor.session()``),
which remembers what it has seen, because secrets travel: a password sent as a tool
argument comes back in the tool's echo, inside JSON inside a string, in the server's
stderr. So every secret a session finds, by any rule, becomes a *known value*, redacted
wherever it appears later in that session.

What is a secret (``cassette.core.secret_rules`` has the shapes):

* a value under a secret-sounding name (``token``, ``apiKey``, ``pwd``, ``auth``...), of
  any JSON type: strings, numbers, and every string or number inside a list or object
  held there. Protocol fields (``progressToken``, ``maxTokens``, ``cursor``, ids, method
  names) are never touched, nor is anything inside a JSON Schema (``inputSchema``...),
  whose member names are property names, not secrets;
* token shapes, URL credentials, ``key=value`` and header forms anywhere in a string;
* secret command-line options and environment variables, URL credentials and query
  parameters of an upstream URL, credentials an HTTP client sent in its headers;
* the user's patterns, paths and literals.

Placeholders are irreversible. A secret becomes ``[REDACTED:<rule>:<n>]``, numbered per
rule in the order secrets first appear: the same secret keeps its placeholder throughout
a recording, the same session recorded again gets the same bytes, and nothing in the file
(no salt, no key, no digest) lets anyone confirm a guess: a number tells the order values
were met in, never what they were. A session appended to a cassette numbers on after the
highest number it holds (``Redactor.numbered_after``). Replays need not reproduce a
placeholder: a redacted position in a recorded request matches any live value
(``cassette.core.wildcards``). Personal data (``pii``, off by default): e-mail addresses
and phone numbers, whose placeholders keep their kind (``redacted-1@example.invalid``).

Schema-safe: where a string would break the recorded ``inputSchema``/``outputSchema``, or
where the secret is not a string, the value is replaced by a *typed sentinel* (a number
stays a number, the schema's minimum or 0; an enum value becomes the enum's first member)
and the position is listed in the event's ``redacted`` pointers, which matching treats as
wildcards too. Booleans and ``null`` are left as they are: they hold no credential.

Everything here is pure: values in, values out (a session's memory is its only state).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Final

import attrs

from cassette.core.known import KnownValues, forms
from cassette.core.literal_patterns import is_literal
from cassette.core.personal import find_pii, may_hold_pii
from cassette.core.redacted import (
    ENV_NAME,
    ENVELOPE,
    PLACEHOLDER,
    PLACEHOLDER_PATTERN,
    check_header,
    has_placeholder,
    highest_numbers,
    is_placeholder,
    make_placeholder,
    pattern_digest,
)
from cassette.core.schemas import (
    number_sentinel,
    resolved,
    schema_item,
    schema_property,
    string_sentinel,
)
from cassette.core.secret_names import _compiled
from cassette.core.secret_rules import (
    Span,
    find_spans,
    is_protocol_key,
    is_secret_key,
    is_secret_option,
    json_may_hold_secret,
    merge,
)
from cassette.core.secret_rules import prepare as prepare_rules

__all__ = [
    "PLACEHOLDER",
    "PLACEHOLDER_PATTERN",
    "RedactionSession",
    "Redactor",
    "check_header",
    "has_placeholder",
    "is_placeholder",
    "is_secret_key",
    "redact_argv",
    "redact_text",
    "secret_environment",
]

_SCHEMA_KEYS: Final = frozenset({"inputSchema", "outputSchema", "requestedSchema"})
# Values that are never worth remembering as secrets: they occur everywhere.
_COMMON: Final = frozenset(
    {"true", "false", "null", "none", "undefined", "required", "optional", "enabled"}
    | {"disabled", "redacted", "password", "secret", "token", "string", "bearer", "basic"}
    | {"example", "changeme", "xxxx", "****", "********"}
    # what examples, test set-ups and fetch() options hold where a credential would be
    | {"test", "testing", "postgres", "mysql", "redis", "admin", "root", "guest", "user"}
    | {"localhost", "default", "dummy", "fake", "local", "include", "omit", "same-origin"}
    | {"secret123", "password123", "mysecret", "mypassword", "letmein", "sample"}
)
_COMMON_LONGEST: Final = max(map(len, _COMMON))
#: A value made of letters only and shorter than this is a word, not a credential
_WORD_LIKE: Final = 8
# Rules whose finds are certain enough to be remembered at any length of 4 or more.
_UNSURE: Final = frozenset({"assignment"})
_MIN_KNOWN: Final = 4
_NOT_SECRET_ENV: Final = frozenset({"PWD", "OLDPWD"})
_LONG_TEXT: Final = 4096
_KNOWN: Final = "known"  # the rule of a span found as a known value


@attrs.frozen
class Redactor:
    """The redaction policy: the built-in rules plus the user's (see the module docstring).

    ``value``, ``text`` and ``argv`` redact through one session owned by this object (a
    convenience for one-off use); a recording makes its own with ``session()``.
    """

    salt: str = ""  # accepted for compatibility; placeholders no longer use a salt
    patterns: tuple[str, ...] = ()  # extra regular expressions (the whole match is secret)
    paths: tuple[str, ...] = ()  # JSON Pointers into messages whose values are secret
    literals: tuple[str, ...] = ()  # exact secret values (named env variables, headers)
    env_names: tuple[str, ...] = ()  # the variables ``literals`` came from (kept in the header)
    pii: bool = False  # also e-mail addresses and phone numbers (``personal.find_pii``)
    #: the highest placeholder number per rule already in the cassette a session joins
    numbering: tuple[tuple[str, int], ...] = attrs.field(default=(), eq=False)
    _compiled: tuple[re.Pattern[str], ...] = attrs.field(init=False, default=(), eq=False)
    _own: list[RedactionSession] = attrs.field(init=False, factory=list, eq=False)

    def __attrs_post_init__(self) -> None:
        compiled = tuple(re.compile(p) for p in self.patterns)
        object.__setattr__(self, "_compiled", compiled)

    def session(self) -> RedactionSession:
        """A fresh session: its own placeholders and its own memory of secrets."""
        session = RedactionSession(self, dict(self.numbering))
        for literal in self.literals:
            session.remember(literal, "env")
        return session

    def _session(self) -> RedactionSession:
        if not self._own:
            self._own.append(self.session())
        return self._own[0]

    def with_literals(self, values: Iterable[str]) -> Redactor:
        """The same policy, also redacting these exact values."""
        extra = tuple(v for v in values if v and v not in self.literals)
        return attrs.evolve(self, literals=self.literals + extra) if extra else self

    def numbered_after(self, strings: Iterable[str], sentinels: Iterable[str] = ()) -> Redactor:
        """The same policy, numbering on after the highest number each rule uses in
        ``strings`` (the cassette joined): a value met now never gets a placeholder an
        earlier recording gave, so none confirms it equals an earlier one."""
        found = dict(self.numbering)
        for rule, number in highest_numbers(strings, sentinels).items():
            found[rule] = max(found.get(rule, 0), number)
        return attrs.evolve(self, numbering=tuple(sorted(found.items())))

    def value(self, value: Any) -> Any:
        """A JSON value with its secrets replaced (a new value; the input is not changed)."""
        return self._session().value(value)

    def text(self, value: str) -> str:
        """Secrets inside free text."""
        return self._session().text(value)

    def argv(self, argv: Sequence[str]) -> list[str]:
        """A command line safe to store."""
        return self._session().argv(argv)

    def describe(self) -> dict[str, Any]:
        """What goes in the cassette header: that placeholders are numbered, whether the
        personal-data rules ran, and the user's rules as documentation (never literals,
        never a salt)."""
        out: dict[str, Any] = {"placeholders": "numbered"}
        if self.pii:
            out["pii"] = True
        # never a value given as a pattern, nor its digest (the gate refuses one; a policy
        # built by hand may hold one): the header would keep the secret in the clear
        patterns = [p for p in self.patterns if not is_literal(p)]
        if patterns:
            out["patterns"] = patterns
            # recognised later by digest, so an extension never needs to run the text
            out["digests"] = [pattern_digest(p) for p in patterns]
        if self.paths:
            out["paths"] = list(self.paths)
        if self.env_names:
            out["env"] = list(self.env_names)
        return out

    def prepare(self) -> None:
        """Do the rules' one-time set-up now (``secret_rules.prepare``), at a moment the
        caller chooses, instead of during its first messages."""
        prepare_rules()

    @classmethod
    def configured(
        cls,
        *,
        patterns: Iterable[str] = (),
        paths: Iterable[str] = (),
        env: Iterable[str] = (),
        environ: Mapping[str, str] | None = None,
        salt: str | None = None,
        pii: bool = False,
    ) -> Redactor:
        """A redactor with the user's rules. ``env`` names variables whose values are
        secret; so is every variable of ``environ`` with a secret-sounding name; ``pii``
        adds e-mail addresses and phone numbers."""
        names = tuple(env)
        environ = environ or {}
        values = [v for n in names if (v := environ.get(n))]
        values += secret_environment(environ)
        return cls(
            salt=salt or "",
            patterns=tuple(patterns),
            paths=tuple(paths),
            literals=tuple(dict.fromkeys(values)),
            env_names=names,
            pii=pii,
        )

    @classmethod
    def from_header(cls, info: Mapping[str, Any], literals: Iterable[str] = ()) -> Redactor:
        """The policy to extend a cassette with: its paths and named variables (values from
        here). Its patterns are not taken: nothing read from a cassette is compiled."""
        problems = check_header(info)
        paths = () if problems else tuple(str(p) for p in info.get("paths", ()))
        env = () if problems else tuple(str(n) for n in info.get("env", ()))
        pii = not problems and info.get("pii") is True
        return cls(paths=paths, literals=tuple(literals), env_names=env, pii=pii)


def secret_environment(environ: Mapping[str, str]) -> list[str]:
    """Values of variables whose names say they are secret (``GITHUB_TOKEN``, ``DB_PASS``);
    not the shell's working directories (``PWD``), whose name only looks like one."""
    return [
        v
        for n, v in environ.items()
        if n not in _NOT_SECRET_ENV and is_secret_key(n) and len(v) >= _MIN_KNOWN
    ]


class RedactionSession:
    """One session's redaction: its placeholders and the secrets it has met."""

    def __init__(self, policy: Redactor, numbers: dict[str, int] | None = None) -> None:
        self.policy = policy
        self._tokens: dict[str, str] = {}  # secret -> its placeholder
        self._rules: dict[str, str] = {}  # secret -> the rule that found it first
        self._numbers: dict[str, int] = numbers or {}  # rule -> its last placeholder's number
        self._known = KnownValues()  # a secret as it may appear in text -> the secret
        self._pointers: list[str] = []
        self._pem: set[str] = set()  # line streams inside a PEM private key
        self._epoch = 0  # how many secrets have been learnt: a string redacted since is whole
        # the texts a message's walk redacted, with the epoch each was redacted at
        self._done: list[tuple[str, int]] | None = None

    # -- memory ------------------------------------------------------------------------

    def placeholder(self, rule: str, secret: str) -> str:
        """The placeholder of ``secret``, the same every time in this session; the first
        time, the next number of the rule that found it. Numbered as written, so in order
        of appearance, never of learning (the environment's values, learnt first, mostly
        never appear)."""
        found = self._tokens.get(secret)
        if found is None:
            rule = self._rules.get(secret, rule)
            number = self._numbers[rule] = self._numbers.get(rule, 0) + 1
            found = self._tokens[secret] = make_placeholder(rule, number)
        return found

    def learn(self, secret: str, rule: str, *, sure: bool = True) -> str:
        """Remember ``secret`` (redacted wherever it appears from now on); its placeholder,
        for a caller about to write it."""
        self.remember(secret, rule, sure=sure)
        return self.placeholder(rule, secret)

    def remember(self, secret: str, rule: str, *, sure: bool = True) -> None:
        """Remember ``secret``, found by ``rule``, to redact wherever it appears from now
        on (numbered when it first does)."""
        self._rules.setdefault(secret, rule)
        if secret not in self._known.holders and _worth_knowing(secret, sure):
            self._epoch += 1
            self._known.add_all(forms(secret), secret)  # each form leads back to the secret

    @property
    def known(self) -> int:
        """How many secrets this session redacts wherever they appear."""
        return len(self._rules)

    # -- text --------------------------------------------------------------------------

    def text(self, value: str) -> str:
        """Every secret in free text replaced; the text around it kept."""
        out = self._text(value)
        if self._done is not None:
            self._done.append((out, self._epoch))
        return out

    def _text(self, value: str) -> str:
        if len(value) < _MIN_KNOWN:
            return value
        spans = find_spans(value)
        for pattern in self.policy._compiled:
            spans += [
                Span(*m.span(), "user") for m in pattern.finditer(value) if m.end() > m.start()
            ]
        if self.policy.pii:
            spans += find_pii(value)
        if not spans and not self._known:
            return value
        held = (
            [m.span() for m in PLACEHOLDER_PATTERN.finditer(value)] if "REDACTED" in value else []
        )
        if held:
            spans = [s for s in spans if not _overlaps(s, held)]
        holders = self._known.holders
        for start, end, rule in spans:  # learnt first, so another mention here goes too
            secret = value[start:end]
            if secret not in holders:
                self.remember(secret, rule, sure=rule not in _UNSURE)
            if rule == "url-credentials":
                password = secret.partition(":")[2]
                if password:
                    self.remember(password, rule)  # "user:password": the password alone too
        if holders:
            found = self._known_spans(value)
            spans += [s for s in found if not _overlaps(s, held)] if held else found
        return self._replace(value, merge(spans)) if spans else value

    def _replace(self, value: str, spans: list[Span]) -> str:
        parts: list[str] = []
        last = 0
        holders, tokens = self._known.holders, self._tokens
        for start, end, rule in spans:
            written = value[start:end]
            secret = holders.get(written) or written
            holder = tokens.get(secret) or self.placeholder(rule, secret)
            if rule == "url-credentials":
                holder = holder.replace("[", "%5B").replace("]", "%5D")
            elif written[0] in _NUMBER_START and _bare_json_number(value, start, end):
                holder = f'"{holder}"'  # JSON text stays JSON: {"pin": "[REDACTED:...]"}
            parts += (value[last:start], holder)
            last = end
        parts.append(value[last:])
        return "".join(parts)

    def _known_text(self, value: str) -> str:
        """``value`` with the known values in it replaced (and nothing else looked for)."""
        if len(value) < _MIN_KNOWN:
            return value
        spans = self._known_spans(value)
        if not spans:
            return value
        if "REDACTED" in value:
            held = [m.span() for m in PLACEHOLDER_PATTERN.finditer(value)]
            spans = [s for s in spans if not _overlaps(s, held)]
        return self._replace(value, merge(spans)) if spans else value

    def _known_spans(self, value: str) -> list[Span]:
        new = tuple.__new__  # a Span without the Python-level __new__ of a NamedTuple
        return [new(Span, (start, end, _KNOWN)) for start, end in self._known.spans(value)]

    def restart_lines(self) -> None:
        """Line streams start afresh (a new read of the same session's lines)."""
        self._pem.clear()

    def line(self, stream: str, value: str) -> str:
        """One line of a line-by-line stream (stderr, raw output): as ``text``, and a PEM
        private key printed over several lines loses every line of its body."""
        inside = stream in self._pem
        if _compiled(_PEM_BEGIN).search(value) and not _compiled(_PEM_END).search(value):
            self._pem.add(stream)
            return self.text(value)
        if not inside:
            return self.text(value)
        if _compiled(_PEM_END).search(value):
            self._pem.discard(stream)
            return self.text(value)
        body = value.strip()
        return value.replace(body, self.learn(body, "private-key")) if body else value

    # -- JSON --------------------------------------------------------------------------

    def value(self, value: Any, schemas: Mapping[tuple[str, ...], Any] | None = None) -> Any:
        """A JSON value with its secrets replaced; ``schemas`` maps paths inside it to the
        JSON Schema that governs them (``("params", "arguments")`` to a tool's input)."""
        self._pointers = []
        out = self._walk(value, None, None, schemas or {}, False)
        for path in self.policy.paths:
            out = self._at_path(out, path)
        return out

    def message(
        self,
        message: dict[str, Any],
        schemas: Mapping[tuple[str, ...], Any] | None = None,
        raw: str | None = None,
    ) -> tuple[dict[str, Any], tuple[str, ...]]:
        """A JSON-RPC message redacted, and the pointers of its typed sentinels.

        ``raw``, the message's own JSON text when the caller has it, lets most messages
        skip the walk: when no rule can fire on it and no known value is in it, the
        message is returned as it is (see ``json_may_hold_secret``)."""
        if raw is not None and self._clean(raw):
            return message, ()
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        epoch = self._epoch
        self._done = []
        try:
            out: dict[str, Any] = self.value(message, schemas)
            done = self._done
        finally:
            self._done = None
        if self._epoch != epoch:
            # a secret met late in the message (its structured content) is redacted where
            # it appeared earlier too (the same value in its text content); a text
            # redacted after the last secret was learnt holds none already
            whole = {id(text) for text, at in done if at == self._epoch}
            out = _strings(out, lambda v: v if id(v) in whole else self._known_text(v))
        if isinstance(name, str) and isinstance(out.get("params"), dict):
            out["params"]["name"] = name  # a tool or prompt name is how a request is matched
        return out, tuple(self._pointers)

    def _clean(self, raw: str) -> bool:
        if self.policy.paths or self.policy._compiled or json_may_hold_secret(raw):
            return False
        if self.policy.pii and may_hold_pii(raw):
            return False
        return not self._known.found_in(raw)

    def _walk(
        self,
        value: Any,
        path: Path,
        schema: Any,
        schemas: Mapping[tuple[str, ...], Any],
        in_schema: bool,
    ) -> Any:
        # Runs on every member of every message recorded or replayed: one cached verdict
        # per member name, a path that is a linked pair (flattened only for a pointer),
        # and nothing built for a plain string member.
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [
                self._walk(v, (path, i), schema_item(schema, i), schemas, in_schema)
                for i, v in enumerate(value)
            ]
        if not isinstance(value, dict):
            return value
        return self._object(value, path, schema, schemas, in_schema)

    def _object(
        self,
        value: dict[str, Any],
        path: Path,
        schema: Any,
        schemas: Mapping[tuple[str, ...], Any],
        in_schema: bool,
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        binary = value.get("type") in ("image", "audio")
        top = path is None
        pair = not in_schema and _secret_pair(value)
        for key, item in value.items():
            kind = _KEY_KIND_SCHEMA if in_schema else _key_kind(key)
            if pair and key == "value":
                kind = _KEY_KIND_SECRET  # {"name": "sid", "value": ...}: a cookie, a header
            if (top and key in ENVELOPE) or (binary and key == "data") or key == "blob":
                out[key] = item  # a message's own fields; base64 bytes hold no text secrets
            elif kind == _KEY_KIND_PLAIN and isinstance(item, str):
                out[key] = self.text(item)
            elif kind == _KEY_KIND_PROTOCOL:
                out[key] = item  # progressToken, cursor, maxTokens...
            elif kind == _KEY_KIND_SCHEMA:
                out[key] = self._walk(item, None, None, {}, True)
            else:
                sub = (path, key)
                child = schema_property(schema, key) if schema is not None else None
                if schemas:
                    child = schemas.get(_flat(sub), child)
                if kind == _KEY_KIND_SECRET:
                    out[key] = self._secret(item, sub, child)
                else:
                    out[key] = self._walk(item, sub, child, schemas, False)
        return out

    def _secret(self, value: Any, path: Path, schema: Any) -> Any:
        """A value held under a secret name, whatever its type, kept valid for ``schema``."""
        schema = resolved(schema)
        if isinstance(value, dict):
            return {
                k: v
                if is_protocol_key(k)
                else self._secret(v, (path, k), schema_property(schema, k))
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self._secret(v, (path, i), schema_item(schema, i)) for i, v in enumerate(value)]
        if isinstance(value, int | float) and not isinstance(value, bool):
            self.remember(str(value), "key")
            self._pointers.append(_pointer(path))
            return number_sentinel(value, schema)
        if isinstance(value, str) and value and not is_placeholder(value):
            return self._secret_string(value, path, schema)
        return value  # true, false, null and "" hold no credential

    def _secret_string(self, value: str, path: Path, schema: Any) -> str:
        members = schema.get("enum") if isinstance(schema, dict) else None
        if isinstance(members, list) and value in members:
            self._pointers.append(_pointer(path))  # public by definition: not remembered
            return string_sentinel(value, schema)
        holder = self.learn(value, "key")
        fixed = string_sentinel(holder, schema)
        if fixed != holder:
            self._pointers.append(_pointer(path))
        return fixed

    def _at_path(self, value: Any, pointer: str) -> Any:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
        path: Path = None
        for part in parts:
            path = (path, part)
        return _replace_at(value, parts, lambda v: self._secret(v, path, None))

    # -- command lines -----------------------------------------------------------------

    def argv(self, argv: Sequence[str]) -> list[str]:
        """A command line safe to store: secret options, ``NAME=value`` assignments with a
        secret name, and secrets inside any argument."""
        out: list[str] = []
        hide_next = False
        for arg in argv:
            if has_placeholder(arg):
                out.append(arg)  # redacted already (a rewrite of a redacted cassette)
                hide_next = False
                continue
            if hide_next:
                out.append(self.learn(arg, "argument"))
                hide_next = False
                continue
            name, eq, secret = arg.partition("=")
            if eq and secret and is_secret_option(name):
                out.append(f"{name}={self.learn(secret, 'argument')}")
            elif is_secret_option(arg):
                out.append(arg)
                hide_next = True
            elif eq and secret and _compiled(ENV_NAME).match(name) and is_secret_key(name):
                out.append(f"{name}={self.learn(secret, 'argument')}")
            else:
                out.append(self.text(arg))
        return out


# Compiled on first use (``_compiled``), like the rules: a replay never needs them.
_PEM_BEGIN: Final = r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
_PEM_END: Final = r"-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"


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


def _worth_knowing(secret: str, sure: bool) -> bool:
    """Whether a secret found in one place is redacted wherever it appears later. Not when
    it is too short or too common to be a credential (the rule: fewer than 4 characters;
    a common word or test value, ``_COMMON``; letters only and fewer than 8): such a value
    (``OPENAI_API_KEY=test``, ``credentials: "include"``) is redacted where it was found
    but not hunted for elsewhere, where it is an ordinary word (``postgresql://``)."""
    if len(secret) < _MIN_KNOWN or has_placeholder(secret):
        return False
    if len(secret) <= _COMMON_LONGEST and secret.lower() in _COMMON:
        return False  # (a longer value is no common one: not lower-cased to look)
    if secret.isalpha() and len(secret) < _WORD_LIKE:
        return False
    if sure:
        return True
    # found in free text (``password=...``): remembered only if it cannot be a plain word
    return len(secret) >= 6 and not (secret.isalpha() and secret.islower())


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


_PLAIN: Final = Redactor()


def redact_text(text: str) -> str:
    """Secrets in free text, replaced (a throwaway session: for messages to people)."""
    return _PLAIN.session().text(text)


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line safe to show (a throwaway session)."""
    return _PLAIN.session().argv(argv)
