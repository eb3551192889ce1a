"""The TypeScript SDK's progress callbacks fire on replay, over stdio, streamable HTTP and SSE.

That client handles everything one read returns as one batch, and a response before the
notifications that came with it: live, a server's work keeps progress and the response
apart; a replay must deliver them apart too (``cassette.transports._drain``). Before that,
the callbacks never fired on stdio and SSE replays (the call itself succeeded, so only the
callbacks show it). One recording, made live over stdio; each front replays it to the same
client. Its live run is the baseline, with one caveat measured here: server-everything
sends its last progress notification and the response back to back, so live the client
sometimes drops that last one. The replay delivers every recorded notification before the
response, every time: the client sees all three steps.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.support import (
    EVERYTHING_JS,
    NODE_DIR,
    Background,
    record_command,
    replay_command,
)
from tests.helpers.support import node as _node

pytestmark = pytest.mark.e2e

PROBE = NODE_DIR / "ts_progress.mjs"
TIMEOUT = 60
ALL_STEPS = [1, 2, 3]  # the call's three progress steps, all in the cassette
RUNS = 3  # each front serves the client this many times: every run must see the progress


def _probe(*args: str) -> dict[str, Any]:
    argv = [_node(), str(PROBE), *args]
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=NODE_DIR, check=False
    )
    assert proc.returncode == 0, f"{argv} exited {proc.returncode}:\n{proc.stderr}"
    return dict(json.loads(proc.stdout))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A cassette of the call, recorded live over stdio, and the client's live observation."""
    tape = tmp_path_factory.mktemp("progress") / "progress.jsonl"
    server = [_node(), str(EVERYTHING_JS), "stdio"]
    live = _probe("stdio", *server)
    assert live["seen"][:2] == [1, 2]  # the live baseline (the last step may be dropped)
    through = _probe("stdio", *record_command(tape, server))
    assert through["text"] == live["text"]
    return tape, {"seen": ALL_STEPS, "text": live["text"]}


def test_progress_fires_on_a_stdio_replay(recorded: tuple[Path, dict[str, Any]]) -> None:
    tape, live = recorded
    for _ in range(RUNS):
        assert _probe("stdio", *replay_command(tape, "-q")) == live


@pytest.mark.parametrize(("front", "path"), [("http", "/mcp"), ("sse", "/sse")])
def test_progress_fires_on_a_network_replay(
    recorded: tuple[Path, dict[str, Any]], front: str, path: str
) -> None:
    tape, live = recorded
    with Background([*replay_command(tape), "--front", front]) as replay:
        url = replay.wait_for(r"serving on (http://\S+)").group(1)
        base = url.rsplit("/", 1)[0] if url.endswith(("/mcp", "/sse")) else url
        for _ in range(RUNS):
            assert _probe(front, base + path) == live
