"""A disk that fills up, or a file-size limit, while recording: one line, exit 3, and
nothing the client saw is missing from the cassette.

Real conditions: a 64 KiB tmpfs mounted for the test (skipped where mounting is not
allowed), and ``ulimit -f`` (``RLIMIT_FSIZE``) on the recorder. The client sends echo
calls of 20 KB each until the recorder can no longer write: the frame it could not record
is not forwarded, the client sees the end of the stream, ``record`` says why in one line
and exits 3, and every answer the client did get is in the cassette, which still reads.
"""

from __future__ import annotations

import contextlib
import resource
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cassette.core.wire.model import MessageEvent
from cassette.store.storage import Cassette
from tests.helpers.support import PY, RAW_SERVER, LineClient, record_command

BIG = "x" * 20_000


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def _fill(tape: Path, **popen: Any) -> tuple[list[str], int, str]:
    """Echo until the recorder gives up; returns what the client got, the exit, stderr."""
    client = LineClient(record_command(tape, [PY, str(RAW_SERVER)]), **popen)
    client.initialize()
    seen: list[str] = []
    with contextlib.suppress(EOFError, BrokenPipeError):
        for number in range(20):
            said = {"name": "echo", "arguments": {"text": f"{number} {BIG}"}}
            client.send(
                {"jsonrpc": "2.0", "id": 100 + number, "method": "tools/call", "params": said}
            )
            seen.append(client.receive()["result"]["content"][0]["text"])
    code, err = client.finish()
    return seen, code, err


def _kept(tape: Path) -> list[str]:
    answers = [
        e.message.get("result", {})
        for e in Cassette.load(tape).events
        if isinstance(e, MessageEvent) and e.dir == "s2c"
    ]
    return [a["content"][0]["text"] for a in answers if "content" in a]


def _one_error(err: str, tape: Path, reason: str) -> None:
    errors = [line for line in err.splitlines() if line.startswith("cassette: error:")]
    assert errors == [
        f"cassette: error: {tape}: cannot write: {reason}; the recording stopped here, and "
        "every frame the client saw before is in the file"
    ]
    assert "Traceback" not in err


def test_a_full_disk_stops_the_recording_with_one_line(small_disk: Path) -> None:
    tape = small_disk / "full.jsonl"
    seen, code, err = _fill(tape)
    assert code == 3
    _one_error(err, tape, "no space left on the device")
    assert 0 < len(seen) < 20
    assert _kept(tape) == seen  # every answer the client got, and nothing it did not


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


def test_a_file_size_limit_stops_the_recording_with_one_line(tmp_path: Path) -> None:
    tape = tmp_path / "limited.jsonl"
    seen, code, err = _fill(tape, preexec_fn=_limit_file_size)
    assert code == 3
    _one_error(err, tape, "file too large (over the file-size limit, see `ulimit -f`)")
    assert 0 < len(seen) < 20
    assert _kept(tape) == seen


def test_overlapping_requests_on_a_full_disk_are_one_line_not_a_bug(tmp_path: Path) -> None:
    # Both directions fail to write at once: two of the same error, one line, exit 3.
    tape = tmp_path / "overlap.jsonl"
    client = LineClient(record_command(tape, [PY, str(RAW_SERVER)]), preexec_fn=_limit_file_size)
    client.initialize()
    with contextlib.suppress(BrokenPipeError):
        for number in range(20):
            said = {"name": "echo", "arguments": {"text": f"{number} {BIG}"}}
            client.send(
                {"jsonrpc": "2.0", "id": 100 + number, "method": "tools/call", "params": said}
            )
    code, err = client.finish()
    assert code == 3, err
    _one_error(err, tape, "file too large (over the file-size limit, see `ulimit -f`)")
    assert "internal error" not in err
