"""check against the pinned server-everything, live and as a replay of its recording."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.support import (
    MODERN_SERVER,
    OFFLINE_ENV,
    PY,
    ROOT,
    Background,
    LineClient,
    everything_command,
    record_command,
    replay_command,
    scaled,
)

pytestmark = pytest.mark.e2e


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "cassette", "check", *args],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
    )


EXPECTED = [
    "server: mcp-servers/everything 2.0.0",
    "protocol: 2025-11-25 (legacy era)",
    "surface: 13 tools, 7 resources, 4 prompts, 2 resource templates",
    "result: PASS (0 errors, 0 warnings)",
]


def test_live_server_and_replay_of_its_recording_give_the_same_report(tmp_path: Path) -> None:
    tape = tmp_path / "check.jsonl"
    live = check("--stdio", shlex.join(record_command(tape, everything_command())))
    assert live.returncode == 0, live.stderr
    assert live.stdout.splitlines() == EXPECTED
    replayed = check("--stdio", shlex.join(replay_command(tape)))
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == live.stdout
    as_json = json.loads(
        check("--stdio", shlex.join(replay_command(tape)), "--format", "json").stdout
    )
    assert as_json["counts"] == {"tools": 13, "resources": 7, "prompts": 4, "templates": 2}
    assert as_json["result"] == "PASS"


def test_a_stdio_recording_served_over_http_gives_the_same_report(tmp_path: Path) -> None:
    tape = tmp_path / "check.jsonl"
    live = check("--stdio", shlex.join(record_command(tape, everything_command())))
    assert live.returncode == 0, live.stderr
    front = [PY, "-m", "cassette", "replay", str(tape), "--front", "http", "-q"]
    with Background(front) as server:
        match = server.wait_for(r"serving on (http://\S+)")
        over_http = check("--url", match.group(1))
    assert over_http.returncode == 0, over_http.stderr
    assert over_http.stdout == live.stdout


def test_findings_fail_the_check(tmp_path: Path) -> None:
    server = tmp_path / "server.py"
    server.write_text(
        "import json, sys\n"
        "tools = [{'name': 'dup', 'inputSchema': {'type': 'object'}},"
        " {'name': 'dup', 'description': 'd', 'inputSchema': {'type': 'object'}}]\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if 'id' not in m: continue\n"
        "    if m['method'] == 'initialize':\n"
        "        r = {'protocolVersion': '2025-11-25', 'serverInfo': {'name': 's', 'version': '0'},"
        " 'capabilities': {'tools': {}, 'prompts': {}}}\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n"
        "    elif m['method'] == 'tools/list':\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {'tools': tools}}),"
        " flush=True)\n"
        "    else:\n"
        "        e = {'code': -32601, 'message': 'nope'}\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'error': e}), flush=True)\n"
    )
    result = check("--stdio", shlex.join([sys.executable, str(server)]))
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines() == [
        "server: s 0",
        "protocol: 2025-11-25 (legacy era)",
        "surface: 2 tools, 0 resources, 0 prompts, 0 resource templates",
        'warning: tool "dup": no description',
        'error: tool "dup": duplicate tool name',
        "error: prompts advertised but prompts/list failed: -32601 nope",
        "result: FAIL (2 errors, 1 warnings)",
    ]


def test_connection_and_usage_errors_exit_2(tmp_path: Path) -> None:
    gone = check("--stdio", str(tmp_path / "no-such-server"))
    assert gone.returncode == 2
    missing = str(tmp_path / "no-such-server")
    assert gone.stderr == f"cassette: error: cannot start server {missing!r}: " + (
        "No such file or directory\n"
    )
    silent = check("--stdio", shlex.join([sys.executable, "-c", "pass"]))
    assert silent.returncode == 2
    closed = "cassette: error: the server closed the connection before answering\n"
    assert silent.stderr == closed
    # A server that shuts its stdin but keeps running makes our write fail (a broken pipe,
    # not an end of output): the same failure, so the same line.
    deaf = "import os, sys; os.close(0); sys.stdout.close()"
    assert check("--stdio", shlex.join([sys.executable, "-c", deaf])).stderr == closed
    assert check().returncode == 2  # neither --stdio nor --url


MODERN = [
    "server: cassette-test-modern 1.2.3",
    "protocol: 2026-07-28 (modern era)",
    "surface: 4 tools, 1 resources, 1 prompts, 0 resource templates",
    "result: PASS (0 errors, 0 warnings)",
]


def test_a_modern_server_live_and_replayed_gives_the_same_modern_report(tmp_path: Path) -> None:
    tape = tmp_path / "modern-check.jsonl"
    server = [PY, str(MODERN_SERVER)]
    live = check("--stdio", shlex.join(record_command(tape, server)))
    assert live.returncode == 0, live.stderr
    assert live.stdout.splitlines() == MODERN  # auto discovered the modern era
    header = json.loads(tape.read_text().splitlines()[0])
    assert (header["era"], header["protocol_version"]) == ("modern", "2026-07-28")
    replay = [*replay_command(tape), "--strategy", "strict"]  # every request recorded once
    replayed = subprocess.run(
        [PY, "-m", "cassette", "check", "--stdio", shlex.join(replay), "--era", "modern"],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
        env=OFFLINE_ENV,  # no live server could answer
    )
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == live.stdout
    as_json = json.loads(check("--stdio", shlex.join(server), "--format", "json").stdout)
    assert (as_json["era"], as_json["protocol"]) == ("modern", "2026-07-28")


def test_the_era_can_be_forced(tmp_path: Path) -> None:
    legacy = check("--stdio", shlex.join([PY, str(MODERN_SERVER)]), "--era", "legacy")
    assert legacy.returncode == 0, legacy.stderr
    assert legacy.stdout.splitlines()[1] == "protocol: 2025-11-25 (legacy era)"
    modern_only = check("--stdio", shlex.join(everything_command()), "--era", "modern")
    assert modern_only.returncode == 2
    assert modern_only.stderr == (
        'cassette: error: the server refused server/discover: {"code": -32601, '
        '"message": "Method not found"}\n'
    )
    assert check("--stdio", "true", "--era", "future").returncode == 2


def _with_command(tape: Path, command: list[str]) -> None:
    """``tape`` with its header naming ``command`` as the recorded server."""
    lines = tape.read_text().splitlines()
    header = json.loads(lines[0])
    header["target"]["command"] = command
    tape.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")


@pytest.mark.parametrize(
    ("server", "expected"), [(None, EXPECTED), ([PY, str(MODERN_SERVER)], MODERN)]
)
def test_check_tape_reads_the_recording_offline_and_starts_nothing(
    tmp_path: Path, server: list[str] | None, expected: list[str]
) -> None:
    tape = tmp_path / "checked.jsonl"
    live = check("--stdio", shlex.join(record_command(tape, server or everything_command())))
    assert live.returncode == 0, live.stderr
    assert live.stdout.splitlines() == expected
    # the header now names a server that leaves a mark if it is ever started
    marker = tmp_path / "started"
    _with_command(tape, [PY, "-c", f"open({str(marker)!r}, 'w').close()"])
    offline = check(str(tape))
    assert offline.returncode == 0, offline.stderr
    assert offline.stdout.splitlines() == [f"cassette: {tape} (as recorded)", *expected]
    as_json = json.loads(check(str(tape), "--format", "json").stdout)
    assert (as_json["cassette"], as_json["result"]) == (str(tape), "PASS")
    assert not marker.exists()  # no process was started
    forced = check(str(tape), "--era", "legacy")
    assert forced.returncode == 2
    assert "--era legacy opens a live session" in forced.stderr
    # --live is the other thing: the server the header names, started
    started = check(str(tape), "--live", "--timeout", "30")
    assert started.returncode == 2
    assert marker.exists()


def test_check_of_a_replay_works_on_a_cassette_recorded_by_plain_record(
    tmp_path: Path,
) -> None:
    """A client that never listed what the server advertises left nothing to replay for
    those lists when the recorder did not probe: check says so (a note), it does not fail
    the server for it. A plain recording probes, so its replay lists what live lists."""
    notes = [PY, str(ROOT / "examples" / "notes_server.py")]

    def recorded(tape: Path, *extra: str) -> None:
        client = LineClient(record_command(tape, notes, *extra))
        try:
            client.initialize()
            client.request("tools/call", {"name": "add_note", "arguments": {"text": "a"}})
            assert client.finish()[0] == 0
        finally:
            client.kill_group()

    unprobed = tmp_path / "unprobed.jsonl"
    recorded(unprobed, "--no-probe")
    result = check("--", *replay_command(unprobed))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        "server: notes 1.0.0",
        "protocol: 2025-11-25 (legacy era)",
        "surface: 0 tools, 0 resources, 0 prompts, 0 resource templates",
        "note: tools/list: not in the recording replayed, not checked",
        "result: PASS (0 errors, 0 warnings)",
    ]
    tape = tmp_path / "notes.jsonl"
    recorded(tape)
    probed = check("--", *replay_command(tape))
    assert probed.returncode == 0, probed.stdout + probed.stderr
    assert probed.stdout.splitlines() == [
        "server: notes 1.0.0",
        "protocol: 2025-11-25 (legacy era)",
        "surface: 1 tools, 0 resources, 0 prompts, 0 resource templates",
        "result: PASS (0 errors, 0 warnings)",
    ]
    committed = ROOT / "examples" / "everything.jsonl"  # recorded by a plain record
    everything = check("--", *replay_command(committed))
    assert everything.returncode == 0, everything.stdout + everything.stderr
    lines = everything.stdout.splitlines()
    # a plain recording's probes listed what its client did not: check sees all of it
    assert lines[2] == "surface: 13 tools, 7 resources, 4 prompts, 2 resource templates"
    assert not any(line.startswith("note:") for line in lines)
    assert lines[-1] == "result: PASS (0 errors, 0 warnings)"
