"""Every recording ends with one line saying what it wrote (a plain stdio recording, the
HTTP recording proxy, a record mode), and a server that fails to start is quoted by its
error line, not by the tail of its stack."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest

from cassette.runtime.record import stderr_excerpt
from cassette.store.storage import Cassette
from tests.helpers.support import (
    MODERN_SERVER,
    PY,
    ROOT,
    LineClient,
    record_command,
    recording_over_http,
    run,
)

pytestmark = pytest.mark.e2e

NOTES = [PY, str(ROOT / "examples" / "notes_server.py")]


def lines_of(tape: Path) -> int:
    return len(tape.read_text(encoding="utf-8").splitlines())


def test_a_record_mode_ends_with_what_it_wrote(tmp_path: Path) -> None:
    tape = tmp_path / "t.jsonl"
    client = LineClient(record_command(tape, NOTES, "--mode", "once"))
    client.initialize()
    code, err = client.finish()
    assert code == 0, err
    assert f"cassette: wrote {lines_of(tape)} line(s) to {tape}; the server exited with code 0" in (
        err.splitlines()
    )


def test_the_http_recording_proxy_ends_with_what_it_wrote(tmp_path: Path) -> None:
    from mcp import Client

    async def listed(url: str) -> int:
        async with Client(url) as client:
            return len((await client.list_tools()).tools)

    tape = tmp_path / "http.jsonl"
    with recording_over_http(MODERN_SERVER, tape) as (_, url, proxy):
        assert run(lambda: listed(url)) > 0
        assert proxy.stop(signal.SIGINT) == 0, proxy.output()
        said = proxy.output().splitlines()
    assert Cassette.load(tape).events
    assert said[-1] == f"cassette: wrote {lines_of(tape)} line(s) to {tape}"


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_a_failed_node_start_is_quoted_by_its_error_line(tmp_path: Path) -> None:
    tape = tmp_path / "t.jsonl"
    missing = tmp_path / "missing.js"
    client = LineClient(record_command(tape, ["node", str(missing)]))
    client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    client.readline()
    code, err = client.finish()
    assert code == 4
    last = err.splitlines()[-1]
    assert f"; its stderr said: Error: Cannot find module '{missing}'; " in last, last
    assert "Node.js v" not in last


def test_the_excerpt_of_a_python_traceback_is_its_last_error_line() -> None:
    traceback = [
        "Traceback (most recent call last):",
        '  File "server.py", line 3, in <module>',
        "    import weather",
        "ModuleNotFoundError: No module named 'weather'",
    ]
    assert (
        stderr_excerpt(traceback)
        == "its last stderr: ModuleNotFoundError: No module named 'weather'"
    )
    assert stderr_excerpt(["starting", "", "listening"]) == "its last stderr: starting / listening"
