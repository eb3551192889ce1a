"""The pytest plugin: the ``mcp_cassette`` fixture, marker and ``--mcp-cassette-mode``;
the ``mcp_cassette_config`` fixture a module, class or conftest overrides; the
``pytest_mcp_cassette_matching`` hook; and pytest-recording's ``--record-mode``, which
is registered here when pytest-recording is not there to register it.

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

This module is what pytest loads: the options, the marker, the fixture and the hooks. Its
parts are in ``cassette._fixture``: what the fixture is told (``settings``), its value
(``fixture.MCPCassette``), and what it runs in a thread (``threads``). Only the standard
library, pytest and ``cassette.modes.policy`` are imported when pytest starts; everything
else when a test first uses the fixture.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest

from cassette._fixture import hooks
from cassette._fixture.fixture import MCPCassette
from cassette._fixture.hooks import Matching
from cassette._fixture.settings import (
    CONFIG_FIXTURE,
    KEEP_DEST,
    KEEP_OPTION,
    MARKER,
    MODE_DEST,
    OPTION,
    PEER_DEST,
    PEER_OPTION,
    REPORT_DEST,
    REPORT_OPTION,
    SETTINGS,
    UNUSED_DEST,
    UNUSED_OPTION,
    default_path,
    file_safe,
    resolve,
    run_report,
)
from cassette.errors import CassetteError
from cassette.modes.policy import ENV_VAR

__all__ = [
    "CONFIG_FIXTURE",
    "KEEP_OPTION",
    "MARKER",
    "OPTION",
    "UNUSED_OPTION",
    "MCPCassette",
    "Matching",
    "default_path",
    "file_safe",
    "mcp_cassette",
    "mcp_cassette_config",
    "pytest_addhooks",
    "pytest_addoption",
    "pytest_configure",
    "pytest_load_initial_conftests",
    "pytest_runtest_call",
]

_FIXTURE: Final = pytest.StashKey[MCPCassette]()


# -- registration --------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcp-cassette", "record and replay MCP sessions (cassette-mcp)")
    group.addoption(
        OPTION,
        dest=MODE_DEST,
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
        dest=UNUSED_DEST,
        action="store_true",
        default=None,
        help="fail a test whose cassette holds recordings it never played, listing them",
    )
    group.addoption(
        REPORT_OPTION,
        dest=REPORT_DEST,
        metavar="FILE",
        default=None,
        help="write every session's facts to FILE (JSON lines, written anew each run): what "
        "cassette prune TAPE --against FILE reads to drop the recordings no test played",
    )
    group.addoption(
        KEEP_OPTION,
        dest=KEEP_DEST,
        action="store_true",
        default=None,
        help="keep what a test recorded (or appended) even when the test fails; by default "
        "it is discarded, so once does not replay a failing run forever",
    )


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hooks)


#: pytest-recording's plugin module: when it is loaded, ``--record-mode`` is its option
_PEER_PLUGIN: Final = "pytest_recording.plugin"


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> Iterator[None]:
    """``--record-mode``, registered here when no plugin registered it: so ``pytest
    --record-mode=none`` replays only whether or not pytest-recording is installed (its
    option, when it is, is read as it stands). After every plugin, the ``-p`` ones and
    the initial conftests' ``pytest_plugins`` have had their say, and before the command
    line is parsed for good; pytest refuses an option registered twice, so it must be
    certain pytest-recording is not there."""
    result = yield
    if not _has_record_mode(early_config.pluginmanager, parser):
        parser.getgroup("mcp-cassette").addoption(
            PEER_OPTION,
            dest=PEER_DEST,
            metavar="MODE",
            default=None,
            help=f"the same as {OPTION} (pytest-recording's option, for MCP cassettes; "
            "registered by cassette-mcp because pytest-recording is not loaded)",
        )
    return result


def _has_record_mode(pluginmanager: pytest.PytestPluginManager, parser: pytest.Parser) -> bool:
    """Whether a loaded plugin registered ``--record-mode``: pytest-recording (by its
    module, however it was loaded), or any other (by the options the parser holds)."""
    if any(getattr(p, "__name__", None) == _PEER_PLUGIN for p in pluginmanager.get_plugins()):
        return True
    groups = [getattr(parser, "_anonymous", None), *getattr(parser, "_groups", ())]
    for group in groups:
        for option in getattr(group, "options", ()):
            if PEER_OPTION in option.names():
                return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(path=None, *, mode=None, strategy=None, ignore=(), faults=None, "
        "fail_on_unused=None, record_on_failure=None, scenarios=None, scenario=None, "
        "allow_repeats=None, keep_volatile=None, probe=None): the "
        "cassette the mcp_cassette fixture uses (a path relative to the test file), its record "
        "mode, matching strategy, params never matched on, fault plan, and what happens to "
        "unused recordings, to a failing test's recording, to a request whose "
        "recordings are used up and to answers recorded again that changed only in "
        "volatile values; whether a recording probes the server beside the session "
        "(probe=False: not); for mcp_cassette.verify, a "
        "scenarios file (relative to the test file) and the scenario whose cassette it "
        "verifies (cassette-mcp; docs/pytest.md)",
    )
    config.pluginmanager.register(_Totals(), "cassette-mcp-totals")
    report = run_report(config)
    if report is not None and not hasattr(config, "workerinput"):  # xdist: once, not per worker
        _fresh(report)
    try:  # a typo must stop the run before anything goes live
        from cassette.store.pytest_config import pytest_settings

        config.stash[SETTINGS] = pytest_settings(config.rootpath)
        resolve(None, config)
    except CassetteError as exc:
        raise pytest.UsageError(str(exc)) from None


@pytest.fixture(scope="module")
def mcp_cassette_config() -> dict[str, Any]:
    """The ``mcp_cassette`` settings of the tests that see this fixture: override it in a
    module, a class or a conftest and return a dict of the marker's keywords (``{"mode":
    "none", "ignore": ["/params/arguments/at"]}``), as pytest-recording's ``vcr_config``.
    A marker's argument wins over it; it wins over ``[tool.cassette.pytest]``. None by
    default (cassette-mcp; docs/pytest.md)."""
    return {}


@pytest.fixture
def mcp_cassette(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    mcp_cassette_config: Any,
) -> Iterator[MCPCassette]:
    """Record an MCP server the first time, replay it from then on (cassette-mcp).

    ``mcp_cassette.server_command(argv)`` for a stdio server, ``server_url(url)`` for a
    streamable-HTTP one; see docs/pytest.md.
    """
    item = request.node
    assert isinstance(item, pytest.Item)
    side = tmp_path_factory.mktemp("mcp-cassette")
    fixture = MCPCassette(item, side, mcp_cassette_config)
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


def _fresh(report: Path) -> None:
    """The run's report starts empty: a prune goes by this run's replays only."""
    from cassette.store.report import start_report

    try:
        start_report(report)
    except OSError as exc:
        raise pytest.UsageError(f"{REPORT_OPTION} {report}: cannot write it: {exc}") from None


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
        if totals.get("repeats"):
            parts.append(f"{totals['repeats']} answer(s) repeated (allow_repeats)")
        if parts:
            terminalreporter.write_line(f"mcp-cassette: sessions: {', '.join(parts)}")
