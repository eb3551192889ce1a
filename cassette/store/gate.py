"""The one redaction gate: the only place a redaction policy is built.

Theory of operation
-------------------
A committed cassette is public, and so is a CI log. Every byte written to a cassette and
every live value printed for a person passes through one policy, and this module is the
only code that builds one (``tests/unit/test_redaction_gate.py`` searches the package for
any other). The policy is made of four things, always in this order:

1. the built-in rules (``cassette.core.redaction.secret_rules``) and the value of every variable of
   the environment whose name says it is secret;
2. the project's settings, ``[tool.cassette.redact]`` of the nearest pyproject.toml
   (``redact = false`` turns redaction off);
3. the command's options (``RedactOptions``: ``--no-redact``, ``--redact-pattern``,
   ``--redact-path``, ``--redact-env``, ``--redact-pii``, or the same fields given by a
   library caller);
4. the cassette's header, when what is written joins a cassette that exists (an
   extension, ``verify --update``, a variant, ``redact -o``): its JSON Pointer paths and
   named variables are taken; its patterns are *never compiled* (nothing read from a
   cassette runs). Each pattern is recorded with a digest, and a cassette whose patterns
   the project and the command no longer give is refused in one line
   (``RuleMissing``), so an appended episode can never be redacted by fewer rules than
   the recording it joins. A header that says the personal-data rules ran (``"pii":
   true``) turns them on for what joins it, and the cassette's placeholders say where
   the joining session's numbering goes on from (``numbered_after``).

Every rule from any source is checked before anything is recorded (``check_rules``): a
JSON Pointer without its leading ``/``, an environment variable written ``$NAME``, a
pattern that does not compile, a pattern that matches only one text (a value given as a
pattern, as in ``--redact-pattern "$API_KEY"``: it would be written in the header, with a
digest that confirms a guess; ``--redact-env`` is the way), is one ``UsageError`` line
naming the source, never quoting a pattern.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from cassette.core.redaction.redacted import pattern_digest as digest
from cassette.errors import UsageError

if TYPE_CHECKING:
    from cassette.core.redaction.redactor import Redactor

__all__ = [
    "RedactOptions",
    "RuleMissing",
    "check_rules",
    "display",
    "for_target",
    "joined",
    "numbered_after",
    "pattern_problem",
    "policy",
    "scan_policy",
    "shown",
    "shown_argv",
    "with_values",
]

_OPTIONS: Final = "the command line"
_ENV_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


class RuleMissing(UsageError):
    """A cassette was redacted with a pattern the project and the command no longer give."""


def _tuple(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


@attrs.frozen
class RedactOptions:
    """The command's redaction options: on (``enabled``) or off, and rules added to the
    project's. The same value for ``record``, the record modes, ``verify``, ``variant``,
    scenarios, ``redact -o`` and the pytest plugin."""

    enabled: bool = True
    patterns: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    paths: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    env: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    #: e-mail addresses and phone numbers too (``True``); ``False`` or ``None``: as the
    #: project says (``pii`` in ``[tool.cassette.redact]``, off by default)
    pii: bool | None = None

    @classmethod
    def from_args(cls, args: Any) -> RedactOptions:
        """The options ``cassette.cli.options.redaction_options`` parsed."""
        return cls(
            enabled=not args.no_redact,
            patterns=args.redact_pattern or (),
            paths=args.redact_path or (),
            env=args.redact_env or (),
            pii=True if getattr(args, "redact_pii", False) else None,
        )


def check_rules(
    patterns: Iterable[str], paths: Iterable[str], env: Iterable[str], *, where: str
) -> None:
    """Refuse, in one line naming ``where`` they came from, rules that would make a
    cassette unreadable or a recording crash (see the module docstring)."""

    def name(kind: str) -> str:  # "--redact-path", or "FILE: [tool.cassette.redact] path"
        return f"--redact-{kind}" if where == _OPTIONS else f"{where} {kind}"

    for path in paths:
        if path and not path.startswith("/"):
            raise UsageError(
                f"{name('path')} {path!r} is not a JSON Pointer: it starts with / "
                f"(did you mean '/{path}'?)"
            )
    for env_name in env:
        if not _ENV_NAME.match(env_name):
            bare = env_name.lstrip("$").strip("{}")
            hint = f" (did you mean {bare!r}?)" if "$" in env_name else ""
            raise UsageError(f"{name('env')} {env_name!r} is not a variable name{hint}")
    for number, pattern in enumerate(patterns, 1):
        how = "--redact-env NAME" if where == _OPTIONS else 'env = ["NAME"] there'
        problem = pattern_problem(pattern, how)
        if problem is not None:  # the pattern is not shown: it may be a secret
            raise UsageError(f"{name('pattern')} number {number}: {problem}")


def pattern_problem(pattern: str, how: str = "--redact-env NAME") -> str | None:
    """Why ``pattern`` cannot be a redaction pattern, in words that never quote it:
    it does not compile, or it matches only one text, so it is a value, which the header
    would keep in the clear (``cassette.core.redaction.literal_patterns``; ``how`` says how a
    variable is named instead). ``None`` when it is a pattern."""
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"not a regular expression: {exc}"
    from cassette.core.redaction.literal_patterns import is_literal

    if is_literal(pattern):
        return (
            "matches only one text, so it is a value, not a pattern, and a pattern is "
            "written in the cassette's header: put the value in an environment variable "
            f"and name it with {how} (only the name is written)"
        )
    return None


def _strings(value: Any, key: str, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{where} {key} must be a list of strings")
    return list(value)


def _project_where(start: Path | None) -> str:
    from cassette.store.config import find_pyproject

    found = find_pyproject(start)
    return f"{found}: [tool.cassette.redact]" if found is not None else "[tool.cassette.redact]"


def policy(
    options: RedactOptions = RedactOptions(),
    *,
    settings: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    extra_env: Iterable[str] = (),
    start: Path | None = None,
) -> Redactor | None:
    """The redaction policy for one command: ``None`` when redaction is off.

    ``settings`` is ``[tool.cassette]`` (read from the pyproject.toml nearest ``start``
    when not given); ``environ`` the environment values come from (default: this process's);
    ``extra_env`` names of variables whose values are secret too (a scenario's)."""
    if settings is None:
        from cassette.store.config import load_settings

        settings = load_settings(start)
    if not options.enabled or settings.get("redact") is False:
        return None
    section = settings.get("redact")
    rules: Mapping[str, Any] = section if isinstance(section, dict) else {}
    where = "[tool.cassette.redact]"
    if rules:
        where = _project_where(start)
    project = (
        _strings(rules.get("patterns"), "patterns", where),
        _strings(rules.get("paths"), "paths", where),
        _strings(rules.get("env"), "env", where),
    )
    check_rules(*project, where=where)
    check_rules(options.patterns, options.paths, options.env, where=_OPTIONS)
    pii = _pii(rules.get("pii"), where) if options.pii is None else options.pii
    patterns = [*project[0], *options.patterns]
    paths = [*project[1], *options.paths]
    env = [*project[2], *options.env, *extra_env]
    from cassette.core.redaction.redactor import Redactor  # the rule tables: a replay has none

    return Redactor.configured(
        patterns=dict.fromkeys(patterns),
        paths=dict.fromkeys(paths),
        env=dict.fromkeys(env),
        environ=os.environ if environ is None else environ,
        pii=pii,
    )


def _pii(value: Any, where: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise UsageError(f"{where} pii must be true or false")
    return value


def joined(
    base: Redactor | None,
    header: Mapping[str, Any] | None,
    *,
    environ: Mapping[str, str] | None = None,
    start: Path | None = None,
    events: Iterable[Any] = (),
) -> Redactor | None:
    """The policy for what joins an existing cassette whose header's ``redaction`` field
    is ``header`` (an extension, ``verify --update``, a variant): ``base``, the policy
    ``policy`` built for the command (``None``: the project's, even when the command
    turned redaction off), plus the header's paths and named variables, the personal-data
    rules if the header says they ran, and never fewer patterns than the cassette was
    recorded with (``RuleMissing``); numbering its placeholders on after those of
    ``events``, the cassette's (``numbered_after``). A cassette recorded without
    redaction is joined as it is (``None``)."""
    if not header:
        return None
    from cassette.core.redaction.redacted import check_header

    problems = check_header(header)
    if problems:
        raise UsageError(f"the cassette's redaction header is malformed: {problems[0]}")
    if base is None:
        base = policy(settings=_on(None, start), environ=environ, start=start)
    assert base is not None  # the settings' off switch is ignored here
    from cassette.core.redaction.literal_patterns import without_literals

    # a value an older version kept as a pattern is redacted as the value it is, and
    # never required again (it can no longer be given)
    header, written = without_literals(header)
    base = base.with_literals(written)
    _require_patterns(header, base.patterns)
    paths = tuple(str(p) for p in header.get("paths") or () if p not in base.paths)
    names = tuple(str(n) for n in header.get("env") or () if n not in base.env_names)
    env = os.environ if environ is None else environ
    values = [v for n in names if (v := env.get(n))]
    widened = attrs.evolve(
        base,
        paths=base.paths + paths,
        env_names=base.env_names + names,
        pii=base.pii or header.get("pii") is True,
    )
    return numbered_after(widened.with_literals(values), events)


def numbered_after(redactor: Redactor | None, events: Iterable[Any]) -> Redactor | None:
    """``redactor`` numbering its placeholders on after the highest number each rule
    uses in ``events`` (a cassette's header and events): a value met now never gets a
    placeholder that an earlier recording gave another value, so no placeholder confirms
    that a value met now is one met then. ``events`` are read as values (messages, raw
    and stderr text, typed sentinels at their ``redacted`` pointers), never as bytes."""
    if redactor is None:
        return None
    texts: list[str] = []
    sentinels: list[str] = []
    for event in events:
        target = getattr(event, "target", None)  # the header's command or URL
        if isinstance(target, Mapping):
            texts.append(json.dumps(dict(target), ensure_ascii=False))
        message = getattr(event, "message", None)
        if message is not None:
            texts.append(json.dumps(message, ensure_ascii=False))
            sentinels += _at_pointers(message, getattr(event, "redacted", None) or ())
        text = getattr(event, "text", None)
        if isinstance(text, str):
            texts.append(text)
    return redactor.numbered_after(texts, sentinels)


def _at_pointers(message: Any, pointers: Iterable[str]) -> list[str]:
    found: list[str] = []
    for pointer in pointers:
        value = message
        for part in pointer.split("/")[1:]:
            key = part.replace("~1", "/").replace("~0", "~")
            if isinstance(value, dict):
                value = value.get(key)
            elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
                value = value[int(key)]
            else:
                value = None
        if isinstance(value, str):
            found.append(value)
    return found


def for_target(
    redactor: Redactor | None,
    env: Mapping[str, str] | None,
    headers: Mapping[str, str] | None = None,
) -> Redactor | None:
    """``redactor`` also redacting the secret-named variables a server is given (it may
    print them) and the credentials of the HTTP headers sent to it (``--header``: an
    upstream may echo one back)."""
    if redactor is None:
        return None
    if env:
        from cassette.core.redaction.redactor import secret_environment

        redactor = redactor.with_literals(secret_environment(env))
    if headers:
        from cassette.core.redaction.headers import header_secrets

        redactor = redactor.with_literals(header_secrets(headers))
    return redactor


def with_values(redactor: Redactor | None, values: Iterable[str]) -> Redactor | None:
    """``redactor`` also redacting these exact values (credentials the command was given,
    such as ``--header`` values) wherever they appear."""
    return None if redactor is None else redactor.with_literals(values)


def scan_policy(header: Mapping[str, Any] | None, *, start: Path | None = None) -> Redactor:
    """What ``lint`` and ``redact --scan``/``-o`` hold a cassette to: what a recording in
    this project would have removed (built-in and project rules, the header's paths, and
    the values an older header kept as patterns), independent of this machine's
    environment so a finding is the same everywhere."""
    paths: list[str] = []
    pii: bool | None = None
    written: list[str] = []
    if header:
        from cassette.core.redaction.literal_patterns import without_literals
        from cassette.core.redaction.redacted import check_header

        if not check_header(header):
            paths = [str(p) for p in header.get("paths") or ()]
            pii = True if header.get("pii") is True else None  # as it was recorded
            written = without_literals(header)[1]  # values an older header kept as patterns
    held = RedactOptions(paths=tuple(paths), pii=pii)
    try:
        found = policy(held, settings=_on(None, start), environ={}, start=start)
    except UsageError:  # a broken project setting must not hide what the built-ins find
        found = policy(held, settings={}, environ={})
    assert found is not None
    return found.with_literals(written)


def _on(settings: Mapping[str, Any] | None, start: Path | None) -> Mapping[str, Any]:
    if settings is None:
        from cassette.store.config import load_settings

        settings = load_settings(start)
    return {k: v for k, v in settings.items() if not (k == "redact" and v is False)}


def _require_patterns(header: Mapping[str, Any], patterns: Sequence[str]) -> None:
    """Every pattern the header lists must be given again now (compared by digest)."""
    have = {digest(p) for p in patterns}
    recorded = [p for p in header.get("patterns") or () if isinstance(p, str)]
    digests = header.get("digests")
    if not isinstance(digests, list) or len(digests) != len(recorded):
        digests = [digest(p) for p in recorded]  # an older header: hashing is not running
    for text, known in zip(recorded, digests, strict=True):
        if known not in have:
            raise RuleMissing(
                f"the cassette was redacted with the pattern {text!r}, which neither "
                "[tool.cassette.redact] patterns nor --redact-pattern gives now: give it "
                "again (or record anew) so what is added stays redacted"
            )


def shown(text: str, redactor: Redactor | None = None) -> str:
    """``text`` as a person may see it (a miss, a warning, a report, a log line): through
    ``redactor``, else through the project's policy (the built-in rules when the project
    turns redaction off or its settings cannot be read: a printed line is never raw). A
    sentence we wrote about a message (a ``cassette.core.words.said.Said``: a miss, a warning,
    the end of a run) has what it quotes redacted, values as values, never our words."""
    if redactor is None:
        redactor = display()
    from cassette.core.words.said import Said

    if isinstance(text, Said):
        session = redactor.session()
        return text.told(session.value, session.text)
    return redactor.session().text(text) if len(text) >= 4 else text


def display() -> Redactor:
    """The policy what a person reads passes (a miss, a warning, the error a replay miss
    sends its client): the project's, or the built-in rules when the project turns
    redaction off or its settings cannot be read. The runtime hands this function to the
    core's replayer, which cannot read project settings itself."""
    return _display(_display_key())


def shown_argv(argv: Sequence[str]) -> str:
    """A command line as a person may see it, through the project's policy."""
    return " ".join(_display(_display_key()).session().argv(list(argv)))


def _display_key() -> tuple[Any, ...]:
    from cassette.store.config import find_pyproject

    found = find_pyproject()
    stamp = None
    if found is not None:
        with contextlib.suppress(OSError):
            stat = found.stat()
            stamp = (str(found), stat.st_mtime_ns, stat.st_size)
    return (stamp, tuple(sorted(os.environ.items())))


@functools.lru_cache(maxsize=4)
def _display(key: tuple[Any, ...]) -> Redactor:
    del key  # what the policy depends on: the project file and the environment
    try:
        found = policy(settings=_on(None, None))
    except UsageError:
        found = None
    if found is None:
        found = policy(settings={})
    assert found is not None
    return found
