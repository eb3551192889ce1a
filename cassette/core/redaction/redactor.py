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

What is a secret (``cassette.core.redaction.secret_rules`` has the shapes):

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
(``cassette.core.replay.wildcards``). Personal data (``pii``, off by default): e-mail addresses
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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from cassette.core.redaction.known import KnownValues, forms
from cassette.core.redaction.literal_patterns import is_literal
from cassette.core.redaction.personal import find_pii, may_hold_pii
from cassette.core.redaction.redacted import (
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
from cassette.core.redaction.schemas import (
    number_sentinel,
    resolved,
    schema_item,
    schema_property,
    string_sentinel,
)
from cassette.core.redaction.secret_names import _compiled
from cassette.core.redaction.secret_places import (
    _KEY_KIND_PLAIN,
    _KEY_KIND_PROTOCOL,
    _KEY_KIND_SCHEMA,
    _KEY_KIND_SECRET,
    _NESTED_DEPTH,
    _NESTED_END,
    _NESTED_START,
    _NUMBER_START,
    _PEM_END,
    JWK_PRIVATE,
    Path,
    _bare_json_number,
    _flat,
    _key_kind,
    _overlaps,
    _pointer,
    _replace_at,
    _secret_pair,
    _strings,
    derived,
    header_pairs,
    is_jwk,
    line_starts,
    nested_json,
)
from cassette.core.redaction.secret_rules import (
    Span,
    find_spans,
    is_protocol_key,
    is_secret_key,
    is_secret_option,
    json_may_hold_secret,
    merge,
)
from cassette.core.redaction.secret_rules import prepare as prepare_rules

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
        #: line streams inside a secret printed over several lines: its kind and a count
        self._lines: dict[str, tuple[str, int]] = {}
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
        if value[0] in _NESTED_START or value[-1] in _NESTED_END:
            nested = nested_json(value)
            if nested is not None:  # JSON in a string: its secret places, learnt first
                self._learn(nested, 0)
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
                for part in derived(rule, secret):  # "user:password": the password alone too
                    self.remember(part, rule)
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
        self._lines.clear()

    def line(self, stream: str, value: str) -> str:
        """One line of a line-by-line stream (stderr, raw output): as ``text``, and a
        secret printed over several lines loses every line of it: a PEM private key's body,
        a PuTTY key's ``Private-Lines``, a YAML block scalar under a secret name."""
        state = self._lines.get(stream)
        if state is not None:
            kind, count = state
            if kind == "pem" and not _compiled(_PEM_END).search(value):
                return self._body_line(value, "private-key")
            if kind == "lines" and count > 0:
                self._lines[stream] = (kind, count - 1)
                return self._body_line(value, "private-key")
            indent = len(value) - len(value.lstrip(" \t"))
            if kind == "block" and value.strip() and indent > count:
                return self._body_line(value, "key")
            del self._lines[stream]
        started = line_starts(value)
        if started is not None:
            self._lines[stream] = started
        return self.text(value)

    def _body_line(self, value: str, rule: str) -> str:
        body = value.strip()
        return value.replace(body, self.learn(body, rule)) if body else value

    def _learn(self, value: Any, depth: int) -> None:
        """Remember the secrets of a JSON value held in a string, by where they stand
        (names, pairs, header lists, JWKs), so that the string loses them: the text rules
        see the string, not its members."""
        if depth > _NESTED_DEPTH:
            return
        if isinstance(value, list):
            pairs = bool(value) and header_pairs(value)
            for item in value:
                if pairs and _key_kind(item[0]) == _KEY_KIND_SECRET:
                    self._learn_secret(item[1], depth + 1)
                else:
                    self._learn(item, depth + 1)
        elif isinstance(value, dict):
            pair, jwk = _secret_pair(value), is_jwk(value)
            for key, item in value.items():
                kind = _key_kind(key)
                private = (pair and key == "value") or (jwk and key in JWK_PRIVATE)
                if kind == _KEY_KIND_SECRET or private:
                    self._learn_secret(item, depth + 1)
                elif kind == _KEY_KIND_PLAIN:
                    self._learn(item, depth + 1)

    def _learn_secret(self, value: Any, depth: int) -> None:
        if isinstance(value, str) and value and not has_placeholder(value):
            self.remember(value, "key")
            for part in derived("key", value):
                self.remember(part, "key")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            self.remember(str(value), "key")
        elif isinstance(value, list | dict) and depth <= _NESTED_DEPTH:
            for item in value.values() if isinstance(value, dict) else value:
                self._learn_secret(item, depth + 1)

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
            if value and not in_schema and isinstance(value[0], list) and header_pairs(value):
                return [self._pair(v, (path, i)) for i, v in enumerate(value)]
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
        jwk = not in_schema and is_jwk(value)
        for key, item in value.items():
            kind = _KEY_KIND_SCHEMA if in_schema else _key_kind(key)
            if pair and key == "value":
                kind = _KEY_KIND_SECRET  # {"name": "sid", "value": ...}: a cookie, a header
            elif jwk and key in JWK_PRIVATE:
                kind = _KEY_KIND_SECRET  # a JSON Web Key's private members
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

    def _pair(self, pair: list[Any], path: Path) -> list[Any]:
        """``[name, value]`` in a list of pairs: the value is secret when the name is."""
        name, item = pair
        if _key_kind(name) == _KEY_KIND_SECRET:
            return [name, self._secret(item, (path, 1), None)]
        return [self.text(name), self._walk(item, (path, 1), None, {}, False)]

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
        for part in derived("key", value):  # "Basic ...", "Bot ...": the credential alone
            self.remember(part, "key")
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


_PLAIN: Final = Redactor()


def redact_text(text: str) -> str:
    """Secrets in free text, replaced (a throwaway session: for messages to people)."""
    return _PLAIN.session().text(text)


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line safe to show (a throwaway session)."""
    return _PLAIN.session().argv(argv)
