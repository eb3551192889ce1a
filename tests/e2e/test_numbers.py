"""Numbers JSON allows and Python cannot hold, end to end: recorded, replayed and read
by every tool digit for digit, or refused in one line where a format cannot hold them.

``tests/servers/numbers_server.py`` answers with ``1e400``, ``-1e400``, ``NaN``,
``Infinity``, ``-Infinity``, a 30-digit and a 5000-digit integer (its ``initialize``
answer holds ``1e400`` too), written as literal text.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import pytest

from tests.helpers.support import (
    PY,
    ROOT,
    LineClient,
    record_command,
    recording_over_http,
    replay_command,
    scaled,
)

SERVER = ROOT / "tests" / "servers" / "numbers_server.py"
LITERALS = (
    b'"a":1e400,"b":-1e400,"c":NaN,"d":Infinity,"e":-Infinity,'
    b'"f":123456789012345678901234567890,"g":' + b"7" * 5000 + b"}"
)
CALL = (
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call",'
    b'"params":{"name":"numbers","arguments":{"n":1e400}}}\n'
)
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "numbers", "version": "0"},
    },
}


def cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [PY, "-m", "cassette", *args], capture_output=True, timeout=scaled(60), check=False
    )


def session(client: LineClient) -> tuple[bytes, bytes]:
    """The raw ``initialize`` answer and ``tools/call`` answer, as the client got them."""
    client.send(INIT)
    opening = client.readline()
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    client.send(CALL)
    return opening, client.readline()


@pytest.fixture(scope="module")
def tape(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("numbers") / "numbers.jsonl"
    client = LineClient(record_command(path, [PY, str(SERVER)]))
    opening, answer = session(client)
    code, err = client.finish()
    assert code == 0, err
    assert b'"limit":1e400}' in opening
    assert LITERALS in answer
    return path


def test_the_stdio_recorder_forwards_and_records_every_digit(tape: Path) -> None:
    data = tape.read_bytes()
    assert LITERALS in data
    assert b'"limit":1e400}' in data
    assert b'"arguments":{"n":1e400}' in data


def test_a_replay_sends_the_recorded_digits_back(tape: Path) -> None:
    client = LineClient(replay_command(tape))
    opening, answer = session(client)
    code, err = client.finish()
    assert code == 0, err
    assert b'"limit":1e400}' in opening
    assert LITERALS in answer


def test_the_http_recording_proxy_forwards_and_records_every_digit(tmp_path: Path) -> None:
    path = tmp_path / "numbers-http.jsonl"
    headers = {"accept": "application/json, text/event-stream"}
    with recording_over_http(SERVER, path) as (_upstream, url, proxy):
        opening = httpx.post(url, json=INIT, headers=headers, timeout=20)
        answer = httpx.post(url, content=CALL, headers=headers, timeout=20)
        assert proxy.stop() == 0, proxy.output()
    assert opening.status_code == 200
    assert b'"limit":1e400}' in opening.content
    assert answer.status_code == 200
    assert LITERALS in answer.content
    assert "Traceback" not in proxy.output()
    assert LITERALS in path.read_bytes()


def test_lint_passes_the_recording(tape: Path) -> None:
    done = cli("lint", str(tape))
    assert done.returncode == 0, done.stderr


def test_show_prints_every_digit(tape: Path) -> None:
    done = cli("show", str(tape), "--format", "json")
    assert done.returncode == 0, done.stderr
    html = tape.with_suffix(".html")
    done = cli("show", str(tape), "--html", str(html))
    assert done.returncode == 0, done.stderr
    page = html.read_text()
    assert "1e400" in page
    assert "NaN" in page


def test_diff_of_a_recording_with_itself_finds_nothing(tape: Path) -> None:
    done = cli("diff", str(tape), str(tape), "--format", "json")
    assert done.returncode == 0, done.stderr


def test_redact_to_a_new_file_keeps_every_digit(tape: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    done = cli("redact", str(tape), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert tape.read_bytes().splitlines()[1:] == out.read_bytes().splitlines()[1:]


def test_distill_refuses_in_one_line_what_a_manifest_cannot_hold(
    tape: Path, tmp_path: Path
) -> None:
    out = tmp_path / "mock.json"
    done = cli("distill", str(tape), "--as-mock", "-o", str(out))
    assert done.returncode == 3
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1
    assert "1e400" in lines[0]
    assert "manifest cannot hold" in lines[0]
    assert not out.exists()


def test_verify_matches_the_live_server(tape: Path) -> None:
    done = cli("verify", str(tape), "--", PY, str(SERVER))
    assert done.returncode == 0, done.stderr
    assert b"1 MATCH" in done.stdout


def test_a_cassette_field_that_is_not_a_finite_number_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "nan-t.jsonl"
    header = tape_header()
    path.write_bytes(header + b'{"kind":"message","t":NaN,"dir":"c2s","message":{}}\n')
    done = cli("lint", str(path))
    assert done.returncode == 3
    assert b"t: expected a finite number, got NaN" in done.stderr


def tape_header() -> bytes:
    return (
        b'{"kind":"header","format":1,"transport":"stdio","recorder":'
        b'{"name":"cassette-mcp","version":"0"},"started_at":"2026-11-29T00:00:00Z"}\n'
    )
