"""Reading a scenarios file: its syntax (TOML or JSON), then every rule, each problem one
``ScenarioError`` naming ``file:line`` (``cassette.client.scenarios`` says how a line is
found; docs/scenarios.md is the format's reference)."""

from __future__ import annotations

import json
import math
import os
import re
import tomllib
from pathlib import Path
from typing import Any, Final

from cassette.client.scenario_model import (
    FORMAT,
    LISTS,
    VERBS,
    Answers,
    Scenario,
    ScenarioFile,
    Step,
)
from cassette.core.replay.playback import LOG_LEVELS
from cassette.core.wire.jsonrpc import JSONObject
from cassette.core.wire.mcp import LEGACY_VERSIONS, MODERN_VERSION
from cassette.core.words.jsondiff import pointer
from cassette.errors import CassetteError, ScenarioError
from cassette.store.files import read_definitions

__all__ = ["load_scenarios", "loads_scenarios"]

_COMMON: Final = frozenset({"expect-error", "timeout", "note"})
_EXTRA: Final = {
    "list": frozenset(),
    "call": frozenset({"arguments"}),
    "prompt": frozenset({"arguments"}),
    "read": frozenset(),
    "complete": frozenset({"argument", "context"}),
    "log-level": frozenset(),
    "subscribe": frozenset(),
    "unsubscribe": frozenset(),
    "method": frozenset({"params"}),
}
_TOP: Final = frozenset(
    {"format", "target", "client", "answers", "cassettes", "timeout", "scenarios"}
)
_TARGET: Final = frozenset({"command", "url", "transport", "cwd", "env", "headers", "era"})
_ANSWERS: Final = frozenset({"sampling", "elicitation", "roots", "requests"})
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_DEFAULT_TIMEOUT: Final = 30.0
_MODEL: Final = "cassette-scenario"


def load_scenarios(path: str | os.PathLike[str]) -> ScenarioFile:
    """Read and check a scenarios file (``.toml`` or ``.json``). As with a cassette or a
    manifest, only a regular file is read (a FIFO would hang the read, ``/dev/zero``
    fill memory), and no more of it than ``definitions_limit``."""
    source = Path(path)
    try:
        text = read_definitions(source, "scenarios file")
    except CassetteError as exc:
        raise ScenarioError(str(exc)) from None
    return loads_scenarios(text, source)


def loads_scenarios(text: str, path: str | os.PathLike[str]) -> ScenarioFile:
    """Check a scenarios file's text; ``path`` names it and says its syntax (by suffix)."""
    source = Path(path)
    data = _parse(text, source)
    return _Reader(source, text).file(data)


def _parse(text: str, source: Path) -> Any:
    """The file's data, every value one JSON can carry: what a step sends goes out as
    JSON, and NaN, Infinity or a TOML date would fail only then, as an internal error."""
    return _json_only(_syntax(text, source), (), source)


def _json_only(value: Any, at: tuple[str | int, ...], source: Path) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        raise ScenarioError(
            f"{source}: {pointer(at) or '/'}: {value} is not a JSON number (JSON has no NaN "
            "or Infinity)"
        )
    if isinstance(value, dict):
        for key, item in value.items():
            _json_only(item, (*at, key), source)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _json_only(item, (*at, index), source)
    elif not (value is None or isinstance(value, str | int | float | bool)):
        raise ScenarioError(
            f"{source}: {pointer(at) or '/'}: a TOML date or time has no JSON form; quote it"
        )
    return value


def _syntax(text: str, source: Path) -> Any:
    suffix = source.suffix.lower()
    if suffix == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            found = re.search(r"at line (\d+)", str(exc))
            line = found.group(1) if found else "1"
            reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
            raise ScenarioError(f"{source}:{line}: not valid TOML: {reason}") from None
    if suffix == ".json":
        try:
            return json.loads(text, parse_constant=_no_constant)
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"{source}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    raise ScenarioError(
        f"{source}: a scenarios file is .toml or .json, not {suffix or 'no suffix'!r}"
    )


