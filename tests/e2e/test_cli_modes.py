"""``--mode``, ``--report`` and ``--sessions`` on the command line, as a shell-driven test
suite meets them; ``MCP_CASSETTE_MODE`` too."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette
from tests.helpers.support import PY, ROOT, LineClient, client_starts, scaled

pytestmark = pytest.mark.e2e
SERVER = ROOT / "tests" / "servers" / "episode_server.py"


def server(log: Path, tag: str = "live") -> list[str]:
    return [PY, str(SERVER), "--log", str(log), "--tag", tag]


def starts(log: Path) -> int:
    return client_starts(log)  # the recorder's probes apart


def cassette(*args: str) -> list[str]:
    return [PY, "-m", "cassette", *args]


def no_mode_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "MCP_CASSETTE_MODE"}


def echo(
    argv: list[str], text: str = "a", env: dict[str, str] | None = None
) -> tuple[Any, int, str]:
    """One client session: handshake, one echo; returns (reply, exit code, stderr)."""
    client = LineClient(argv, env=env)
    try:
        client.initialize()
        reply = client.request("tools/call", {"name": "echo", "arguments": {"text": text}})
        code, err = client.finish()
    finally:
        client.kill_group()
    return reply, code, err


def run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, input="", capture_output=True, text=True, timeout=scaled(60), env=env, check=False
    )


def test_record_in_mode_once_records_then_replays(tmp_path: Path) -> None:
    tape, log = tmp_path / "t.jsonl", tmp_path / "starts.log"
    argv = cassette("record", "-o", str(tape), "--mode", "once", "--", *server(log))
    reply, code, err = echo(argv)
    assert (reply["result"]["content"][0]["text"], code) == ("live:a", 0)
    assert "mode once (from --mode)" in err
    assert "is missing; recording it" in err
    again, code, err = echo(argv)
    assert again["result"] == reply["result"]
    assert code == 0
    assert "exists; replaying it" in err
    assert starts(log) == 1


def test_replay_in_mode_none_names_the_missing_path_and_the_mode(tmp_path: Path) -> None:
    tape = tmp_path / "missing.jsonl"
    result = run(cassette("replay", str(tape), "--mode", "none"))
    assert result.returncode == 3
    assert result.stdout == ""
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("cassette: error: ")
    assert str(tape) in line
    assert "mode none (from --mode)" in line


def test_environment_mode_none_keeps_record_from_going_live(tmp_path: Path) -> None:
    tape, log = tmp_path / "t.jsonl", tmp_path / "starts.log"
    env = {**os.environ, "MCP_CASSETTE_MODE": "none"}
    result = run(cassette("record", "-o", str(tape), "--", *server(log)), env=env)
    assert result.returncode == 3
    assert "mode none (from MCP_CASSETTE_MODE)" in result.stderr
    assert starts(log) == 0
    assert not tape.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["record", "-o", "t.jsonl", "--mode", "sometimes", "--", "x"], "'sometimes'"),
        (["record", "-o", "t.jsonl", "--mode", "once", "--overwrite", "--", "x"], "--overwrite"),
        (["replay", "t.jsonl", "--mode", "once"], "a server command goes after --"),
        (["record", "-o", "t.jsonl", "--report", "r.jsonl", "--", "x"], "--report needs a mode"),
        (["replay", "t.jsonl", "--mode", "all", "--front", "http", "--", "x"], "serves on stdio"),
    ],
)
def test_mode_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    result = subprocess.run(
        cassette(*args),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=no_mode_env(),
        timeout=scaled(30),
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_mode_in_the_environment_is_a_usage_error_listing_modes(tmp_path: Path) -> None:
    env = {**os.environ, "MCP_CASSETTE_MODE": "noen"}
    result = run(cassette("record", "-o", str(tmp_path / "t.jsonl"), "--", "x"), env=env)
    assert result.returncode == 2
    assert (
        "unknown record mode 'noen' (from MCP_CASSETTE_MODE; did you mean none?)" in result.stderr
    )
    assert "once, none, all (or its synonym rewrite), new_episodes" in result.stderr


def test_replay_with_a_command_defaults_to_once_and_extends_in_new_episodes(
    tmp_path: Path,
) -> None:
    tape, log = tmp_path / "t.jsonl", tmp_path / "starts.log"
    recorded, _, err = echo(cassette("replay", str(tape), "--", *server(log)), env=no_mode_env())
    assert "mode once:" in err
    assert tape.exists()

    report = tmp_path / "report.jsonl"
    argv = cassette(
        "replay",
        str(tape),
        "--mode",
        "new_episodes",
        "--report",
        str(report),
        "--",
        *server(log, "v2"),
    )
    reply, code, err = echo(argv, text="b")
    assert reply["result"]["content"][0]["text"] == "v2:b"
    assert code == 0
    assert "appended 1 new episode(s)" in err
    facts = [json.loads(line) for line in report.read_text().splitlines()]
    assert [f["event"] for f in facts] == ["session", "episode", "unplayed", "end"]
    assert facts[0]["action"] == "extend"
    assert facts[1]["method"] == "tools/call"
    assert starts(log) == 2
    assert recorded["result"]["content"][0]["text"] == "live:a"


def test_report_records_each_miss_before_the_client_sees_it(tmp_path: Path) -> None:
    tape, log = tmp_path / "t.jsonl", tmp_path / "starts.log"
    echo(cassette("record", "-o", str(tape), "--mode", "once", "--", *server(log)))
    report = tmp_path / "report.jsonl"
    client = LineClient(cassette("replay", str(tape), "--report", str(report), "-q"))
    try:
        client.initialize()
        miss = client.request("tools/call", {"name": "echo", "arguments": {"text": "zzz"}})
        # the error has reached us, so its diagnostics are already in the report
        facts = [json.loads(line) for line in report.read_text().splitlines()]
        code, _ = client.finish()
    finally:
        client.kill_group()
    assert miss["error"]["code"] == -32099
    assert [f["event"] for f in facts] == ["miss"]
    assert 'recorded "a", received "zzz"' in facts[0]["text"]
    assert code == 1


def test_sessions_number_the_cassettes_of_repeated_starts(tmp_path: Path) -> None:
    tape, log, slots = tmp_path / "t.jsonl", tmp_path / "starts.log", tmp_path / "slots"
    argv = cassette(
        "record", "-o", str(tape), "--mode", "once", "--sessions", str(slots), "--", *server(log)
    )
    echo(argv, "first")
    echo(argv, "second")
    second = tmp_path / "t.2.jsonl"
    assert tape.exists()
    assert second.exists()
    texts = [
        [
            m["result"]["content"][0]["text"]
            for m in Cassette.load(p).messages("s2c")
            if "content" in m.get("result", {})
        ]
        for p in (tape, second)
    ]
    assert texts == [["live:first"], ["live:second"]]


def test_an_empty_mode_variable_is_a_usage_error_naming_the_modes(tmp_path: Path) -> None:
    done = subprocess.run(
        [PY, "-m", "cassette", "record", "-o", str(tmp_path / "t.jsonl"), "--", PY, "-c", ""],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        env={**os.environ, "MCP_CASSETTE_MODE": ""},
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "cassette: error: MCP_CASSETTE_MODE is set but empty; set it to one of: "
        "once, none, all (or its synonym rewrite), new_episodes"
    )
    assert not (tmp_path / "t.jsonl").exists()
