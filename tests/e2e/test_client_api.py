"""The server-testing loop from Python, as docs/library.md shows it: ``cassette.client``
runs a scenarios file, verifies the cassette against the live server and updates it, and
every outcome is a value to assert on (no output to parse). The server is the Python SDK
weather server of the other server-testing tests, unchanged and then changed."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from cassette import Cassette
from tests.helpers.support import PY, ROOT, run

pytestmark = pytest.mark.e2e

DRIFT_SERVER = ROOT / "tests" / "servers" / "drift_server.py"

SCENARIOS = f"""\
format = 1
cassettes = "tapes"

[target]
command = [{json.dumps(PY)}, {json.dumps(str(DRIFT_SERVER))}]
era = "legacy"

[[scenarios]]
name = "weather"
steps = [
  {{ call = "greet", arguments = {{ name = "Ada" }} }},
  {{ call = "forecast", arguments = {{ city = "Oslo" }} }},
  {{ call = "no-such-tool" }},
]
"""


def test_scenarios_verify_and_update_are_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cassette.client import (
        Ignores,
        ServerTarget,
        VerifyOptions,
        load_scenarios,
        record_scenarios,
        verify,
    )

    for name in ("DRIFT", "DRIFT_PROMPT", "DRIFT_ASK"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "weather.toml").write_text(SCENARIOS)
    scenarios = load_scenarios(tmp_path / "weather.toml")
    assert list(scenarios.names) == ["weather"]

    (result,) = run(lambda: record_scenarios(scenarios))
    tape = tmp_path / "tapes" / "weather.jsonl"
    assert Path(result.cassette) == tape
    assert not result.ok  # the unknown tool was refused, and the step did not expect it
    assert [s.step.index for s in result.failed] == [3]
    assert Cassette.load(tape).header.era == "legacy"

    command = [PY, str(DRIFT_SERVER)]
    volatile = VerifyOptions(ignores=Ignores(keys=["generatedAt"]))
    same = run(lambda: verify(tape, command, volatile))
    assert same.ok
    assert [v.status for v in same.verdicts] == ["MATCH"] * 3

    changed = ServerTarget(command=command, env={"DRIFT": "1"})
    drift = run(lambda: verify(tape, changed, volatile))
    assert not drift.ok
    assert [(v.status, v.request.split()[1]) for v in drift.drift] == [
        ("CHANGED", "greet"),
        ("CHANGED", "forecast"),
    ]
    assert drift.drift[1].paths == (("/result/content/0/text#/tempC", 4, 5),)  # inside JSON
    with pytest.raises(AssertionError, match=r"the server drifted:\n"):
        drift.assert_ok()

    before = tape.read_text()
    updating = attrs.evolve(volatile, update=True)
    update = run(lambda: verify(tape, changed, updating))
    assert (update.updated, update.kept, update.ok) == (True, (), True)
    assert tape.read_text() != before
    again = run(lambda: verify(tape, changed, volatile))
    assert again.ok, again.text()
    assert again.as_data()["ok"] is True
