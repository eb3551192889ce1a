"""A recording that never succeeded is not a cassette.

A real server process that fails the way real ones do (a missing token: it says so on
stderr and exits at once; or it answers every request with an error) is recorded with
``cassette record``. The cassette's name stays free, the session is kept beside it as
``.failed`` (which ``lint`` calls an error), ``record`` exits 4 with one line naming the
server's exit code and last stderr, and the next ``--mode once`` run records afresh
instead of replaying a failure.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from cassette.core.wire.model import ExitEvent
from cassette.store.storage import Cassette
from cassette.tools.lint import lint_cassette
from tests.helpers.support import PY, RAW_SERVER, LineClient, record_command, scaled

NO_TOKEN = [
    PY,
    "-c",
    "import sys; print('error: GITHUB_TOKEN is not set', file=sys.stderr); sys.exit(3)",
]


def test_a_server_that_exits_at_once_leaves_no_cassette(tmp_path: Path) -> None:
    tape = tmp_path / "t.jsonl"
    client = LineClient(record_command(tape, NO_TOKEN))
    client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert client.readline() == b""  # the server is gone: end of stream, as from it
    code, err = client.finish()
    assert code == 4
    assert err.splitlines()[-1] == (
        f"cassette: error: no request got a successful answer, so nothing was recorded as "
        f"{tape}; the server exited with code 3; its last stderr: error: GITHUB_TOKEN is "
        f"not set; the session is kept in {tape}.failed (not a cassette)"
    )
    assert not tape.exists()
    failed = tmp_path / "t.jsonl.failed"
    errors = [f.code for f in lint_cassette(failed) if f.severity == "error"]
    assert errors == ["no-success", "unanswered"]  # the initialize it never answered
    exits = [e for e in Cassette.load(failed).events if isinstance(e, ExitEvent)]
    assert [e.code for e in exits] == [3]  # its exit, once (it was written twice)


def test_once_after_a_failed_start_records_afresh(tmp_path: Path) -> None:
    tape = tmp_path / "t.jsonl"
    failed = subprocess.run(
        record_command(tape, NO_TOKEN, "--mode", "once"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )
    assert failed.returncode == 4
    assert "mode once (from --mode): " in failed.stderr
    assert f"{tape} is missing; recording it" in failed.stderr
    assert failed.stderr.splitlines()[-1].startswith("cassette: error: no request got a")
    client = LineClient(record_command(tape, [PY, str(RAW_SERVER)], "--mode", "once"))
    client.initialize()
    code, err = client.finish()
    assert code == 0
    assert f"{tape} is missing; recording it" in err  # not "exists; replaying it"
    assert [f for f in lint_cassette(tape) if f.severity == "error"] == []


def test_once_warns_when_it_replays_a_failed_recording_left_by_an_older_version(
    tmp_path: Path,
) -> None:
    tape = tmp_path / "t.jsonl"
    header = (
        b'{"kind":"header","format":1,"transport":"stdio",'
        b'"recorder":{"name":"t","version":"0"},"started_at":"2026-01-01T00:00:00Z"}\n'
    )
    tape.write_bytes(header)  # what a failed start used to leave under the cassette's name
    done = subprocess.run(
        record_command(tape, NO_TOKEN, "--mode", "once"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )
    assert done.returncode == 0  # nothing was asked, nothing missed
    assert f"cassette: warning: {tape}: no request in it got a successful answer" in done.stderr
    assert tape.read_bytes() == header  # left for the person to delete
