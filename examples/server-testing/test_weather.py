"""The weather server's regression suite: one test per scenario of scenarios.toml.

Run it with `MCP_CASSETTE_MODE=none pytest` in CI: each test re-fires its cassette's
requests at the live server and fails with the diff when an answer drifted.
"""

from pathlib import Path

import pytest

from cassette.client import load_scenarios

SCENARIOS = Path(__file__).parent / "scenarios.toml"


@pytest.mark.mcp_cassette(scenarios="scenarios.toml")
@pytest.mark.parametrize("scenario", load_scenarios(SCENARIOS).names)
def test_server_answers_as_recorded(mcp_cassette, scenario):
    mcp_cassette.verify(scenario=scenario).assert_ok()
