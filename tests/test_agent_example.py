"""examples/agent runs offline, with neither a model key nor the network.

Kept out of tests/test_examples.py on purpose: that module is in the portable subset
(tests/conftest.py), which runs with the ``portable`` dependency group alone, and this
example needs the ``test`` group's official SDK and pytest-recording. The whole suite
(scripts/test.sh, what .ci/run runs) always has them, so here it never skips."""

from __future__ import annotations

import os
import subprocess

from tests.helpers.support import PY, ROOT, scaled

AGENT_TESTS = ROOT / "examples" / "agent" / "tests"


def test_the_agent_example_runs_offline_without_a_key() -> None:
    """The model through committed pytest-recording cassettes, the MCP server through
    committed cassette-mcp ones. No key, no network (pytest-recording's
    --block-network, and a proxy that goes nowhere for anything that slipped past), and
    MCP_CASSETTE_MODE=none so a missing MCP cassette fails instead of starting a server."""
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env |= {
        "MCP_CASSETTE_MODE": "none",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }
    argv = [PY, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--block-network"]
    result = subprocess.run(
        [*argv, "-rA", str(AGENT_TESTS)],
        capture_output=True,
        timeout=scaled(120),
        check=False,
        cwd=ROOT,
        env=env,
    )
    out = result.stdout.decode()
    assert result.returncode == 0, out + result.stderr.decode()
    assert "2 passed" in out
    for test in (
        "test_the_agent_answers_with_the_forecast",
        "test_the_agent_recovers_when_the_server_times_out",
    ):
        assert f"PASSED {AGENT_TESTS.relative_to(ROOT).as_posix()}/test_agent.py::{test}" in out
    # both sessions replayed, none recorded: nothing was started
    assert "mcp-cassette: sessions: 2 replayed" in out
