"""Every text the tools print is safe: what a server recorded is shown, never obeyed.

A real stdio server (``tests/servers/raw_server.py``, a Python process) is recorded
echoing a lone UTF-16 surrogate (``"\\ud800"``, legal as a JSON escape, impossible in
UTF-8) and terminal escape sequences, and a client request whose method is an escape
sequence. The cassette passes ``lint``; ``show`` (text, JSON, HTML), ``distill`` (JSON and
TOML) and ``mock --validate`` then all succeed, print no control character, and write
valid UTF-8; the JSON manifest and the replay keep the surrogate exactly.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cassette.mock.manifest import load_manifest
from tests.helpers.support import PY, RAW_SERVER, LineClient, record_command, replay_command, scaled

SURROGATE = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
    b'"params":{"name":"echo","arguments":{"text":"\\ud800"}}}\n'
)
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b[31m"


def cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [PY, "-m", "cassette", *args], capture_output=True, timeout=scaled(60), check=False
    )


@pytest.fixture(scope="module")
def tape(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("safe") / "hostile.jsonl"
    client = LineClient(record_command(path, [PY, str(RAW_SERVER)]))
    client.initialize()
    client.send(SURROGATE % 2)
    assert client.receive()["result"]["content"][0]["text"] == "\ud800"
    said = client.request("tools/call", {"name": "echo", "arguments": {"text": ESCAPES}})
    assert said["result"]["content"][0]["text"] == ESCAPES
    client.send({"jsonrpc": "2.0", "id": 9, "method": "\x1b[31mevil"})
    assert client.receive()["error"]["code"] == -32601
    code, _ = client.finish()
    assert code == 0
    return path


def _clean(data: bytes) -> str:
    text = data.decode("utf-8")  # strict: a lone surrogate could not have been encoded
    assert not any(ord(c) < 0x20 and c not in "\n\t" for c in text), text
    assert "\x7f" not in text
    return text


def test_lint_passes_the_recording(tape: Path) -> None:
    done = cli("lint", str(tape))
    assert done.returncode == 0, done.stdout


def test_show_prints_escapes_not_the_characters(tape: Path) -> None:
    done = cli("show", str(tape))
    assert done.returncode == 0, done.stderr
    text = _clean(done.stdout)
    assert "\\u001b[31mevil" in text


def test_show_json_is_json_and_ascii(tape: Path) -> None:
    done = cli("show", str(tape), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(_clean(done.stdout))["events"]


def test_show_html_writes_a_page_with_the_escapes(tape: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    done = cli("show", str(tape), "--html", str(page))
    assert done.returncode == 0, done.stderr
    html = _clean(page.read_bytes())
    assert "\\ud800" in html
    assert "\\u001b]0;pwned\\u0007" in html


def test_distill_to_json_keeps_the_surrogate_exactly(tape: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "m.json"
    done = cli("distill", str(tape), "--as-mock", "-o", str(manifest))
    assert done.returncode == 0, done.stderr
    _clean(manifest.read_bytes())
    calls = load_manifest(manifest)["tools"][0]["calls"]
    texts = [c["result"]["content"][0]["text"] for c in calls]
    assert texts == ["\ud800", ESCAPES]
    assert cli("mock", "--validate", str(manifest)).returncode == 0


def test_distill_to_toml_writes_the_escape_and_says_so(tape: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "m.toml"
    done = cli("distill", str(tape), "--as-mock", "-o", str(manifest))
    assert done.returncode == 0, done.stderr
    _clean(manifest.read_bytes())
    assert "note: /tools/0/calls/0/result/content/0/text: a lone surrogate" in done.stdout.decode()
    texts = [
        c["result"]["content"][0]["text"] for c in load_manifest(manifest)["tools"][0]["calls"]
    ]
    assert texts == ["\\ud800", ESCAPES]
    assert cli("mock", "--validate", str(manifest)).returncode == 0


def test_a_replay_gives_the_surrogate_back_exactly(tape: Path) -> None:
    client = LineClient(replay_command(tape))
    client.initialize()
    client.send(SURROGATE % 2)
    assert client.receive()["result"]["content"][0]["text"] == "\ud800"
    code, _ = client.finish()
    assert code == 0
