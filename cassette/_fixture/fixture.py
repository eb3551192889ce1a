"""``MCPCassette``: what a test gets from the ``mcp_cassette`` fixture.

For each server a test uses, it gives what to put in the test's MCP client instead
(``server_command``, ``server_url``); after the test it reads the sessions' side channel
(``--report``) and says what went wrong (misses, unplayed recordings, a failed session),
and a failing test's recordings are taken back unless it asks to keep them
(``settle_failure``). The plugin's theory of operation is in ``cassette.pytest_plugin``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from cassette._fixture.settings import (
    KEEP_DEST,
    KEEP_OPTION,
    MARKER,
    MARKER_SOURCE,
    OPTION,
    UNUSED_DEST,
    FaultsArg,
    default_path,
    file_safe,
    flag,
    given_settings,
    ignore_pointers,
    keep_source,
    project_settings,
    resolve,
    run_report,
)
from cassette._fixture.threads import HttpFront, VerifyPlan, in_thread, snapshot_in
from cassette.errors import CassetteError
from cassette.errors import UsageError as CassetteUsageError
from cassette.modes.policy import missing_cassette_message

if TYPE_CHECKING:
    from cassette._fixture.hooks import Matching
    from cassette.client.report import VerifyReport
    from cassette.core.replay.faults import FaultPlan
    from cassette.core.words.volatile import Ignores
    from cassette.modes.policy import ModeChoice
    from cassette.store.pytest_config import PytestSettings
    from cassette.transport import Target

__all__ = ["MCPCassette"]


class MCPCassette:
    """What a test gets from the ``mcp_cassette`` fixture.

    ``path`` is the test's cassette (its first session's), ``mode`` the record mode in
    force and ``mode_source`` where it came from, ``strategy`` the matching strategy
    (``None``: the cassette's own, else ``default``). ``misses`` lists the requests the
    test's sessions could not answer so far.
    """

    def __init__(
        self, item: pytest.Item, side_dir: Path, config: Mapping[str, Any] | None = None
    ) -> None:
        self._item = item
        settings, sources = given_settings(item, config)
        project = project_settings(item.config)
        problem = None
        try:
            self.choice = resolve(
                settings.get("mode"), item.config, sources.get("mode", MARKER_SOURCE)
            )
            matching = self._matching(settings, sources, project)
            self.faults = self._plan(settings.get("faults"))
        except CassetteError as exc:
            problem = str(exc)
        if problem is not None:  # failed outside the handler: one line, no chained report
            pytest.fail(problem, pytrace=False)
        self.strategy: str | None = matching.strategy
        self.ignore: tuple[str, ...] = tuple(matching.ignore)
        #: a used-up request gets its last answer again (the marker's ``allow_repeats``;
        #: ``allow-repeats`` in [tool.cassette] is read by the replay itself)
        self.allow_repeats = matching.allow_repeats
        #: fail the test when its cassette holds recordings it never played
        self.fail_on_unused: bool = flag(
            settings.get("fail_on_unused"),
            item.config.getoption(UNUSED_DEST),
            project.fail_on_unused,
        )
        #: keep what the test recorded even when it fails
        self.record_on_failure: bool = flag(
            settings.get("record_on_failure"),
            item.config.getoption(KEEP_DEST),
            project.record_on_failure,
        )
        self._keep_source = keep_source(
            settings.get("record_on_failure"),
            item.config.getoption(KEEP_DEST),
            sources.get("record_on_failure", MARKER_SOURCE),
        )
        self._hook = project.before_record
        #: recording again (mode ``all``), an answer changed only in values ``verify``
        #: treats as volatile keeps its old line (``keep-volatile`` in [tool.cassette] is
        #: read by the recording itself)
        self.keep_volatile = bool(settings.get("keep_volatile"))
        #: a recording probes the server beside the session (the marker's ``probe``, else
        #: ``probe`` in [tool.cassette.pytest], else in [tool.cassette])
        probe = settings.get("probe")
        self.probe = project.probe if probe is None else bool(probe)
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
        self._fronts: list[HttpFront] = []
        self._consumed = 0
        self._problems: list[tuple[str, str, str]] = []  # (kind, cassette, text), unreported
        self._all_problems: list[tuple[str, str, str]] = []
        self._facts: list[dict[str, Any]] = []
        self._plans = 0
        self.test_failed = False
        self._settled = False
        self._reported_unused: set[str] = set()

    def _matching(
        self, settings: Mapping[str, Any], sources: Mapping[str, str], project: PytestSettings
    ) -> Matching:
        """How this test's requests are matched: the settings, then what the conftests'
        ``pytest_mcp_cassette_matching`` make of them, checked."""
        from cassette._fixture.hooks import Matching
        from cassette.core.replay.matching import check_ignore_pointer, get_strategy

        where = sources.get("ignore", MARKER_SOURCE)
        ignore = ignore_pointers(project.ignore_params, settings.get("ignore", ()), where)
        matching = Matching(
            strategy=settings.get("strategy", project.strategy),
            ignore=list(ignore),
            allow_repeats=bool(settings.get("allow_repeats")),
        )
        self._item.ihook.pytest_mcp_cassette_matching(item=self._item, matching=matching)
        if matching.strategy is not None:
            get_strategy(matching.strategy)
        matching.ignore = list(dict.fromkeys(matching.ignore))
        for pointer in matching.ignore:
            if not isinstance(pointer, str):
                raise CassetteUsageError(
                    f"matching.ignore holds JSON Pointers (strings), not {pointer!r}"
                )
            check_ignore_pointer(pointer)
        return matching

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
        if self.allow_repeats:
            out += ["--allow-repeats"]
        if self.keep_volatile:
            out += ["--keep-volatile"]
        out += ["--probe" if self.probe else "--no-probe"]  # over the project's own
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
        from cassette.modes.runner import ModeOptions, next_session_path
        from cassette.runtime.conversation import DeliveryPolicy

        path = next_session_path(self.cassette_path(name), self._sessions)
        plan = self._faults_for(faults)
        self._require(path, faulted=plan is not None)
        options = ModeOptions(
            target=_upstream(url, headers, self.choice, path),
            transport="streamable-http",
            front="streamable-http",
            strategy=self.strategy,
            policy=DeliveryPolicy(faults=plan),
            ignore=tuple(self.ignore),
            allow_repeats=self.allow_repeats or _project_repeats(),
            before_record=self._hook_callable(before_record),
            volatile=_volatile(self.keep_volatile),
            probe=self.probe,
        )
        front = HttpFront(path, self.choice, options, self._report)
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
        report = in_thread(lambda: snapshot_in(self.choice, plan, ignore, ignore_keys, timeout))
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
    ) -> VerifyPlan:
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
    ) -> VerifyPlan:
        from cassette.client.scenarios import load_scenarios
        from cassette.client.target import ServerTarget

        target = None if server is None else ServerTarget.of(server, transport=transport)
        if self._scenarios_file is None:
            if target is None:
                raise ValueError(
                    "mcp_cassette.verify needs the server (its command line or URL), "
                    f"or a scenarios file: @pytest.mark.{MARKER}(scenarios=...)"
                )
            return VerifyPlan(self.cassette_path(name), target, None)
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
        return VerifyPlan(file.cassette_path(chosen), target, (file, picked))

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
        from cassette.core.replay.faults import FaultPlan

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
            project = project_settings(self._item.config).root
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
            found: Callable[..., Any] = load_hook(spec, project_settings(self._item.config).root)
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
                later = later_session(Path(cassette))
                if later is not None:
                    lines.append(
                        f"    (session {later} of this server: the client started it again; "
                        "each start of a test's server has a numbered cassette of its own)"
                    )
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
        self._share()
        return "\n".join(t for t in [*errors, text, unused] if t)

    def _share(self) -> None:
        """``--mcp-cassette-report FILE``: this test's facts join the run's report (what
        ``cassette prune`` reads), in one write."""
        path = run_report(self._item.config)
        if path is None:
            return
        from cassette.store.report import append_facts

        self._read()
        append_facts(path, self._facts)

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
            elif fact.get("event") == "repeats":
                totals["repeats"] = totals.get("repeats", 0) + int(fact.get("count", 0))
        if totals:
            self._item.user_properties.append(("mcp_cassette", totals))


def later_session(path: Path) -> int | None:
    """The number of a test's later session from its cassette's name (``t.3.jsonl``: 3),
    when the first session's cassette is beside it; ``None`` for a first session."""
    base, _, number = path.stem.rpartition(".")
    if not base or not number.isdigit() or int(number) < 2:
        return None
    return int(number) if path.with_name(base + path.suffix).exists() else None


def _upstream(
    url: str, headers: Mapping[str, str] | None, choice: ModeChoice, path: Path
) -> Target:
    """``server_url``'s server with its headers expanded, when the session reaches it; a
    variable left unset fails the test in one line then, and only then."""
    from cassette.modes.policy import Action, plan
    from cassette.store.headers import project_headers
    from cassette.transport import Target

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


def _volatile(asked: bool) -> Ignores | None:
    """What an in-process re-recording leaves out when it compares answers: asked for by
    the test, or ``keep-volatile`` in [tool.cassette] (a recording process reads it
    itself); the project's ``[tool.cassette.verify]`` ignores beside verify's rules."""
    from cassette.client.snapshots import project_ignores
    from cassette.store.config import load_settings

    settings = load_settings()
    if not asked and settings.get("keep-volatile") is not True:
        return None
    return project_ignores(settings)


def _project_repeats() -> bool:
    """``allow-repeats`` in ``[tool.cassette]`` (an in-process front reads it here; a
    replay process reads it itself)."""
    from cassette.store.config import load_settings

    return load_settings().get("allow-repeats") is True
