"""The pytest plugin: the ``mcp_cassette`` fixture, marker and ``--mcp-cassette-mode``.

Registered through the ``pytest11`` entry point ``cassette`` (turn it off with
``-p no:cassette``). A test asks for the fixture and gets, for each server it uses, what
to put in its MCP client's configuration instead of the server::

    def test_summary(mcp_cassette):
        command = mcp_cassette.server_command(["python", "tools/github_server.py"])
        assert "summary" in run_my_agent(mcp_servers={"github": command})

Theory of operation
-------------------
Nothing is monkeypatched: the test's own client starts what ``server_command`` returns,
``python -m cassette record --mode M ...``, which records, replays or extends the
cassette as the mode says (``cassette.modes.policy``, decided by ``cassette.modes.runner`` under
the cassette's lock). ``server_url`` runs the same thing for streamable HTTP in a thread
of this process with its own event loop (an anyio blocking portal), started by the call
and stopped with the test: a thread starts in milliseconds where a subprocess pays an
interpreter and its imports, it cannot outlive pytest, and stopping it is a cancellation
that completes the cassette, not a signal.

Misses reach the test through a side channel, because the replay runs in another
process: every session writes its facts to a per-test report file (``--report``), a miss
*before* its error reaches the client. After the test function returns, the plugin reads
it: a test that passed although a request missed fails with the diagnostics (closest
recording, what diverged); a test that failed gets them as a report section.

Each start of the command (and each ``server_url``) is its own session with its own
cassette, numbered in start order: ``<test>.jsonl``, ``<test>.2.jsonl``, ... so a test that
starts its server twice records and replays two sessions. The numbers come from files
created with ``O_EXCL`` in the test's side-channel folder (``--sessions``).

This module imports only the standard library, pytest and ``cassette.modes.policy`` when pytest
starts; everything else is imported when a test first uses the fixture.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import json
import os
import re
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import pytest

from cassette.errors import CassetteError, sole_exception
from cassette.errors import UsageError as CassetteUsageError
from cassette.modes.policy import (
    ENV_VAR,
    ModeChoice,
    env_value,
    missing_cassette_message,
    resolve_test_mode,
)
from cassette.transport import Target

if TYPE_CHECKING:
    from cassette.core.faults import FaultPlan
    from cassette.store.pytest_config import PytestSettings

if TYPE_CHECKING:
    from anyio.abc import TaskStatus
    from anyio.from_thread import BlockingPortal

    from cassette.client.report import VerifyReport
    from cassette.client.scenarios import Scenario, ScenarioFile
    from cassette.client.target import ServerTarget

__all__ = ["MCPCassette"]

MARKER: Final = "mcp_cassette"
OPTION: Final = "--mcp-cassette-mode"
UNUSED_OPTION: Final = "--mcp-cassette-fail-on-unused"
KEEP_OPTION: Final = "--mcp-cassette-record-on-failure"
_DEST: Final = "cassette_mcp_mode"  # unlikely to be any other plugin's dest
_UNUSED_DEST: Final = "cassette_mcp_fail_on_unused"
_KEEP_DEST: Final = "cassette_mcp_record_on_failure"
_MARKER_ARGS: Final = (
    "path",
    "mode",
    "strategy",
    "ignore",
    "faults",
    "fail_on_unused",
    "record_on_failure",
    "scenarios",
    "scenario",
)
_CONFIG_MODE: Final = "[tool.cassette.pytest] mode"
_STARTUP_TIMEOUT: Final = 60.0
_STOP_TIMEOUT: Final = 30.0

_FIXTURE: Final = pytest.StashKey["MCPCassette"]()
_SETTINGS: Final = pytest.StashKey["PytestSettings"]()


# -- registration --------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcp-cassette", "record and replay MCP sessions (cassette-mcp)")
    group.addoption(
        OPTION,
        dest=_DEST,
        metavar="MODE",
        default=None,
        help="once (default): record missing cassettes, replay the others; none: replay "
        "only, a missing cassette fails its test (for CI); all (or rewrite): record every "
        "cassette again; new_episodes: replay, and record what the cassettes lack. "
        f"Overrides ${ENV_VAR}; a test's @pytest.mark.{MARKER}(mode=...) overrides both, "
        "except none: none here or in the environment is a ceiling no marker lifts.",
    )
    group.addoption(
        UNUSED_OPTION,
        dest=_UNUSED_DEST,
        action="store_true",
        default=None,
        help="fail a test whose cassette holds recordings it never played, listing them",
    )
    group.addoption(
        KEEP_OPTION,
        dest=_KEEP_DEST,
        action="store_true",
        default=None,
        help="keep what a test recorded (or appended) even when the test fails; by default "
        "it is discarded, so once does not replay a failing run forever",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(path=None, *, mode=None, strategy=None, ignore=(), faults=None, "
        "fail_on_unused=None, record_on_failure=None, scenarios=None, scenario=None): the "
        "cassette the mcp_cassette fixture uses (a path relative to the test file), its record "
        "mode, matching strategy, params never matched on, fault plan, and what happens to "
        "unused recordings and to a failing test's recording; for mcp_cassette.verify, a "
        "scenarios file (relative to the test file) and the scenario whose cassette it "
        "verifies (cassette-mcp; docs/pytest.md)",
    )
    config.pluginmanager.register(_Totals(), "cassette-mcp-totals")
    try:  # a typo must stop the run before anything goes live
        from cassette.store.pytest_config import pytest_settings

        config.stash[_SETTINGS] = pytest_settings(config.rootpath)
        _resolve(None, config)
    except CassetteError as exc:
        raise pytest.UsageError(str(exc)) from None


def _settings(config: pytest.Config) -> PytestSettings:
    found = config.stash.get(_SETTINGS, None)
    if found is None:
        from cassette.store.pytest_config import PytestSettings

        return PytestSettings()
    return found


def _resolve(marker_mode: str | None, config: pytest.Config) -> ModeChoice:
    """Marker, option, environment, project config, once; none from the option or the
    environment is a ceiling (``resolve_test_mode``)."""
    return resolve_test_mode(
        (f"@pytest.mark.{MARKER}", marker_mode),
        (OPTION, config.getoption(_DEST)),
        env_value(),
        (_CONFIG_MODE, _settings(config).mode),
    )


# -- where cassettes live ------------------------------------------------------------------

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._\-\[\]=,+@]+")


def file_safe(name: str) -> str:
    """A file name for a test name on every platform; distinct names stay distinct."""
    safe = _UNSAFE.sub("_", name).strip(".")
    if safe != name or len(safe) > 120:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
        safe = f"{safe[:100]}-{digest}"
    return safe


def default_path(item: pytest.Item) -> Path:
    """``cassettes/<test module>/<test name>.jsonl`` beside the test file, or under the
    project's ``cassette-dir`` (``[tool.cassette.pytest]``) when it names one."""
    test_file = Path(item.path)
    name = ".".join(item.nodeid.split("::")[1:]) or item.name
    folder = _settings(item.config).cassette_dir or test_file.parent / "cassettes"
    return folder / test_file.stem / f"{file_safe(name)}.jsonl"


