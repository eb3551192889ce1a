"""Suite-wide settings: Hypothesis runs without per-example deadlines, because CI machines
are shared and noisy and no test here may depend on timing to pass."""

import contextlib
import os
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("cassette", deadline=None, print_blob=True)
# The longer fuzz run of docs/reliability.md: CASSETTE_FUZZ=1 pytest tests/unit -k hostile
settings.register_profile("fuzz", deadline=None, print_blob=True, max_examples=20_000)
settings.load_profile("fuzz" if os.environ.get("CASSETTE_FUZZ") else "cassette")

# pytester drives the pytest plugin black-box (tests/plugin). pytest accepts
# ``pytest_plugins`` only in a top-level conftest, so it is enabled here.
pytest_plugins = ["pytester"]

# pytester's in-process runs drop every module first imported during the inner run. httpx
# caches the httpcore exception classes it maps on first use; if httpcore was first
# imported inside an inner run (a server_url front), a later import makes new classes
# that cache no longer knows, and an httpcore.ConnectError escapes unmapped. Importing it
# here keeps one httpcore for the whole session.
with contextlib.suppress(ImportError):
    import httpcore  # noqa: F401

# A developer's or CI's record mode must not change what this suite's own commands do;
# the tests that are about MCP_CASSETTE_MODE set it themselves.
os.environ.pop("MCP_CASSETTE_MODE", None)
# Nor may running under CI (``CI=true`` makes the plugin's default mode none); the tests
# about it set it themselves.
os.environ.pop("CI", None)
# Nor may a machine's colour setting: FORCE_COLOR would paint the reports the tests read
# through pipes (tests/e2e/test_colour.py sets it, and NO_COLOR, where it means to).
os.environ.pop("FORCE_COLOR", None)

# The portable subset (`pytest -m portable`): modules that need Python and the `portable`
# dependency group alone (no Node.js, no browser, no import linter) and no POSIX-only call,
# so they run on Linux, macOS and Windows; a test in them that needs a POSIX feature skips
# on Windows by itself. .github/workflows/ci.yml runs it on three systems with Python
# 3.11-3.13; scripts/matrix.sh runs a smoke part of it on 3.12 and 3.13. One list here
# rather than a mark in each file: porting is reviewed in one place. CONTRIBUTING.md says
# what it covers.
PORTABLE = frozenset(
    {
        "tests/test_docs_links.py",
        "tests/test_examples.py",
        "tests/test_packaging.py",
        "tests/test_platform_guards.py",
        "tests/e2e/test_cli.py",
        "tests/plugin/test_plugin.py",
        "tests/unit/test_check_suite.py",
        "tests/unit/test_cli_mistakes.py",
        "tests/unit/test_codec.py",
        "tests/unit/test_hostile_input.py",
        "tests/unit/test_http_extend.py",
        "tests/unit/test_http_front.py",
        "tests/unit/test_http_proxy_faults.py",
        "tests/unit/test_http_proxy_fuzz.py",
        "tests/unit/test_limits.py",
        "tests/unit/test_load_paths.py",
        "tests/unit/test_lock_and_append.py",
        "tests/unit/test_matching.py",
        "tests/unit/test_memory_replay.py",
        "tests/unit/test_mock.py",
        "tests/unit/test_modes.py",
        "tests/unit/test_plugin_registry.py",
        "tests/unit/test_recorder.py",
        "tests/unit/test_redaction.py",
        "tests/unit/test_replayer.py",
        "tests/unit/test_server_initiated.py",
        "tests/unit/test_small_parts.py",
        "tests/unit/test_sse_parser.py",
        "tests/unit/test_sse_transport.py",
        "tests/unit/test_tools_check.py",
        "tests/unit/test_tools_distill.py",
        "tests/unit/test_tools_lint.py",
        "tests/unit/test_tools_show.py",
    }
)
_ROOT = Path(__file__).resolve().parent.parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the portable subset (above) with ``portable``, and it and the unit tests with
    ``quick``: the loop of ``scripts/test.sh --quick``, which needs no Node.js, browser or
    other Python (CONTRIBUTING.md)."""
    for item in items:
        where = item.path.relative_to(_ROOT).as_posix()
        if where in PORTABLE:
            item.add_marker(pytest.mark.portable)
        if where in PORTABLE or where.startswith("tests/unit/"):
            item.add_marker(pytest.mark.quick)


# The cross-client matrix (tests/e2e/test_client_matrix.py) leaves one result per cell in
# build/client-matrix/; at the end of the run (on the xdist controller, or the only
# process) they become the table build/client-matrix.md. Here, not in tests/e2e, because
# the xdist controller loads only this conftest.
def _matrix_worker(config: object) -> bool:
    return hasattr(config, "workerinput")


_STRETCHED = "_CASSETTE_STRETCHED_TIMEOUT"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Stretch pytest-timeout's per-test limit (``timeout`` in pyproject.toml) as
    ``tests.helpers.support.scaled`` stretches every other deadline, unless ``--timeout`` or
    ``PYTEST_TIMEOUT`` names one: given to pytest-timeout as ``PYTEST_TIMEOUT`` before it
    reads its settings (``tryfirst``), and taken away again once it has (below), so that
    no process the tests start (an inner pytest run) inherits it. Each xdist worker
    inherits the stretched limit, and forgets it likewise."""
    from tests.helpers.support import scaled

    ini = config.getini("timeout")
    if ini and config.getoption("timeout", None) is None and "PYTEST_TIMEOUT" not in os.environ:
        os.environ["PYTEST_TIMEOUT"] = os.environ[_STRETCHED] = f"{scaled(float(ini)):.0f}"
    _matrix_configure(config)


def pytest_sessionstart(session: pytest.Session) -> None:
    """pytest-timeout has read its settings: the stretched limit leaves the environment."""
    if os.environ.get(_STRETCHED) == os.environ.get("PYTEST_TIMEOUT") is not None:
        del os.environ["PYTEST_TIMEOUT"], os.environ[_STRETCHED]


def _matrix_configure(config: object) -> None:
    import shutil

    from tests.e2e.matrix_table import RESULTS

    if not _matrix_worker(config):
        shutil.rmtree(RESULTS, ignore_errors=True)  # only this run's cells make the table


def pytest_sessionfinish(session: object) -> None:
    from tests.e2e.matrix_table import RESULTS, TABLE, write_table

    config = session.config  # type: ignore[attr-defined]
    if _matrix_worker(config) or not RESULTS.is_dir():
        return
    if write_table(TABLE):
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"client matrix: {TABLE}")
