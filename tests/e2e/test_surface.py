"""The surface a plain recording captures beside its session (``cassette.runtime.probe``),
against the pinned server-everything: announced on the banner, byte-identical when the
session is recorded again unchanged, off with ``--no-probe``, and never inside the user's
session in ``show``, ``diff`` or ``git diff``'s text."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cassette.cli.gitdiff import textconv
from tests.helpers.support import (
    PY,
    LineClient,
    everything_command,
    record_command,
    replay_command,
    run,
    scaled,
)

pytestmark = pytest.mark.e2e

BANNER = re.compile(
    r"probed the surface: 1 era, (\d+) capability sets, (\d+) listings in \d+\.\d s"
)


def record(tape: Path, *extra: str, cwd: Path | None = None) -> str:
    """Record a client that lists the tools and calls echo; the recorder's stderr."""
    client = LineClient(record_command(tape, everything_command(), *extra), cwd=cwd)
    try:
        client.initialize()
        assert "result" in client.request("tools/list")
        assert "result" in client.request(
            "tools/call", {"name": "echo", "arguments": {"message": "hi"}}
        )
        code, stderr = client.finish()
    finally:
        client.kill_group()
    assert code == 0, stderr
    return stderr


def lines(tape: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in tape.read_text("utf-8").splitlines()]


def probe_lines(tape: Path) -> list[dict[str, Any]]:
    return [e for e in lines(tape)[1:] if "probe" in (e.get("meta") or {})]


