"""A server author's loop against a Python SDK ``MCPServer`` in both eras: record from a
scenarios file, verify the unchanged server, verify a deliberately changed one (a tool
renamed, a schema changed, a text that differs, a field inside JSON text, a volatile
timestamp), ignore the volatile key, answer the server's sampling request from the
cassette, accept the change with ``--update``, and pass again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from cassette import Cassette
from tests.helpers.support import PY, ROOT, python_server, scaled

pytestmark = pytest.mark.e2e

DRIFT_SERVER = ROOT / "tests" / "servers" / "drift_server.py"

SCENARIOS = """\
format = 1

[target]
{target}
era = "{era}"

[answers]
sampling = "Snow, then sun."

[[scenarios]]
name = "weather"
steps = [
  {{ list = "tools" }},
  {{ call = "greet", arguments = {{ name = "Ada" }} }},
  {{ call = "forecast", arguments = {{ city = "Oslo" }} }},
  {{ call = "convert", arguments = {{ amount = 10, currency = "NOK" }} }},
  {{ call = "lookup_station", arguments = {{ station_id = "18700" }} }},
  {{ call = "summarize", arguments = {{ text = "A long report about snow." }} }},
  {{ read = "weather://stations" }},
]
"""
STDIO = f"command = [{json.dumps(PY)}, {json.dumps(str(DRIFT_SERVER))}]"
ERAS = ["legacy", "2026-07-28"]


def cassette_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("DRIFT", "DRIFT_PROMPT", "DRIFT_ASK")}
    return subprocess.run(
        [PY, "-m", "cassette", *args],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
        cwd=cwd,
        env={**clean, **(env or {})},
    )


def recorded(tmp_path: Path, era: str, target: str = STDIO) -> Path:
    (tmp_path / "weather.toml").write_text(SCENARIOS.format(target=target, era=era))
    result = cassette_cli("record", "--scenarios", "weather.toml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "weather.jsonl"


def verify(
    tape: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return cassette_cli(
        "verify", tape.name, *extra, "--", PY, str(DRIFT_SERVER), cwd=tape.parent, env=env
    )


@pytest.mark.parametrize("era", ERAS)
def test_drift_is_found_at_its_paths_ignored_and_accepted(tmp_path: Path, era: str) -> None:
    tape = recorded(tmp_path, era)
    cassette = Cassette.load(tape)
    assert cassette.header.era == ("modern" if era == "2026-07-28" else "legacy")
    asked = "sampling/createMessage" in tape.read_text()
    assert asked  # the server asked for a sample while recording, and the file answered

    # the same server: only the wall-clock field differs, inside the JSON text
    same = verify(tape)
    assert same.returncode == 1, same.stdout + same.stderr
    changed = [line for line in same.stdout.splitlines() if line.startswith("    ")]
    assert len(changed) == 1
    assert changed[0].startswith("    /result/content/0/text#/generatedAt: ")
    ignoring = verify(tape, "--ignore-key", "generatedAt")
    assert ignoring.returncode == 0, ignoring.stdout + ignoring.stderr
    assert "CHANGED" not in ignoring.stdout  # summarize's sampling answered from the cassette

    # the changed server
    drift = verify(tape, "--ignore-key", "generatedAt", env={"DRIFT": "1"})
    assert drift.returncode == 1, drift.stdout + drift.stderr
    out = drift.stdout
    assert '/name: "lookup_station" -> "find_station"' in out  # a tool renamed
    assert '/inputSchema/required/2: (absent) -> "precision"' in out  # a schema changed
    assert '    /result/content/0/text: "Hello, Ada." -> "Hello, Ada!"' in out  # a text
    assert "    /result/content/0/text#/tempC: 4 -> 5" in out  # inside JSON text
    assert "generatedAt" not in out
    lines = out.splitlines()
    assert any(x.startswith("CHANGED             tools/call lookup_station") for x in lines)
    assert not any("summarize" in x and not x.startswith("MATCH") for x in lines)

    # accept it: only the drifted answers' lines change, then the next run passes
    before = tape.read_text().splitlines()
    update = verify(tape, "--ignore-key", "generatedAt", "--update", env={"DRIFT": "1"})
    assert update.returncode == 0, update.stdout + update.stderr
    assert update.stdout.splitlines()[-1] == "weather.jsonl: updated: 5 change(s) written"
    after = tape.read_text().splitlines()
    assert len(after) == len(before)
    assert sum(a != b for a, b in zip(before, after, strict=True)) == 5
    assert not list(tmp_path.glob(".weather.jsonl*"))  # no lock or staging file left
    again = verify(tape, "--ignore-key", "generatedAt", env={"DRIFT": "1"})
    assert again.returncode == 0, again.stdout
    lint = cassette_cli("lint", tape.name, cwd=tmp_path)
    assert lint.returncode == 0, lint.stdout


@pytest.mark.parametrize("era", ERAS)
def test_a_changed_question_from_the_server_is_drift_and_update_accepts_it(
    tmp_path: Path, era: str
) -> None:
    tape = recorded(tmp_path, era)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cassette.verify]\nignore-keys = ["generatedAt"]\n'
    )
    assert verify(tape).returncode == 0  # the project's ignore, no option needed

    reworded = {"DRIFT_PROMPT": "1"}
    asked = verify(tape, env=reworded)
    assert asked.returncode == 1, asked.stdout + asked.stderr
    wording = (
        '/messages/0/content/text: "Summarize: A long report about snow." '
        '-> "Sum up in five words: A long report about snow."'
    )
    if era == "legacy":  # a request of the server's, answered from the closest recording
        assert "SERVER-REQUEST-CHANGED sampling/createMessage" in asked.stdout
        assert f"    /params{wording}" in asked.stdout
    else:  # the same question inside an input_required answer
        assert f"    /result/inputRequests/__main__:ask_model/params{wording}" in asked.stdout
    assert verify(tape, "--update", env=reworded).returncode == 0
    assert verify(tape, env=reworded).returncode == 0


def test_a_question_the_cassette_never_saw_is_drift_not_a_hang(tmp_path: Path) -> None:
    """A legacy session: the changed ``greet`` asks the client's model mid-call, and the
    recording (which never asked anything) has no answer: the server gets an error at once,
    the report says ``UNANSWERED``, and an update refuses to pretend it accepted that."""
    (tmp_path / "greet.toml").write_text(
        f'format = 1\n[target]\n{STDIO}\nera = "legacy"\n\n[answers]\nsampling = "Warmly."\n\n'
        '[[scenarios]]\nname = "greet"\n'
        'steps = [{ call = "greet", arguments = { name = "Ada" } }]\n'
    )
    assert cassette_cli("record", "--scenarios", "greet.toml", cwd=tmp_path).returncode == 0
    tape = tmp_path / "greet.jsonl"
    assert verify(tape).returncode == 0

    asks = {"DRIFT_ASK": "1"}
    asked = verify(tape, env=asks)
    assert asked.returncode == 1, asked.stdout + asked.stderr
    lines = asked.stdout.splitlines()
    assert lines[0].startswith("UNANSWERED          sampling/createMessage {")
    assert lines[0].endswith("(asked by the server)  (greet.jsonl:5)")  # during line 5's call
    assert lines[1] == "    sampling/createMessage was never recorded (recorded: none)"
    assert lines[-1] == "greet.jsonl: 1 ERROR-SHAPE-CHANGED, 1 UNANSWERED"  # greet, refused

    update = verify(tape, "--update", env=asks)
    assert update.returncode == 1, update.stdout + update.stderr
    assert (
        "greet.jsonl: not updated: line 5: the server asks sampling/createMessage, which it "
        "never asked in this recording: record the cassette again" in update.stdout
    ), update.stdout
    assert "greet.jsonl: not updated: line 5: answered after a question" in update.stdout
    assert "greet.jsonl: updated:" not in update.stdout  # nothing was written
    assert "sampling/createMessage" not in tape.read_text()  # no answer was invented
    assert verify(tape, env=asks).returncode == 1  # still drift: nothing pretended it away


def test_a_recording_a_server_rejects_still_says_which_step_failed(tmp_path: Path) -> None:
    (tmp_path / "weather.toml").write_text(SCENARIOS.format(target=STDIO, era="auto"))
    result = cassette_cli("record", "--scenarios", "weather.toml", cwd=tmp_path, env={"DRIFT": "1"})
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "cassette: scenario weather: step 4 (tools/call convert) failed: the tool reported an "
        "error: Error executing tool convert: 1 validation error for convertArguments ...",
        "cassette: scenario weather: step 5 (tools/call lookup_station) failed: the tool "
        "reported an error: Unknown tool: lookup_station",
        "cassette: scenario weather: 7 step(s) recorded in weather.jsonl (2 failed)",
    ]
    assert len(Cassette.load(tmp_path / "weather.jsonl").events) > 10


def test_verify_and_update_over_http(tmp_path: Path) -> None:
    server, port = python_server(DRIFT_SERVER)
    url = f"http://127.0.0.1:{port}/mcp"
    with server:
        tape = recorded(tmp_path, "auto", f'url = "{url}"')
        assert server.stop(signal.SIGTERM) in (0, -signal.SIGTERM)
    assert Cassette.load(tape).header.transport == "streamable-http"
    server, port = python_server(DRIFT_SERVER, env={"DRIFT": "1"})
    url = f"http://127.0.0.1:{port}/mcp"
    with server:
        check = ("verify", tape.name, "--ignore-key", "generatedAt", "--upstream", url)
        drift = cassette_cli(*check, cwd=tmp_path)
        assert drift.returncode == 1, drift.stdout + drift.stderr
        assert "    /result/content/0/text#/tempC: 4 -> 5" in drift.stdout
        assert cassette_cli(*check, "--update", cwd=tmp_path).returncode == 0
        assert cassette_cli(*check, cwd=tmp_path).returncode == 0


def test_a_secret_in_an_answer_is_redacted_matched_and_never_printed(tmp_path: Path) -> None:
    recording_token = "wx_live_4f9a1c7e2b8d6a3f5c1e"
    ci_token = "wx_live_9b2e7d4c1a6f3e8b0d5a"
    target = f'{STDIO}\nenv = {{ WEATHER_TOKEN = "${{WEATHER_TOKEN}}" }}'
    text = SCENARIOS.format(target=target, era="legacy").replace(
        '{ read = "weather://stations" },',
        '{ read = "weather://stations" },\n  { call = "account" },',
    )
    (tmp_path / "weather.toml").write_text(text)
    result = cassette_cli(
        "record",
        "--scenarios",
        "weather.toml",
        cwd=tmp_path,
        env={"WEATHER_TOKEN": recording_token},
    )
    assert result.returncode == 0, result.stderr
    tape = tmp_path / "weather.jsonl"
    assert recording_token not in tape.read_text()
    assert "signed in with [REDACTED:" in tape.read_text()

    # another machine's token: the recorded placeholder matches it, and it is never shown
    check = ("--ignore-key", "generatedAt")
    other = verify(tape, *check, env={"WEATHER_TOKEN": ci_token})
    assert other.returncode == 0, other.stdout + other.stderr
    drift = verify(tape, *check, env={"WEATHER_TOKEN": ci_token, "DRIFT": "1"})
    assert drift.returncode == 1
    assert "tools/call account" in drift.stdout
    assert ci_token not in drift.stdout + drift.stderr
    update = verify(tape, *check, "--update", env={"WEATHER_TOKEN": ci_token, "DRIFT": "1"})
    assert update.returncode == 0, update.stdout + update.stderr
    assert ci_token not in tape.read_text()
    again = verify(tape, *check, env={"WEATHER_TOKEN": recording_token, "DRIFT": "1"})
    assert again.returncode == 0, again.stdout