def _marker_settings(item: pytest.Item) -> dict[str, Any]:
    """The marker's arguments, the closest marker winning for each (function over class
    over module); a positional argument is the path."""
    settings: dict[str, Any] = {}
    for marker in item.iter_markers(MARKER):
        unknown = sorted(set(marker.kwargs) - set(_MARKER_ARGS))
        if unknown or len(marker.args) > 1:
            pytest.fail(
                f"@pytest.mark.{MARKER} takes a path and the keywords "
                f"{', '.join(_MARKER_ARGS)}; got "
                f"{', '.join(unknown) or 'several positional arguments'}",
                pytrace=False,
            )
        if marker.args:
            settings.setdefault("path", marker.args[0])
        for key, value in marker.kwargs.items():
            settings.setdefault(key, value)
    return settings


FaultsArg = Any  # a plan file's path, a list of rule tables, a FaultPlan, or None


def _ignore(project: Sequence[str], marker: Any) -> tuple[str, ...]:
    """The project's ignore pointers and the marker's (a string or a list), checked."""
    from cassette.core.matching import check_ignore_pointer

    given = [marker] if isinstance(marker, str) else list(marker or ())
    if not all(isinstance(p, str) for p in given):
        raise CassetteUsageError(f"@pytest.mark.{MARKER}(ignore=...) takes JSON Pointers")
    pointers = tuple(dict.fromkeys([*project, *given]))
    for pointer in pointers:
        check_ignore_pointer(pointer)
    return pointers