def _no_constant(name: str) -> Any:
    """NaN and Infinity are read as JSON by Python alone: refused here, where found."""
    raise json.JSONDecodeError(f"{name} is not a JSON number", name, 0)


class _Locator:
    """Finds the line a problem is about (see the module docstring)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.starts = [
            i for i, ln in enumerate(self.lines) if re.match(r"\s*\[\[scenarios\]\]", ln)
        ]

    def key(self, key: str, start: int = 0, end: int | None = None) -> int | None:
        pattern = re.compile(rf'(?:^|[\s{{,\[])"?{re.escape(key)}"?\s*[=:]')
        for i in range(start, len(self.lines) if end is None else end):
            if pattern.search(self.lines[i]):
                return i
        return None

    def scenario(self, index: int, name: Any) -> tuple[int, int | None]:
        """The first and past-the-last line index of the ``index``-th scenario."""
        if self.starts and index < len(self.starts):
            end = self.starts[index + 1] if index + 1 < len(self.starts) else None
            return self.starts[index], end
        if isinstance(name, str):
            for i, ln in enumerate(self.lines):
                if re.search(rf'"?name"?\s*[=:]\s*["\']{re.escape(name)}["\']', ln):
                    return i, None
        return 0, None

    def step(self, scenario: tuple[int, int | None], index: int) -> int:
        start, end = scenario
        verbs = "|".join(re.escape(v) for v in VERBS)
        pattern = re.compile(rf'(?:^|[\s{{,])"?(?:{verbs})"?\s*[=:]')
        seen = -1
        for i in range(start, len(self.lines) if end is None else end):
            seen += len(pattern.findall(self.lines[i]))
            if seen >= index:
                return i
        return start


class _Reader:
    """Turns parsed data into a ``ScenarioFile``, or the first problem as a
    ``ScenarioError`` at its line."""

    def __init__(self, source: Path, text: str) -> None:
        self.source = source
        self.where = _Locator(text)

    def fail(self, line_index: int | None, reason: str) -> ScenarioError:
        return ScenarioError(f"{self.source}:{(line_index or 0) + 1}: {reason}")

    def at_key(self, key: str) -> int | None:
        return self.where.key(key)

    def file(self, data: Any) -> ScenarioFile:
        if not isinstance(data, dict):
            raise self.fail(0, "a scenarios file is a table (a JSON object)")
        self._format(data)
        unknown = sorted(set(data) - _TOP)
        if unknown:
            raise self.fail(
                self.at_key(unknown[0]),
                f"unknown key {unknown[0]!r} (known: {', '.join(sorted(_TOP))})",
            )
        target, era, version = self._target(data.get("target"))
        answers = self._answers(data.get("answers"), self.at_key("answers"), "answers")
        client = self._client(data.get("client"))
        scenarios = self._scenarios(data.get("scenarios"), answers)
        output = data.get("cassettes", ".")
        if not isinstance(output, str) or not output:
            raise self.fail(self.at_key("cassettes"), "cassettes must be a folder name (a string)")
        return ScenarioFile(
            path=self.source,
            target=target,
            era=era,
            legacy_version=version,
            client_info=client[0],
            capabilities=client[1],
            answers=answers,
            output=(self.source.parent / output),
            timeout=self._seconds(data.get("timeout"), self.at_key("timeout"), _DEFAULT_TIMEOUT),
            scenarios=scenarios,
            target_line=(self.at_key("target") or self._target_line()) + 1,
        )

    def _target_line(self) -> int:
        for i, ln in enumerate(self.where.lines):
            if ln.strip() == "[target]":
                return i
        return 0

    def _format(self, data: dict[str, Any]) -> None:
        value = data.get("format")
        line = self.at_key("format")
        if value is None:
            raise self.fail(0, f"no format: the file must start with format = {FORMAT}")
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(line, f"format must be a whole number, not {value!r}")
        if value > FORMAT:
            raise self.fail(
                line,
                f"written for scenarios format {value}; this cassette-mcp reads format "
                f"{FORMAT}: upgrade cassette-mcp",
            )
        if value < 1:
            raise self.fail(line, f"format {value} does not exist; the first is 1")

    # -- target ----------------------------------------------------------------------------

    def _target(self, value: Any) -> tuple[dict[str, Any], str, str]:
        line = self.at_key("target") if self.at_key("target") is not None else self._target_line()
        if not isinstance(value, dict):
            raise self.fail(line, 'no [target]: give the server\'s command = [...] or url = "..."')
        unknown = sorted(set(value) - _TARGET)
        if unknown:
            raise self.fail(
                line,
                f"[target] has an unknown key {unknown[0]!r} (known: {', '.join(sorted(_TARGET))})",
            )
        command, url = value.get("command"), value.get("url")
        if (command is None) == (url is None):
            raise self.fail(line, '[target] needs either command = [...] (stdio) or url = "..."')
        if command is not None and (
            not isinstance(command, list)
            or not command
            or not all(isinstance(a, str) and a for a in command)
        ):
            raise self.fail(
                self.at_key("command"), "command must be a list of strings, the program first"
            )
        if url is not None and (
            not isinstance(url, str) or not url.startswith(("http://", "https://", "${"))
        ):
            raise self.fail(
                self.at_key("url"), f"url must be an http:// or https:// URL, not {url!r}"
            )
        for key in ("env", "headers"):
            table = value.get(key)
            if table is not None and (
                not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values())
            ):
                raise self.fail(self.at_key(key), f"{key} must be a table of strings")
        if value.get("headers") is not None and url is None:
            raise self.fail(self.at_key("headers"), "headers go with a url target, not a command")
        if value.get("cwd") is not None and not isinstance(value.get("cwd"), str):
            raise self.fail(
                self.at_key("cwd"), "cwd must be a string (a folder, relative to this file)"
            )
        self._check_transport(value.get("transport"), url is not None)
        era, version = self._era(value.get("era", "auto"))
        return dict(value), era, version

    def _check_transport(self, name: Any, url: bool) -> None:
        if name is None:
            return
        line = self.at_key("transport")
        if not isinstance(name, str):
            raise self.fail(line, "transport must be a string")
        if url and name == "stdio":
            raise self.fail(line, "transport stdio needs command = [...], not url")
        if not url and name in ("http", "streamable-http", "sse"):
            raise self.fail(line, f'transport {name} needs url = "...", not command')

    def _era(self, value: Any) -> tuple[str, str]:
        line = self.at_key("era")
        from cassette.core.wire.mcp import LATEST_LEGACY

        if value in ("auto", "legacy"):
            return str(value), LATEST_LEGACY
        if value in (MODERN_VERSION, "modern"):
            return "modern", LATEST_LEGACY
        if value in LEGACY_VERSIONS:
            return "legacy", str(value)
        raise self.fail(
            line, f"era must be legacy, {MODERN_VERSION}, auto or a legacy revision, not {value!r}"
        )

    # -- client and answers ----------------------------------------------------------------

    def _client(self, value: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
        info = {"name": "cassette-scenarios", "version": "1"}
        if value is None:
            return info, None
        line = self.at_key("client")
        if not isinstance(value, dict) or set(value) - {"name", "version", "capabilities"}:
            raise self.fail(line, "[client] takes name, version and capabilities")
        for key in ("name", "version"):
            if key in value:
                if not isinstance(value[key], str):
                    raise self.fail(self.at_key(key), f"client {key} must be a string")
                info[key] = value[key]
        caps = value.get("capabilities")
        if caps is not None and not isinstance(caps, dict):
            raise self.fail(self.at_key("capabilities"), "client capabilities must be a table")
        return info, caps

    def _answers(self, value: Any, line: int | None, where: str) -> Answers:
        if value is None:
            return Answers()
        if not isinstance(value, dict):
            raise self.fail(line, f"{where} must be a table")
        unknown = sorted(set(value) - _ANSWERS)
        if unknown:
            raise self.fail(
                line,
                f"{where} has an unknown key {unknown[0]!r} (known: {', '.join(sorted(_ANSWERS))})",
            )
        results: dict[str, JSONObject] = {}
        if "sampling" in value:
            results["sampling/createMessage"] = self._sampling(value["sampling"], line, where)
        if "elicitation" in value:
            results["elicitation/create"] = self._elicitation(value["elicitation"], line, where)
        if "roots" in value:
            results["roots/list"] = self._roots(value["roots"], line, where)
        requests = value.get("requests", {})
        if not isinstance(requests, dict) or not all(
            isinstance(r, dict) for r in requests.values()
        ):
            raise self.fail(line, f"{where}.requests maps a method to its result (a table)")
        results.update(requests)
        return Answers(results)

    def _sampling(self, value: Any, line: int | None, where: str) -> JSONObject:
        if isinstance(value, str):
            content: Any = {"type": "text", "text": value}
            return {
                "role": "assistant",
                "content": content,
                "model": _MODEL,
                "stopReason": "endTurn",
            }
        if isinstance(value, dict) and "content" in value:
            return {"role": "assistant", "model": _MODEL, **value}
        raise self.fail(
            line, f"{where}.sampling is the model's reply: a string, or a result table with content"
        )

    def _elicitation(self, value: Any, line: int | None, where: str) -> JSONObject:
        if value in ("decline", "cancel"):
            return {"action": value}
        if isinstance(value, dict):
            return dict(value) if "action" in value else {"action": "accept", "content": value}
        raise self.fail(
            line, f'{where}.elicitation is the form\'s content (a table), "decline" or "cancel"'
        )

    def _roots(self, value: Any, line: int | None, where: str) -> JSONObject:
        roots: list[Any] = []
        if isinstance(value, list):
            for root in value:
                if isinstance(root, str):
                    roots.append({"uri": root})
                elif isinstance(root, dict) and isinstance(root.get("uri"), str):
                    roots.append(dict(root))
                else:
                    break
            else:
                return {"roots": roots}
        raise self.fail(line, f"{where}.roots is a list of URIs (or tables with uri and name)")

    def _seconds(
        self, value: Any, line: int | None, default: float | None, what: str = ""
    ) -> float:
        if value is None:
            if default is None:
                raise self.fail(line, f"{what}timeout is missing")
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise self.fail(
                line, f"{what}timeout must be a number of seconds above 0, not {value!r}"
            )
        return float(value)

    # -- scenarios and steps ---------------------------------------------------------------

    def _scenarios(self, value: Any, answers: Answers) -> tuple[Scenario, ...]:
        if not isinstance(value, list) or not value:
            raise self.fail(
                self.at_key("scenarios"), "no scenarios: add [[scenarios]] with a name and steps"
            )
        out: list[Scenario] = []
        for index, item in enumerate(value):
            scenario = self._scenario(index, item, answers)
            if scenario.name in (s.name for s in out):
                raise self.fail(scenario.line - 1, f"two scenarios are named {scenario.name!r}")
            out.append(scenario)
        return tuple(out)

    def _scenario(self, index: int, item: Any, answers: Answers) -> Scenario:
        name = item.get("name") if isinstance(item, dict) else None
        span = self.where.scenario(index, name)
        if not isinstance(item, dict):
            raise self.fail(span[0], f"scenario #{index + 1} must be a table")
        unknown = sorted(set(item) - {"name", "description", "steps", "answers"})
        if unknown:
            raise self.fail(span[0], f"scenario #{index + 1} has an unknown key {unknown[0]!r}")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise self.fail(
                span[0],
                f"scenario #{index + 1} needs a name of letters, digits, '.', '_' and '-' "
                f"(it names the cassette), not {name!r}",
            )
        description = item.get("description", "")
        if not isinstance(description, str):
            raise self.fail(span[0], f"scenario {name!r}: description must be a string")
        own = self._answers(item.get("answers"), span[0], f"scenario {name!r} answers")
        steps = item.get("steps")
        if not isinstance(steps, list) or not steps:
            raise self.fail(span[0], f"scenario {name!r} has no steps")
        parsed = tuple(
            self._step(name, number, step, self.where.step(span, number - 1))
            for number, step in enumerate(steps, start=1)
        )
        return Scenario(name, parsed, own.over(answers), span[0] + 1, description)

    def _step(self, scenario: str, number: int, step: Any, line: int) -> Step:
        what = f"scenario {scenario!r} step {number}"
        if not isinstance(step, dict):
            raise self.fail(line, f"{what} must be a table")
        verbs = [v for v in VERBS if v in step]
        if len(verbs) != 1:
            found = ", ".join(verbs) or "none"
            raise self.fail(
                line, f"{what} needs exactly one of {', '.join(VERBS)} (found: {found})"
            )
        verb = verbs[0]
        unknown = sorted(set(step) - {verb} - _COMMON - _EXTRA[verb])
        if unknown:
            raise self.fail(line, f"{what} ({verb}) has an unknown key {unknown[0]!r}")
        method, params, key = self._request(verb, step, f"{what} ({verb})", line)
        expect = step.get("expect-error")
        if expect is not None and not isinstance(expect, bool | int):
            raise self.fail(line, f"{what}: expect-error is true or an error code")
        timeout = step.get("timeout")
        seconds = None if timeout is None else self._seconds(timeout, line, None, f"{what}: ")
        if "note" in step and not isinstance(step["note"], str):
            raise self.fail(line, f"{what}: note must be a string")
        return Step(number, verb, method, params, line + 1, expect or None, seconds, key)

    def _request(
        self, verb: str, step: dict[str, Any], what: str, line: int
    ) -> tuple[str, JSONObject | None, str | None]:
        value = step[verb]
        if verb == "list":
            if value not in LISTS:
                raise self.fail(line, f"{what}: lists {', '.join(LISTS)}, not {value!r}")
            method, key = LISTS[value]
            return method, None, key
        if verb == "method":
            params = step.get("params")
            if not isinstance(value, str) or not value:
                raise self.fail(line, f"{what}: method is the MCP method's name")
            if params is not None and not isinstance(params, dict):
                raise self.fail(line, f"{what}: params must be a table")
            return value, params, None
        if verb == "complete":
            return "completion/complete", self._complete(step, what, line), None
        if not isinstance(value, str) or not value:
            raise self.fail(line, f"{what}: {verb} takes a name or URI (a string)")
        return self._simple(verb, value, step, what, line)

    def _simple(
        self, verb: str, value: str, step: dict[str, Any], what: str, line: int
    ) -> tuple[str, JSONObject, None]:
        if verb == "log-level":
            if value not in LOG_LEVELS:
                raise self.fail(line, f"{what}: a log level is one of {', '.join(LOG_LEVELS)}")
            return "logging/setLevel", {"level": value}, None
        if verb in ("read", "subscribe", "unsubscribe"):
            method = {"read": "resources/read"}.get(verb, f"resources/{verb}")
            return method, {"uri": value}, None
        arguments = step.get("arguments", {})
        if not isinstance(arguments, dict):
            raise self.fail(line, f"{what}: arguments must be a table")
        if verb == "prompt" and not all(isinstance(v, str) for v in arguments.values()):
            raise self.fail(line, f"{what}: prompt arguments are strings")
        method = "tools/call" if verb == "call" else "prompts/get"
        return method, {"name": value, "arguments": arguments}, None

    def _complete(self, step: dict[str, Any], what: str, line: int) -> JSONObject:
        ref, argument = step["complete"], step.get("argument")
        shapes = {"prompt": ("ref/prompt", "name"), "resource": ("ref/resource", "uri")}
        if not isinstance(ref, dict) or len(ref) != 1 or next(iter(ref)) not in shapes:
            raise self.fail(
                line, f'{what}: complete is {{ prompt = "NAME" }} or {{ resource = "URI" }}'
            )
        kind, value = next(iter(ref.items()))
        if not isinstance(argument, dict) or set(argument) != {"name", "value"}:
            raise self.fail(line, f'{what}: argument = {{ name = "...", value = "..." }} is needed')
        ref_type, key = shapes[kind]
        params: JSONObject = {"ref": {"type": ref_type, key: value}, "argument": argument}
        context = step.get("context")
        if context is not None:
            if not isinstance(context, dict):
                raise self.fail(line, f"{what}: context must be a table")
            params["context"] = context
        return params