def cassette(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "cassette", *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_the_probes_are_announced_and_written_after_the_session(tmp_path: Path) -> None:
    tape = tmp_path / "e.jsonl"
    found = BANNER.search(record(tape))
    assert found is not None
    assert int(found.group(1)) >= 3  # none, and the profiles' roots and elicitation sets
    every = lines(tape)[1:]
    probed = probe_lines(tape)
    assert every[-len(probed) :] == probed  # grouped, at the end
    names = list(dict.fromkeys(e["meta"]["probe"] for e in probed))
    assert names[0] == "legacy:bare"
    asked = {e["message"].get("method") for e in probed if e["dir"] == "c2s"}
    assert asked == {
        "initialize",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    }  # never a call, a read or a prompt
    assert int(found.group(2)) == sum(
        1 for e in probed if e["dir"] == "c2s" and e["message"]["method"] != "initialize"
    )


def test_an_unchanged_rerecording_is_byte_identical_probes_included(tmp_path: Path) -> None:
    tape = tmp_path / "e.jsonl"
    record(tape)
    before = tape.read_bytes()
    assert probe_lines(tape)
    record(tape, "--overwrite")
    assert tape.read_bytes() == before


def test_no_probe_records_the_session_alone(tmp_path: Path) -> None:
    tape = tmp_path / "e.jsonl"
    said = record(tape, "--no-probe")
    assert "probed the surface" not in said
    assert probe_lines(tape) == []


def test_show_and_diff_keep_the_probes_out_of_the_session(tmp_path: Path) -> None:
    probed, plain = tmp_path / "probed.jsonl", tmp_path / "plain.jsonl"
    record(probed)
    record(plain, "--no-probe")
    text = cassette("show", str(probed))
    assert text.returncode == 0, text.stderr
    assert "cassette-probe" not in text.stdout
    assert "probed surface (the recorder's own sessions, not the client's): legacy:bare" in (
        text.stdout
    )
    shown = json.loads(cassette("show", str(probed), "--format", "json").stdout)
    rows = {row["line"] for row in shown["events"]}
    held = shown["probes"]
    assert held["legacy:bare"]
    assert rows.isdisjoint(line for found in held.values() for line in found)
    page = tmp_path / "probed.html"
    assert cassette("show", str(probed), "--html", str(page)).returncode == 0
    assert "cassette-probe" not in page.read_text("utf-8")
    diff = cassette("diff", str(plain), str(probed), "--format", "json")
    assert json.loads(diff.stdout)["added"] == []  # the probes are no requests of the session
    converted = textconv(probed.read_bytes())
    session, _, apart = converted.partition("\nprobe legacy:bare ")
    assert "prompts/list" not in session
    assert "prompts/list" in apart


def test_over_http_each_probe_is_a_session_of_its_own_and_serves_the_front(
    tmp_path: Path,
) -> None:
    """``--upstream``: the probes reach the server through the HTTP connector, an MCP
    session each (ended with its DELETE); the HTTP replay front answers a listing the
    recording client never asked from them."""
    from tests.e2e.test_http_sdk import http_replay, recording_proxy, start_everything_http

    tape = tmp_path / "http.jsonl"
    server, upstream = start_everything_http()
    with server:
        proxy, url = recording_proxy(tape, upstream)
        with proxy:
            recorded = run(lambda: _tools(url))
            assert proxy.stop(signal.SIGINT) == 0, proxy.output()
        assert "probed the surface: 1 era" in proxy.output()
        live = run(lambda: _prompts(upstream))
    probed = probe_lines(tape)
    assert {e["meta"]["probe"] for e in probed} >= {"legacy:bare", "legacy:claude-code"}
    front, replay = http_replay(tape)
    with front:
        assert run(lambda: _tools(replay)) == recorded
        assert run(lambda: _prompts(replay)) == live  # never asked while recording
        assert front.stop() == 0, front.output()


async def _tools(target: str) -> list[str]:
    from mcp import Client

    async with Client(target) as client:
        return sorted(t.name for t in (await client.list_tools()).tools)


async def _prompts(target: str) -> list[str]:
    from mcp import Client

    async with Client(target) as client:
        return sorted(p.name for p in (await client.list_prompts()).prompts)


def test_the_project_turns_probes_off_and_probe_turns_them_on(tmp_path: Path) -> None:
    """``probe = false`` in ``[tool.cassette]`` of the project the recorder runs in; the
    command line's ``--probe`` over it."""
    (tmp_path / "pyproject.toml").write_text("[tool.cassette]\nprobe = false\n")
    off, on = tmp_path / "off.jsonl", tmp_path / "on.jsonl"
    assert "probed the surface" not in record(off, cwd=tmp_path)
    assert probe_lines(off) == []
    assert "probed the surface" in record(on, "--probe", cwd=tmp_path)
    assert probe_lines(on)


def replay_then_close(tape: Path, capabilities: dict[str, Any]) -> list[dict[str, Any]]:
    """A stdio client declaring ``capabilities`` lists the tools from a replay of
    ``tape``, closes its output and reads the replay's to its end: what came after."""
    client = LineClient(replay_command(tape))
    try:
        client.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": capabilities,
                "clientInfo": {"name": "roots-client", "version": "0"},
            },
        )
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert "result" in client.request("tools/list")
        assert client.proc.stdin is not None
        client.proc.stdin.close()
        after = []
        while line := client.readline():
            after.append(json.loads(line))
        assert client.proc.wait(timeout=scaled(30)) == 0
    finally:
        client.kill_group()
    return after


def test_a_client_declaring_roots_is_asked_for_them_as_its_input_ends(tmp_path: Path) -> None:
    """server-everything asks a client that declares roots for them 350 ms after the
    handshake, and still does once the client's input has ended. A plain recording's
    client declared nothing; its probes declaring roots keep the request, and a replay
    sends it to a client of such a probe as its input ends, as the live server would;
    to a client without roots, nothing."""
    tape = tmp_path / "e.jsonl"
    record(tape)
    kept = [e for e in probe_lines(tape) if e["message"].get("method") == "roots/list"]
    assert kept, "no probe declaring roots kept the server's roots/list"
    assert all(e["dir"] == "s2c" for e in kept)
    asked = replay_then_close(tape, {"roots": {"listChanged": True}})
    assert [m.get("method") for m in asked] == ["roots/list"]
    assert replay_then_close(tape, {}) == []