def _flag(marker: Any, option: bool | None, project: bool) -> bool:
    """The marker's, else the option's (only ever on), else the project's."""
    if marker is not None:
        return bool(marker)
    return bool(option) or project


def _keep_source(marker: Any, option: bool | None) -> str:
    """Where ``record_on_failure`` came from, for the report that says it was honoured."""
    if marker is not None:
        return f"@pytest.mark.{MARKER}(record_on_failure=True)"
    if option:
        return KEEP_OPTION
    return "record-on-failure in [tool.cassette.pytest]"


def _rule_data(rule: Any) -> dict[str, Any]:
    import attrs

    return {k: v for k, v in attrs.asdict(rule).items() if v is not None}


# -- the fixture ---------------------------------------------------------------------------


class MCPCassette:
    """What a test gets from the ``mcp_cassette`` fixture.

    ``path`` is the test's cassette (its first session's), ``mode`` the record mode in
    force and ``mode_source`` where it came from, ``strategy`` the matching strategy
    (``None``: the cassette's own, else ``default``). ``misses`` lists the requests the
    test's sessions could not answer so far.
    """

    def __init__(self, item: pytest.Item, side_dir: Path) -> None:
        self._item = item
        settings = _marker_settings(item)
        project = _settings(item.config)
        self.strategy: str | None = settings.get("strategy", project.strategy)
        problem = None
        try:
            self.choice = _resolve(settings.get("mode"), item.config)
            if self.strategy is not None:
                from cassette.core.matching import get_strategy

                get_strategy(self.strategy)
            self.ignore = _ignore(project.ignore_params, settings.get("ignore", ()))
            self.faults = self._plan(settings.get("faults"))
        except CassetteError as exc:
            problem = str(exc)
        if problem is not None:  # failed outside the handler: one line, no chained report
            pytest.fail(problem, pytrace=False)
        #: fail the test when its cassette holds recordings it never played
        self.fail_on_unused: bool = _flag(
            settings.get("fail_on_unused"),
            item.config.getoption(_UNUSED_DEST),
            project.fail_on_unused,
        )
        #: keep what the test recorded even when it fails
        self.record_on_failure: bool = _flag(
            settings.get("record_on_failure"),
            item.config.getoption(_KEEP_DEST),
            project.record_on_failure,
        )
        self._keep_source = _keep_source(
            settings.get("record_on_failure"), item.config.getoption(_KEEP_DEST)
        )
        self._hook = project.before_record
        self._scenarios_file = settings.get("scenarios")
        self._scenario = settings.get("scenario")
        marker_path = settings.get("path")
        if marker_path is None:
            self.path = default_path(item).resolve()
        else:
            self.path = (Path(item.path).parent / os.fspath(marker_path)).resolve()
        self._side = side_dir
        self._report = side_dir / "report.jsonl"
        self._sessions = side_dir / "sessions"
        self._fronts: list[_HttpFront] = []
        self._consumed = 0
        self._problems: list[tuple[str, str, str]] = []  # (kind, cassette, text), unreported
        self._all_problems: list[tuple[str, str, str]] = []
        self._facts: list[dict[str, Any]] = []
        self._plans = 0
        self.test_failed = False
        self._settled = False
        self._reported_unused: set[str] = set()

    @property
    def mode(self) -> str:
        return self.choice.mode

    @property
    def mode_source(self) -> str:
        return self.choice.source

    def cassette_path(self, name: str | None = None) -> Path:
        """The cassette of the servers given ``name`` (``<test>.<name>.jsonl``), or the
        test's own (``name=None``); later sessions add ``.2``, ``.3``, ..."""
        if name is None:
            return self.path
        return self.path.with_name(f"{self.path.stem}.{file_safe(name)}{self.path.suffix}")

    def server_command(
        self,
        argv: Sequence[str | os.PathLike[str]],
        *,
        name: str | None = None,
        faults: FaultsArg = None,
        before_record: Callable[..., Any] | str | None = None,
    ) -> list[str]:
        """The command to start instead of the stdio server ``argv``.

        Give ``name`` to keep a second server of the same test in a cassette of its own
        (otherwise sessions are numbered in start order); ``faults`` to lay a fault plan
        over this server's replay (a plan file, rule tables or a ``FaultPlan``; default:
        the marker's); ``before_record`` for a hook that sees each message before it is
        written (a module-level function, or ``module:function``).
        """
        command = [os.fspath(a) for a in argv]
        if not command:
            raise ValueError("server_command needs the server's command line")
        path = self.cassette_path(name)
        plan = self._faults_for(faults)
        self._require(path, faulted=plan is not None)
        out = [sys.executable, "-m", "cassette", "record", "-o", str(path), "--mode", self.mode]
        out += [f"--mode-source={self.mode_source}"]
        out += ["--report", str(self._report), "--sessions", str(self._sessions)]
        if self.strategy is not None:
            out += ["--strategy", self.strategy]
        for pointer in self.ignore:
            out += ["--ignore-param", pointer]
        if plan is not None:
            out += ["--faults", str(self._plan_file(plan))]
        hook = self._hook_spec(before_record)
        if hook is not None:
            out += ["--before-record", hook]
        return [*out, "--", *command]

    def server_url(
        self,
        url: str,
        *,
        name: str | None = None,
        faults: FaultsArg = None,
        before_record: Callable[..., Any] | str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> str:
        """A local URL to use instead of the streamable-HTTP server at ``url``: a recording
        proxy in front of it, or a replay front, serving until the test ends. ``faults``
        and ``before_record`` as for ``server_command``. ``headers`` go to the server with
        every request while recording (``{"Authorization": "Bearer ${TOKEN}"}``: ``${VAR}``
        from the environment, after ``[tool.cassette] headers``); a replay needs none."""
        from cassette.modes.runner import next_session_path

        path = next_session_path(self.cassette_path(name), self._sessions)
        plan = self._faults_for(faults)
        self._require(path, faulted=plan is not None)
        hook = self._hook_callable(before_record)
        front = _HttpFront(path, _upstream(url, headers, self.choice, path), self, plan, hook)
        local = front.start()
        self._fronts.append(front)
        return local

    def verify(
        self,
        server: Sequence[str | os.PathLike[str]] | str | None = None,
        *,
        ignore: Sequence[str] = (),
        ignore_keys: Sequence[str] = (),
        name: str | None = None,
        scenario: str | None = None,
        transport: str | None = None,
        timeout: float = 30.0,
    ) -> VerifyReport:
        """Run the test's cassette against the live ``server`` (a command line, or a URL)
        and return what drifted; ``report.assert_ok()`` fails the test with the diff.

        With a scenarios file in the marker, the cassette is that of ``scenario`` (the
        marker's, or the file's only one), the server defaults to the file's target, and a
        missing cassette is recorded from the scenario. Under mode ``all`` the drift is
        written into the cassette instead (``cassette verify --update``). See
        docs/test-your-server.md."""
        from cassette.client.report import VerifyReport as Report

        plan = self._verify_plan(server, name, scenario, transport)
        report = _in_thread(lambda: _snapshot(self, plan, ignore, ignore_keys, timeout))
        assert isinstance(report, Report)
        action = "record" if report.recorded else ("update" if report.updated else "verify")
        self._facts.append({"event": "session", "action": action})
        return report

    def _verify_plan(
        self,
        server: Sequence[str | os.PathLike[str]] | str | None,
        name: str | None,
        scenario: str | None,
        transport: str | None,
    ) -> _VerifyPlan:
        try:
            return self._plan_of(server, name, scenario, transport)
        except (CassetteError, ValueError) as exc:
            problem = str(exc)
        pytest.fail(f"mcp-cassette: {problem}", pytrace=False)  # outside: no chained context

    def _plan_of(
        self,
        server: Sequence[str | os.PathLike[str]] | str | None,
        name: str | None,
        scenario: str | None,
        transport: str | None,
    ) -> _VerifyPlan:
        from cassette.client.scenarios import load_scenarios
        from cassette.client.target import ServerTarget

        target = None if server is None else ServerTarget.of(server, transport=transport)
        if self._scenarios_file is None:
            if target is None:
                raise ValueError(
                    "mcp_cassette.verify needs the server (its command line or URL), "
                    f"or a scenarios file: @pytest.mark.{MARKER}(scenarios=...)"
                )
            return _VerifyPlan(self.cassette_path(name), target, None)
        file = load_scenarios(Path(self._item.path).parent / os.fspath(self._scenarios_file))
        chosen = scenario or self._scenario
        if chosen is None and len(file.scenarios) == 1:
            chosen = file.scenarios[0].name
        if chosen is None:
            raise ValueError(
                f"{file.path} has several scenarios ({', '.join(file.names)}): "
                "say which, verify(scenario=...) or the marker's scenario="
            )
        picked = file.scenario(chosen)
        return _VerifyPlan(file.cassette_path(chosen), target, (file, picked))

    @property
    def misses(self) -> list[str]:
        self._read()
        return [text for kind, _, text in self._all_problems if kind == "miss"]

    @property
    def unplayed(self) -> list[str]:
        """The recorded requests the test's replayed sessions never played, so far
        (``cassette:line: request``): what a test that stopped making a call leaves."""
        self._read()
        out: list[str] = []
        for fact in self._facts:
            if fact.get("event") == "unplayed":
                shown = self._shown(Path(str(fact.get("cassette"))))
                out += [f"{shown}:{r['line']}: {r['request']}" for r in fact.get("requests", [])]
        return out

    # -- internals -------------------------------------------------------------------------

    def _require(self, path: Path, *, faulted: bool = False) -> None:
        """Mode none: a missing cassette fails the test now, before anything starts. A
        fault plan needs a replay: a session that would record fails now too."""
        from cassette.modes.policy import Action, plan
        from cassette.store.storage import has_recording

        exists = has_recording(path)
        if self.mode == "none" and not exists:
            pytest.fail(
                "mcp-cassette: " + missing_cassette_message(self._shown(path), self.choice),
                pytrace=False,
            )
        if faulted and plan(self.choice.mode, exists) is Action.RECORD:
            why = "records it again" if self.mode == "all" else "would record it now"
            pytest.fail(
                f"mcp-cassette: {self._shown(path)}: a fault plan is laid over a replay, and "
                f"{self.choice.describe()} {why}; record it from a test without faults "
                "first, or point this test at a recorded cassette (path=...)",
                pytrace=False,
            )

    def _plan(self, value: FaultsArg) -> FaultPlan | None:
        """A marker's or a call's ``faults``: a plan file (relative to the test file),
        rule tables, or a ``FaultPlan``."""
        if value is None:
            return None
        from cassette.core.faults import FaultPlan

        if isinstance(value, FaultPlan):
            return value
        if isinstance(value, str | os.PathLike):
            from cassette.store.faults import load_fault_plan

            return load_fault_plan(Path(self._item.path).parent / os.fspath(value))
        return FaultPlan.of(value)

    def _faults_for(self, value: FaultsArg) -> FaultPlan | None:
        if value is None:
            return self.faults
        try:
            return self._plan(value)
        except CassetteError as exc:
            problem = f"mcp-cassette: faults: {exc}"
        pytest.fail(problem, pytrace=False)  # outside the handler: one line, nothing chained

    def _plan_file(self, plan: FaultPlan) -> Path:
        """The plan as a JSON file the server command's process reads (``--faults``)."""
        self._plans += 1
        path = self._side / f"faults-{self._plans}.json"
        from cassette.store.faults import write_fault_plan

        write_fault_plan(path, plan)
        return path

    def _hook_spec(self, hook: Callable[..., Any] | str | None) -> str | None:
        """``--before-record`` for the server command's process: a function by its file
        (the test module need not be importable there), a string as given, else the
        project's ``before-record`` made absolute."""
        if hook is None:
            spec = self._hook
            project = _settings(self._item.config).root
            if spec is None or project is None:
                return spec
            module, _, function = spec.rpartition(":")
            return f"{project / module}:{function}" if module.endswith(".py") else spec
        if isinstance(hook, str):
            return hook
        import inspect

        source = inspect.getsourcefile(hook)
        if source is None or "<locals>" in hook.__qualname__:
            raise ValueError("before_record must be a module-level function (or module:function)")
        return f"{source}:{hook.__qualname__}"

    def _hook_callable(self, hook: Callable[..., Any] | str | None) -> Callable[..., Any] | None:
        spec = hook if hook is not None else self._hook_spec(None)
        if spec is None or callable(spec):
            return spec
        from cassette.store.config import load_hook

        try:
            found: Callable[..., Any] = load_hook(spec, _settings(self._item.config).root)
        except CassetteError as exc:
            problem = f"mcp-cassette: {exc}"
        else:
            return found
        pytest.fail(problem, pytrace=False)  # outside the handler: one line, nothing chained

    def _shown(self, path: Path) -> str:
        with contextlib.suppress(ValueError):
            return str(path.relative_to(self._item.config.rootpath))
        return str(path)

    def _read(self) -> None:
        try:
            lines = self._report.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return
        for line in lines[self._consumed :]:
            try:
                fact = json.loads(line)
            except ValueError:
                break  # a line still being written: read it next time
            self._consumed += 1
            self._facts.append(fact)
            if fact.get("event") in ("miss", "error"):
                entry = (str(fact["event"]), str(fact.get("cassette")), str(fact.get("text")))
                self._problems.append(entry)
                self._all_problems.append(entry)

    def take_problems(self) -> str:
        """The problems not reported yet, as a failure message ("" when there are none)."""
        self._read()
        problems, self._problems = self._problems, []
        if not problems:
            return ""
        misses = [p for p in problems if p[0] == "miss"]
        errors = [p for p in problems if p[0] == "error"]
        lines: list[str] = []
        if misses:
            lines.append(
                f"mcp-cassette: {len(misses)} request(s) had no recording "
                f"({self.choice.describe()}):"
            )
            for cassette in dict.fromkeys(c for _, c, _ in misses):
                lines.append(f"  {self._shown(Path(cassette))}:")
                lines += [f"    - {text}" for _, c, text in misses if c == cassette]
            lines.append(
                f"  To record what is missing: {OPTION}=new_episodes (appends it) "
                f"or {OPTION}=all (records again)."
            )
        for _, cassette, text in errors:
            lines.append(f"mcp-cassette: a session of {self._shown(Path(cassette))} failed: {text}")
        return "\n".join(lines)

    def _stop_fronts(self) -> list[str]:
        errors: list[str] = []
        for front in self._fronts:
            try:
                front.stop()
            except Exception as exc:  # every front is stopped; each failure is reported
                errors.append(f"mcp-cassette: stopping the HTTP front failed: {exc!r}")
        self._fronts.clear()
        return errors

    def _finish(self) -> str:
        errors = self._stop_fronts()
        if self.test_failed and not self._settled:
            self.settle_failure()
        text = self.take_problems()
        unused = self._unused() if not self.test_failed else ""
        self._tally()
        return "\n".join(t for t in [*errors, text, unused] if t)

    def _unused(self) -> str:
        """With ``fail_on_unused``: the recordings the test never played (and not reported
        yet), as a failure. Stdio sessions have said so when the test function returns;
        an HTTP front says so when it stops, at teardown."""
        unplayed = [u for u in self.unplayed if u not in self._reported_unused]
        if not self.fail_on_unused or not unplayed:
            return ""
        self._reported_unused.update(unplayed)
        lines = [f"mcp-cassette: {len(unplayed)} recording(s) were never played by this test:"]
        lines += [f"  - {entry}" for entry in unplayed]
        lines.append(
            f"  Record the cassette again ({OPTION}=all) to drop them, or let them be "
            f"(fail_on_unused=False)."
        )
        return "\n".join(lines)

    def settle_failure(self) -> str:
        """The test failed: what it recorded under once, or appended under new_episodes,
        is taken back unless ``record_on_failure``; the text says which, for the report."""
        self._settled = True
        self._stop_fronts()
        self._read()
        recorded: list[str] = []
        extended: dict[str, tuple[int, int]] = {}  # cassette -> (size before, episodes)
        for fact in self._facts:
            cassette = str(fact.get("cassette"))
            if fact.get("event") == "session" and fact.get("action") == "record":
                if fact.get("mode") != "all":
                    recorded.append(cassette)
            elif fact.get("event") == "session" and fact.get("action") == "extend":
                size = fact.get("size")
                if isinstance(size, int):
                    extended.setdefault(cassette, (size, 0))
            elif fact.get("event") == "episode" and cassette in extended:
                size, count = extended[cassette]
                extended[cassette] = (size, count + 1)
        grown = {c: v for c, v in extended.items() if v[1]}
        if not recorded and not grown:
            return ""
        if self.record_on_failure:
            kept = [self._shown(Path(c)) for c in [*recorded, *grown]]
            return (
                f"mcp-cassette: the test failed; kept what it recorded ({', '.join(kept)}), "
                f"as {self._keep_source} asks"
            )
        lines = ["mcp-cassette: the test failed, so what it recorded was taken back:"]
        from cassette.store.takeback import take_back

        for cassette in recorded:
            take_back(cassette)
            lines.append(f"  - {self._shown(Path(cassette))}: removed (recorded by this test)")
        for cassette, (size, count) in grown.items():
            take_back(cassette, size)
            lines.append(f"  - {self._shown(Path(cassette))}: {count} appended episode(s) removed")
        lines.append(
            f"  Keep it with @pytest.mark.{MARKER}(record_on_failure=True), {KEEP_OPTION}, "
            "or record-on-failure = true in [tool.cassette.pytest]."
        )
        return "\n".join(lines)

    def _tally(self) -> None:
        totals: dict[str, int] = {}
        for fact in self._facts:
            if fact.get("event") == "session":
                key = str(fact.get("action"))
                totals[key] = totals.get(key, 0) + 1
            elif fact.get("event") == "episode":
                totals["episodes"] = totals.get("episodes", 0) + 1
        if totals:
            self._item.user_properties.append(("mcp_cassette", totals))


class _VerifyPlan(NamedTuple):
    """What ``verify`` works on: the cassette, the server, and the scenario, if any."""

    path: Path
    server: ServerTarget | None
    scenario: tuple[ScenarioFile, Scenario] | None


async def _snapshot(
    owner: MCPCassette,
    plan: _VerifyPlan,
    ignore: Sequence[str],
    ignore_keys: Sequence[str],
    seconds: float,
) -> VerifyReport:
    from cassette.client.snapshots import project_ignores, snapshot

    ignores = project_ignores().merged(ignore, ignore_keys)
    return await snapshot(
        plan.path,
        owner.choice,
        plan.server,
        scenario=plan.scenario,
        ignores=ignores,
        time_limit=seconds,
    )


def _in_thread(func: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``func`` on an event loop of its own thread, so a test may call it whether or
    not it runs in an event loop itself; a ``CassetteError`` fails the test in one line."""
    from anyio.from_thread import start_blocking_portal

    try:
        with start_blocking_portal() as portal:
            return portal.call(func)
    except Exception as exc:
        inner = sole_exception(exc)
        if not isinstance(inner, CassetteError):
            raise
        problem = str(inner)
    pytest.fail(f"mcp-cassette: {problem}", pytrace=False)  # outside: no chained context


def _upstream(
    url: str, headers: Mapping[str, str] | None, choice: ModeChoice, path: Path
) -> Target:
    """``server_url``'s server with its headers expanded, when the session reaches it; a
    variable left unset fails the test in one line then, and only then."""
    from cassette.modes.policy import Action, plan
    from cassette.store.headers import project_headers

    live = plan(choice.mode, path.exists()) in (Action.RECORD, Action.EXTEND)
    try:
        expanded = project_headers(headers or {})
    except CassetteError as exc:
        if not live:
            return Target(url=url)
        problem = str(exc)
    else:
        return Target(url=url, headers=expanded.headers if expanded is not None else None)
    pytest.fail(f"mcp-cassette: server_url({url!r}): {problem}", pytrace=False)


class _HttpFront:
    """A recording proxy or a replay front for one ``server_url``, in a thread."""

    def __init__(
        self,
        path: Path,
        upstream: Target,
        owner: MCPCassette,
        plan: FaultPlan | None = None,
        hook: Callable[..., Any] | None = None,
    ) -> None:
        self.path = path
        self.upstream = upstream
        self.owner = owner
        self.plan = plan
        self.hook = hook
        self.info: list[str] = []
        self._portal_cm: Any = None
        self._future: concurrent.futures.Future[Any] | None = None

    def start(self) -> str:
        from anyio.from_thread import start_blocking_portal

        self._portal_cm = start_blocking_portal()
        portal: BlockingPortal = self._portal_cm.__enter__()
        try:
            self._future, url = portal.start_task(self._serve)
        except BaseException as exc:
            self._portal_cm.__exit__(None, None, None)
            self._portal_cm = None
            inner = exc
            while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
                inner = inner.exceptions[0]
            if isinstance(inner, CassetteError):
                pytest.fail(f"mcp-cassette: {inner}", pytrace=False)
            raise
        return str(url)

    async def _serve(self, *, task_status: TaskStatus[str]) -> None:
        from cassette.errors import FaultExit
        from cassette.modes.runner import Report, run_http

        try:
            await run_http(
                self.path,
                self.upstream,
                choice=self.owner.choice,
                strategy=self.owner.strategy,
                report=Report(self.owner._report, self.path),
                on_ready=task_status.started,
                on_info=self.info.append,
                ignore=self.owner.ignore,
                faults=self.plan,
                on_fault=self.info.append,
                before_record=self.hook,
            )
        except FaultExit as exc:  # the plan stopped the front, as it was asked to
            self.info.append(str(exc))

    def stop(self) -> None:
        if self._portal_cm is None:
            return
        try:
            if self._future is not None:
                self._future.cancel()
                concurrent.futures.wait([self._future], timeout=_STOP_TIMEOUT)
        finally:
            cm, self._portal_cm = self._portal_cm, None
            cm.__exit__(None, None, None)


@pytest.fixture
def mcp_cassette(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MCPCassette]:
    """Record an MCP server the first time, replay it from then on (cassette-mcp).

    ``mcp_cassette.server_command(argv)`` for a stdio server, ``server_url(url)`` for a
    streamable-HTTP one; see docs/pytest.md.
    """
    item = request.node
    assert isinstance(item, pytest.Item)
    fixture = MCPCassette(item, tmp_path_factory.mktemp("mcp-cassette"))
    item.stash[_FIXTURE] = fixture
    yield fixture
    text = fixture._finish()
    if text:
        pytest.fail(text, pytrace=False)


# -- turning misses into failures ------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test that passed although a request missed fails, with the miss diagnostics; a
    test that failed gets them as a report section."""
    try:
        result = yield
    except BaseException:
        fixture = item.stash.get(_FIXTURE, None)
        texts: list[str] = []
        if fixture is not None:
            fixture.test_failed = True
            texts = [fixture.take_problems(), fixture.settle_failure()]
        text = "\n".join(t for t in texts if t)
        if text:
            item.add_report_section("call", "mcp-cassette", text)
        raise
    fixture = item.stash.get(_FIXTURE, None)
    text = ""
    if fixture is not None:
        text = "\n".join(t for t in (fixture.take_problems(), fixture._unused()) if t)
    if text:
        pytest.fail(text, pytrace=False)
    return result


class _Totals:
    """Adds up what the sessions did, from the test reports (so xdist workers' too)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        for key, value in report.user_properties:
            if key == "mcp_cassette" and isinstance(value, dict):
                for name, count in value.items():
                    self.counts[name] = self.counts.get(name, 0) + int(count)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        totals = self.counts
        words = {
            "record": "recorded",
            "replay": "replayed",
            "extend": "extended",
            "verify": "verified",
            "update": "updated",
        }
        parts = [f"{totals[k]} {w}" for k, w in words.items() if totals.get(k)]
        if totals.get("episodes"):
            parts.append(f"{totals['episodes']} new episode(s) appended")
        if parts:
            terminalreporter.write_line(f"mcp-cassette: sessions: {', '.join(parts)}")
