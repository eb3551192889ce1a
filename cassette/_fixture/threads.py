"""What the fixture runs on an event loop of its own thread: ``verify`` (a snapshot of a
live server against the cassette) and ``server_url``'s front (a recording proxy or a
replay front, served until the test ends).

A thread starts in milliseconds where a subprocess pays an interpreter and its imports,
it cannot outlive pytest, and stopping it is a cancellation that completes the cassette,
not a signal. A ``CassetteError`` fails the test in one line, not a traceback.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest

from cassette._fixture.settings import STOP_TIMEOUT
from cassette.errors import CassetteError, sole_exception
from cassette.modes.policy import ModeChoice

if TYPE_CHECKING:
    from anyio.abc import TaskStatus
    from anyio.from_thread import BlockingPortal

    from cassette.client.report import VerifyReport
    from cassette.client.scenarios import Scenario, ScenarioFile
    from cassette.client.target import ServerTarget
    from cassette.modes.runner import ModeOptions

__all__ = ["HttpFront", "VerifyPlan", "in_thread", "snapshot_in"]


class VerifyPlan(NamedTuple):
    """What ``verify`` works on: the cassette, the server, and the scenario, if any."""

    path: Path
    server: ServerTarget | None
    scenario: tuple[ScenarioFile, Scenario] | None


async def snapshot_in(
    choice: ModeChoice,
    plan: VerifyPlan,
    ignore: Sequence[str],
    ignore_keys: Sequence[str],
    seconds: float,
) -> VerifyReport:
    from cassette.client.snapshots import SnapshotOptions, project_ignores, snapshot

    ignores = project_ignores().merged(ignore, ignore_keys)
    options = SnapshotOptions(scenario=plan.scenario, ignores=ignores, time_limit=seconds)
    return await snapshot(plan.path, choice, plan.server, options)


def in_thread(func: Callable[[], Awaitable[Any]]) -> Any:
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


class HttpFront:
    """A recording proxy or a replay front for one ``server_url``, in a thread."""

    def __init__(self, path: Path, choice: ModeChoice, options: ModeOptions, report: Path) -> None:
        self.path = path
        self.choice = choice
        self.options = options
        self.report = report
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
        """The front in ``options``' mode until cancelled; it listens on a free port and
        says where through ``task_status``, and what it tells goes to ``info``."""
        import attrs

        from cassette.errors import FaultExit
        from cassette.modes.runner import Report, run_mode
        from cassette.transport import ServeOptions

        info = self.info.append
        policy = attrs.evolve(
            self.options.policy, on_warning=lambda text: info(f"warning: {text}"), on_fault=info
        )
        listen = ServeOptions(on_ready=task_status.started)
        report = Report(self.report, self.path)
        options = attrs.evolve(
            self.options, listen=listen, policy=policy, report=report, on_info=info
        )
        try:
            await run_mode(self.path, self.choice, options)
        except FaultExit as exc:  # the plan stopped the front, as it was asked to
            info(str(exc))

    def stop(self) -> None:
        if self._portal_cm is None:
            return
        try:
            if self._future is not None:
                self._future.cancel()
                concurrent.futures.wait([self._future], timeout=STOP_TIMEOUT)
        finally:
            cm, self._portal_cm = self._portal_cm, None
            cm.__exit__(None, None, None)
