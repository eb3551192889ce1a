"""``verify`` over several cassettes: the header's server by default, and a scenarios
file's cassettes against its ``[target]``, each run with one summary and one exit code."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers.support import PY, ROOT, LineClient, record_command, scaled

pytestmark = pytest.mark.e2e

NOTES = [PY, str(ROOT / "examples" / "notes_server.py")]
SCENARIOS = f"""format = 1
cassettes = "cassettes"

[target]
command = {json.dumps(NOTES)}

[[scenarios]]
name = "listing"
steps = [{{ list = "tools" }}]

[[scenarios]]
name = "noting"
steps = [{{ call = "add_note", arguments = {{ text = "a" }} }}]
"""


def cassette(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "cassette", *args],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
        cwd=cwd,
    )


def recorded(tape: Path, text: str) -> Path:
    client = LineClient(record_command(tape, NOTES))
    client.initialize()
    client.request("tools/call", {"name": "add_note", "arguments": {"text": text}})
    code, _ = client.finish()
    assert code == 0
    return tape


def test_several_cassettes_against_the_servers_their_headers_name(tmp_path: Path) -> None:
    one = recorded(tmp_path / "one.jsonl", "x")
    two = recorded(tmp_path / "two.jsonl", "y")
    result = cassette("verify", str(one), str(two), cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert f"{one}: 1 MATCH" in lines
    assert f"{two}: 1 MATCH" in lines
    assert lines[-1] == "2 cassette(s) verified: 2 as recorded, 0 drifted"
    listed = json.loads(cassette("verify", str(one), str(two), "--format", "json", cwd=ROOT).stdout)
    assert listed["ok"] is True
    assert [r["cassette"] for r in listed["reports"]] == [str(one), str(two)]


def test_a_scenarios_file_is_verified_against_its_target(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SCENARIOS)
    made = cassette("record", "--scenarios", "s.toml", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    result = cassette("verify", "--scenarios", "s.toml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == (
        "s.toml: 2 scenario(s) verified: 2 as recorded, 0 drifted"
    )
    one = cassette("verify", "--scenarios", "s.toml", "--scenario", "noting", cwd=tmp_path)
    assert one.stdout.splitlines()[-1] == "s.toml: 1 scenario(s) verified: 1 as recorded, 0 drifted"
    # the server changed: one summary, one exit code, and --update takes the change
    changed = tmp_path / "changed_server.py"
    changed.write_text(
        (ROOT / "examples" / "notes_server.py").read_text().replace("note(s) kept", "kept")
    )
    (tmp_path / "s.toml").write_text(SCENARIOS.replace(NOTES[1], str(changed)))
    drifted = cassette("verify", "--scenarios", "s.toml", cwd=tmp_path)
    assert drifted.returncode == 1, drifted.stdout + drifted.stderr
    assert drifted.stdout.splitlines()[-1] == (
        "s.toml: 2 scenario(s) verified: 1 as recorded, 1 drifted"
    )
    updated = cassette("verify", "--scenarios", "s.toml", "--update", cwd=tmp_path)
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert updated.stdout.splitlines()[-1].endswith(", 1 updated")
    assert cassette("verify", "--scenarios", "s.toml", cwd=tmp_path).returncode == 0


def test_scenarios_take_the_server_from_the_file(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SCENARIOS)
    result = cassette("verify", "--scenarios", "s.toml", "--", "node", "x.js", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("cassette: error: verify --scenarios takes the cassettes")
