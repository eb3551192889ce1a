"""The values a scenarios file is read into: steps, answers, scenarios, the whole file.

Plain frozen values (``cassette.client.scenario_reader`` builds them from the file and
checks everything on the way; ``cassette.client.scenarios`` is where callers import them
from). ``${VAR}`` in the target is kept as written and expanded only when a run asks for
the target (``ScenarioFile.server``), so listing a file's scenarios needs no secrets.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from cassette.client.target import ServerTarget
from cassette.core.wire.jsonrpc import JSONObject
from cassette.errors import ScenarioError

__all__ = ["FORMAT", "LISTS", "VERBS", "Answers", "Scenario", "ScenarioFile", "Step"]

#: The newest scenarios format this code reads.
FORMAT: Final = 1
LISTS: Final = {
    "tools": ("tools/list", "tools"),
    "prompts": ("prompts/list", "prompts"),
    "resources": ("resources/list", "resources"),
    "resource-templates": ("resources/templates/list", "resourceTemplates"),
}
VERBS: Final = (
    "list",
    "call",
    "prompt",
    "read",
    "complete",
    "log-level",
    "subscribe",
    "unsubscribe",
    "method",
)
_VAR: Final = re.compile(r"\$(\$|\{([A-Za-z_][A-Za-z0-9_]*)\})")


@attrs.frozen
class Step:
    """One step: the MCP method it sends and its params (``list`` sends one request per
    page), and what it expects (``expect_error``: ``None`` a result, ``True`` any refusal,
    a number that JSON-RPC error code)."""

    index: int  # 1-based, within its scenario
    verb: str
    method: str
    params: JSONObject | None
    line: int
    expect_error: bool | int | None = None
    timeout: float | None = None
    list_key: str | None = None  # the result member a list step pages through

    def describe(self) -> str:
        """``tools/call forecast``: the method and what it is about, for a person."""
        params = self.params or {}
        subject = params.get("name") or params.get("uri")
        return f"{self.method} {subject}" if isinstance(subject, str) else self.method


@attrs.frozen
class Answers:
    """What the client answers when the server asks: a result per method, or (``errors``,
    which a scenarios file cannot give, but a recorded client may have) an error."""

    results: Mapping[str, JSONObject] = attrs.field(factory=dict)
    errors: Mapping[str, JSONObject] = attrs.field(factory=dict)

    def capabilities(self) -> dict[str, Any]:
        """The client capabilities these answers back: a server only asks (and some only
        offer the tools that ask) what the client declared."""
        caps: dict[str, Any] = {}
        for method, capability in (
            ("sampling/createMessage", "sampling"),
            ("elicitation/create", "elicitation"),
            ("roots/list", "roots"),
        ):
            if method in self.results:
                caps[capability] = {}
        return caps

    def over(self, base: Answers) -> Answers:
        """These answers, falling back to ``base`` for methods they do not name."""
        return Answers({**base.results, **self.results}, {**base.errors, **self.errors})


@attrs.frozen
class Scenario:
    name: str
    steps: tuple[Step, ...]
    answers: Answers
    line: int
    description: str = ""


@attrs.frozen
class ScenarioFile:
    """A whole scenarios file, checked."""

    path: Path
    target: Mapping[str, Any]  # as written; ``server`` expands it
    era: str  # auto, legacy or modern
    legacy_version: str
    client_info: Mapping[str, Any]
    capabilities: Mapping[str, Any] | None  # None: derived from the answers
    answers: Answers
    output: Path
    timeout: float
    scenarios: tuple[Scenario, ...]
    target_line: int = 1

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.scenarios)

    def scenario(self, name: str) -> Scenario:
        for scenario in self.scenarios:
            if scenario.name == name:
                return scenario
        raise ScenarioError(
            f"{self.path}: no scenario named {name!r} (it has: {', '.join(self.names)})"
        )

    def cassette_path(self, name: str, output: str | os.PathLike[str] | None = None) -> Path:
        """Where the cassette of scenario ``name`` goes: ``<output>/<name>.jsonl``."""
        folder = self.output if output is None else Path(output)
        return folder / f"{name}.jsonl"

    def client_capabilities(self, scenario: Scenario) -> dict[str, Any]:
        if self.capabilities is not None:
            return dict(self.capabilities)
        return scenario.answers.capabilities()

    def variables(self) -> tuple[str, ...]:
        """The environment variables the target takes (``${VAR}``): secrets to redact."""
        found = _VAR.findall(json.dumps(dict(self.target)))
        return tuple(dict.fromkeys(name for _, name in found if name))

    def server(self, environ: Mapping[str, str] | None = None) -> ServerTarget:
        """The target with ``${VAR}`` taken from ``environ`` (default: ours)."""
        env = os.environ if environ is None else environ
        where = f"{self.path}:{self.target_line}"
        spec = {k: _expand(v, env, where) for k, v in self.target.items() if k != "era"}
        command = tuple(spec.get("command") or ())
        # A command runs in the file's folder unless told otherwise, so the paths it names
        # mean the same from wherever the file is run (a CI job, a test, a person's shell).
        cwd = (self.path.parent / spec.get("cwd", ".")).resolve() if command else None
        return ServerTarget(
            command=command,
            url=spec.get("url"),
            transport=_transport(spec.get("transport")),
            env=spec.get("env"),
            cwd=None if cwd is None else str(cwd),
            headers=spec.get("headers"),
        )


def _transport(name: Any) -> str | None:
    return "streamable-http" if name == "http" else name


def _expand(value: Any, environ: Mapping[str, str], where: str) -> Any:
    if isinstance(value, str):

        def var(match: re.Match[str]) -> str:
            if match.group(1) == "$":
                return "$"
            name = match.group(2)
            if name not in environ:
                raise ScenarioError(f"{where}: ${{{name}}} is not set in the environment")
            return environ[name]

        return _VAR.sub(var, value)
    if isinstance(value, list):
        return [_expand(v, environ, where) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v, environ, where) for k, v in value.items()}
    return value
