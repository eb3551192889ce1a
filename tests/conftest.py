"""Suite-wide settings: Hypothesis runs without per-example deadlines, because CI machines
are shared and noisy and no test here may depend on timing to pass."""

import os

from hypothesis import settings

settings.register_profile("cassette", deadline=None, print_blob=True)
# The longer fuzz run of docs/reliability.md: CASSETTE_FUZZ=1 pytest tests/unit -k hostile
settings.register_profile("fuzz", deadline=None, print_blob=True, max_examples=20_000)
settings.load_profile("fuzz" if os.environ.get("CASSETTE_FUZZ") else "cassette")

# pytester drives the pytest plugin black-box (tests/plugin). pytest accepts
# ``pytest_plugins`` only in a top-level conftest, so it is enabled here.
pytest_plugins = ["pytester"]

# A developer's or CI's record mode must not change what this suite's own commands do;
# the tests that are about MCP_CASSETTE_MODE set it themselves.
os.environ.pop("MCP_CASSETTE_MODE", None)


# The cross-client matrix (tests/e2e/test_client_matrix.py) leaves one result per cell in
# build/client-matrix/; at the end of the run (on the xdist controller, or the only
# process) they become the table build/client-matrix.md. Here, not in tests/e2e, because
# the xdist controller loads only this conftest.
def _matrix_worker(config: object) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: object) -> None:
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
