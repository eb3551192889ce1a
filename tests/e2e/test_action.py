"""The GitHub Action's steps (scripts/action.py), run here as the runner runs them, with a
fake ``GITHUB_STEP_SUMMARY`` and ``GITHUB_OUTPUT``: a verify that finds a changed answer,
one that finds none, and replay-only tests with a miss."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.helpers.support import PY, ROOT, scaled

pytestmark = pytest.mark.e2e

ACTION = ROOT / "scripts" / "action.py"
STEADY = ROOT / "tests" / "servers" / "steady_server.py"
SCENARIOS = f"""\
format = 1

[target]
command = [{json.dumps(PY)}, {json.dumps(str(STEADY))}]
era = "legacy"

[[scenarios]]
name = "weather"
steps = [
  {{ call = "greet", arguments = {{ name = "Ada" }} }},
  {{ call = "forecast", arguments = {{ city = "Oslo" }} }},
]
"""


def step(
    tmp_path: Path, name: str, **inputs: str
) -> tuple[subprocess.CompletedProcess[str], str, str]:
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    summary.write_text("", encoding="utf-8")
    output.write_text("", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "MCP_CASSETTE"))}
    env |= {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output)}
    env |= {f"INPUT_{k.upper()}": v for k, v in inputs.items()}
    done = subprocess.run(
        [PY, str(ACTION), name], capture_output=True, text=True, timeout=scaled(120), check=False,
        cwd=tmp_path, env=env,
    )  # fmt: skip
    return done, summary.read_text(encoding="utf-8"), output.read_text(encoding="utf-8")


@pytest.fixture
def tapes(tmp_path: Path) -> Path:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    (folder / "s.toml").write_text(SCENARIOS, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "STEADY_TEMP"}
    done = subprocess.run(
        [PY, "-m", "cassette", "record", "--scenarios", "s.toml"], cwd=folder, capture_output=True,
        text=True, timeout=scaled(120), check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return folder


def test_verify_summarises_a_changed_answer(
    tmp_path: Path, tapes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = shlex.join([PY, str(STEADY)])
    done, summary, output = step(tmp_path, "verify", verify=str(tapes), server=server)
    assert done.returncode == 0, done.stderr
    assert "| 2 match | 0 drifted |" in summary
    assert "Every answer matches its recording." in summary
    assert "changed=0" in output

    monkeypatch.setenv("STEADY_TEMP", "7")
    done, summary, output = step(tmp_path, "verify", verify=str(tapes), server=server)
    assert done.returncode == 1
    assert "| 1 match | 1 drifted |" in summary
    assert 'CHANGED tools/call forecast {"city":"Oslo"} /result/content/0/text' in summary
    assert "changed=1" in output


def test_replay_only_tests_summarise_their_misses(tmp_path: Path, tapes: Path) -> None:
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "x", "version": "1"},
    }
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "nope", "arguments": {}},
        },
    ]
    (tmp_path / "frames.jsonl").write_text(
        "".join(json.dumps(f) + "\n" for f in frames), encoding="utf-8"
    )
    tape = tapes / "weather.jsonl"
    replay = shlex.join([PY, "-m", "cassette", "replay", str(tape), "-q"])
    run = f'test "$MCP_CASSETTE_MODE" = none && {replay} < frames.jsonl'
    done, summary, output = step(tmp_path, "test", run=run)
    assert done.returncode == 1, done.stdout  # the replay's exit code: a miss
    assert "**1 miss(es)**" in summary
    assert 'tools/call "nope" was never recorded' in summary
    assert "misses=1" in output


def test_the_action_runs_the_script_it_ships() -> None:
    yaml = pytest.importorskip("yaml")
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    commands = " ".join(s["run"] for s in action["runs"]["steps"])
    for name in ("install", "test", "verify", "scan"):
        assert f'"$GITHUB_ACTION_PATH/scripts/action.py" {name}' in commands


def test_actionlint_passes_on_both_workflows() -> None:
    actionlint = Path(PY).with_name("actionlint")
    if not actionlint.exists():
        pytest.skip("needs actionlint (the release dependency group)")
    workflows = [ROOT / ".github" / "workflows" / name for name in ("ci.yml", "release.yml")]
    done = subprocess.run(
        [str(actionlint), *map(str, workflows)],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_scan_summarises_secrets_and_suspects_and_fails(tmp_path: Path) -> None:
    from tests.unit.test_suspects import ODD, tape

    folder = tmp_path / "cassettes"
    folder.mkdir()
    (folder / "clean.jsonl").write_bytes(tape({"text": "sunny"}).dumps())
    leaky = tape({"text": "token ghp_" + "a1B2" * 9}, {"structuredContent": {"handle": ODD}})
    (folder / "leaky.jsonl").write_bytes(leaky.dumps())
    done, summary, output = step(tmp_path, "scan", scan=str(folder))
    assert done.returncode == 1, done.stderr
    assert "**1 secret(s), 1 suspect(s)** in 2 cassette(s)" in summary
    assert "leaky.jsonl:3: unredacted secret (github)" in summary
    assert "/message/result/structuredContent/handle" in summary
    assert ODD not in summary
    assert "secrets=1\nsuspects=1" in output
    (folder / "leaky.jsonl").unlink()
    done, summary, output = step(tmp_path, "scan", scan=str(folder))
    assert done.returncode == 0, done.stderr
    assert "No secret and no suspect in 1 cassette(s)." in summary
