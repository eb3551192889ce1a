"""``cassette record --era``: make the cassette in the era a later client needs.

The dual-era server (the Python SDK's ``MCPServer``) lists only 2026-07-28 in its
``server/discover``, so a cassette recorded with the SDK 2 default client (``auto``: it
discovers) cannot serve an ``initialize``-only client: the replay refuses it with
``-32022``, as the live server's discovery says. Recorded with ``--era legacy``, the
probe is answered ``-32601`` in the server's place, the client falls back to
``initialize``, and the legacy cassette serves every legacy client.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.support import (
    MODERN_SERVER,
    OFFLINE_ENV,
    PY,
    LineClient,
    probe_log,
    record_command,
    replay_command,
    run,
    stdio_params,
    until_probed,
)

pytestmark = pytest.mark.e2e


def _header(tape: Path) -> dict[str, Any]:
    return dict(json.loads(tape.read_text().splitlines()[0]))


async def _add(params: Any, mode: str = "auto", probed: Path | None = None) -> tuple[str, Any]:
    """One call; ``probed``: the cassette being recorded, whose legacy probe the session
    stays open for (``tests.helpers.support.until_probed``)."""
    from mcp import Client

    async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
        result = await client.call_tool("add", {"a": 2, "b": 3})
        if probed is not None:
            await until_probed(probed)
        return str(client.protocol_version), result.structured_content


def test_era_legacy_makes_a_cassette_legacy_clients_can_replay(tmp_path: Path) -> None:
    tape = tmp_path / "legacy.jsonl"
    server = [PY, str(MODERN_SERVER)]
    version, added = run(
        lambda: _add(stdio_params(record_command(tape, server, "--era", "legacy")))
    )
    assert version != "2026-07-28"  # the auto client fell back to initialize
    assert _header(tape)["era"] == "legacy"
    legacy = LineClient(replay_command(tape), env=OFFLINE_ENV)
    assert legacy.initialize()["result"]["protocolVersion"] == "2025-11-25"
    answer = legacy.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    assert answer["result"]["structuredContent"] == added
    assert legacy.finish()[0] == 0
    # the same auto client replays it too: its probe gets the recorded -32601
    replayed = run(lambda: _add(stdio_params([*replay_command(tape)], env=OFFLINE_ENV)))
    assert replayed == (version, added)


def test_without_era_a_modern_only_cassette_refuses_a_legacy_client(tmp_path: Path) -> None:
    tape = tmp_path / "modern.jsonl"
    server = [PY, str(MODERN_SERVER)]
    # --no-probe: the recorder does not ask the server whether it accepts legacy clients
    # (without it, it asks, and the cassette serves them: the test below)
    version, _ = run(lambda: _add(stdio_params(record_command(tape, server, "--no-probe"))))
    assert version == "2026-07-28"
    banner = [PY, "-m", "cassette", "replay", str(tape)]  # replay_command is quiet
    legacy = LineClient(banner, env=OFFLINE_ENV)
    error = legacy.initialize()["error"]
    assert error["code"] == -32022
    assert "record --era legacy" in error["message"]
    code, stderr = legacy.finish()
    assert code == 1  # a miss
    assert "initialize" in stderr
    # the banner says which clients it refuses, and show which it serves
    # the agents by name, the SDK profiles counted (their number grows with the profiles)
    assert re.search(
        r"Gemini CLI, the MCP Inspector and \d+ other known clients would be refused", stderr
    )
    show = subprocess.run(
        [PY, "-m", "cassette", "show", str(tape)], capture_output=True, text=True, check=False
    )
    assert "serves 2026-07-28 and dual-era clients" in show.stdout.splitlines()[0]


def test_a_plain_recording_probes_and_serves_legacy_clients(tmp_path: Path) -> None:
    """The server lists only 2026-07-28 in its discovery yet accepts ``initialize``: the
    recorder's probe learns it, and a legacy client is served with no manual step."""
    tape = tmp_path / "modern.jsonl"
    server = [PY, str(MODERN_SERVER)]
    recording = record_command(tape, server, "--log", str(probe_log(tape)))
    version, added = run(lambda: _add(stdio_params(recording), probed=tape))
    assert version == "2026-07-28"
    assert _header(tape)["era"] == "modern"
    live = LineClient(server)
    live_init = live.initialize()["result"]
    live.finish()
    legacy = LineClient(replay_command(tape), env=OFFLINE_ENV)
    assert legacy.initialize()["result"] == live_init  # the probe's answer, as live
    answer = legacy.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    assert answer["result"]["structuredContent"] == added
    assert "resultType" not in answer["result"]  # translated by the cross-era rules
    assert legacy.finish()[0] == 0
    legacy_mode = run(lambda: _add(stdio_params(replay_command(tape), env=OFFLINE_ENV), "legacy"))
    assert legacy_mode == ("2025-11-25", added)
    show = subprocess.run(
        [PY, "-m", "cassette", "show", str(tape)], capture_output=True, text=True, check=False
    )
    assert "serves 2026-07-28 and legacy clients" in show.stdout.splitlines()[0]


def test_era_modern_refuses_initialize_while_recording(tmp_path: Path) -> None:
    tape = tmp_path / "modern-only.jsonl"
    client = LineClient(record_command(tape, [PY, str(MODERN_SERVER)], "--era", "modern"))
    error = client.initialize()["error"]
    assert error["code"] == -32022
    assert error["data"]["supported"] == ["2026-07-28"]
    client.finish()
    # Nothing succeeded, so this is no cassette: the session is kept beside it (issue 17).
    assert not tape.exists()
    kept = tape.with_name(tape.name + ".failed")
    messages = [json.loads(line) for line in kept.read_text().splitlines()[1:]]
    answered = [m["message"] for m in messages if m.get("dir") == "s2c"]
    assert answered[0]["error"]["code"] == -32022  # recorded as the server's answer


def test_era_legacy_over_streamable_http(tmp_path: Path) -> None:
    """The recording proxy answers the probe itself (200, ``-32601``); the SDK 2 default
    client falls back to ``initialize`` and the replay serves a legacy client over HTTP."""
    import signal

    from tests.helpers.support import Background, recording_over_http

    tape = tmp_path / "legacy-http.jsonl"
    url = r"(http://\S+)"
    with recording_over_http(MODERN_SERVER, tape, "--era", "legacy") as (_, proxy_url, proxy):
        version, added = run(lambda: _add(proxy_url))
        assert proxy.stop(signal.SIGINT) == 0, proxy.output()
    assert version != "2026-07-28"
    assert _header(tape)["era"] == "legacy"
    front = Background([*replay_command(tape), "--front", "http", "--port", "0"], env=OFFLINE_ENV)
    with front:
        front_url = front.wait_for(r"serving on " + url).group(1)
        assert run(lambda: _add(front_url, mode="legacy")) == (version, added)
