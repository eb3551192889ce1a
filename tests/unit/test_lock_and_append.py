"""Cross-process coordination: the cassette lock, numbered session slots, and appends that
never interleave (what xdist workers extending one cassette rely on)."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from cassette import Cassette, MessageEvent
from cassette.errors import CassetteError
from cassette.store.lock import FileLock, _lock, _same_file, claim_slot
from cassette.store.storage import append_events, has_recording
from tests.helpers.support import PY, ROOT, scaled

HEADER = (
    '{"kind":"header","format":1,"transport":"stdio",'
    '"recorder":{"name":"t","version":"0"},"started_at":"x","era":"legacy"}\n'
)


def tape(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text(HEADER + "".join(lines), encoding="utf-8")
    return path


def event(t: float, i: int, direction: str = "c2s") -> MessageEvent:
    message = {"jsonrpc": "2.0", "id": i, "method": "ping"}
    return MessageEvent(t=t, dir=direction, message=message)  # type: ignore[arg-type]


HOLD = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {root!r})
    from cassette.store.lock import FileLock
    lock = FileLock(sys.argv[1])
    lock.acquire()
    print("held", flush=True)
    sys.stdin.readline()
    lock.release()
    """
)


def test_lock_excludes_another_process_and_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "t.jsonl"
    holder = subprocess.Popen(
        [PY, "-c", HOLD.format(root=str(ROOT)), str(target)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n"
        mine = FileLock(target)
        assert not mine.try_acquire()
        with pytest.raises(TimeoutError, match="still locked"):
            mine.acquire(timeout=0.1)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=scaled(10))
    mine.acquire(timeout=10)  # the holder is gone: free at once
    assert mine.held
    assert mine.path.exists()
    mine.release()
    assert not mine.path.exists()  # nothing left beside the cassettes people commit
    mine.release()  # a second release is harmless


def test_lock_excludes_within_one_process_too(tmp_path: Path) -> None:
    first, second = FileLock(tmp_path / "t.jsonl"), FileLock(tmp_path / "t.jsonl")
    with first:
        assert not second.try_acquire()
    assert second.try_acquire()
    second.release()


def test_a_lock_on_a_deleted_lock_file_is_not_the_lock(tmp_path: Path) -> None:
    # The classic race of deleting lock files: a waiter opened the file, the holder deleted
    # it and unlocked, the waiter then locks an inode nobody else will ever look at.
    holder = FileLock(tmp_path / "t.jsonl")
    holder.acquire()
    stale = os.open(holder.path, os.O_RDWR)
    try:
        holder.release()
        assert _lock(stale)  # the waiter gets a lock on the deleted inode...
        assert not _same_file(stale, holder.path)  # ...which try_acquire sees is stale
        newcomer = FileLock(tmp_path / "t.jsonl")
        assert newcomer.try_acquire()  # the path's lock is still free for everyone
        newcomer.release()
    finally:
        os.close(stale)


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="POSIX links")
def test_a_planted_lock_link_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    # A pull request can commit .t.jsonl.lock as a link to a file of the reviewer's:
    # whoever records must neither follow it nor truncate what it points to.
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    lock = FileLock(tmp_path / "t.jsonl")
    lock.path.symlink_to(victim)
    with pytest.raises(CassetteError, match=r"\.t\.jsonl\.lock: .*is a symbolic link"):
        lock.try_acquire()
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert lock.path.is_symlink()
    assert not lock.held
    lock.path.unlink()
    lock.path.symlink_to(tmp_path / "missing")  # a dangling link is not made either
    with pytest.raises(CassetteError, match="symbolic link"):
        lock.try_acquire()
    assert not (tmp_path / "missing").exists()


@pytest.mark.skipif(os.name == "nt", reason="POSIX links")
def test_a_lock_that_is_a_hard_link_or_a_folder_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    lock = FileLock(tmp_path / "t.jsonl")
    os.link(victim, lock.path)
    with pytest.raises(CassetteError, match="a hard link to another file"):
        lock.try_acquire()
    assert victim.read_text(encoding="utf-8") == "precious\n"
    lock.path.unlink()
    lock.path.mkdir()
    with pytest.raises(CassetteError, match="is a directory"):
        lock.try_acquire()


def test_a_planted_lock_link_stops_a_recording_in_one_line(tmp_path: Path) -> None:
    if os.name == "nt":
        pytest.skip("POSIX links")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    (tmp_path / ".t.jsonl.lock").symlink_to(victim)
    done = subprocess.run(
        [PY, "-m", "cassette", "record", "-o", "t.jsonl", "--", PY, "-c", "pass"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, done.stderr
    assert "is a symbolic link" in errors[0]
    assert "Traceback" not in done.stderr
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert not (tmp_path / "t.jsonl").exists()


def test_claim_slot_numbers_callers_across_processes(tmp_path: Path) -> None:
    script = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
        "from cassette.store.lock import claim_slot; print(claim_slot(sys.argv[1], 'k'))"
    )
    procs = [
        subprocess.Popen([PY, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    numbers = sorted(int(p.communicate(timeout=scaled(30))[0]) for p in procs)
    assert numbers == [1, 2, 3, 4]
    assert claim_slot(tmp_path, "k") == 5
    assert claim_slot(tmp_path, "other") == 1


def test_has_recording_treats_an_empty_leftover_as_missing(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    assert not has_recording(path)
    path.write_bytes(b"")
    assert not has_recording(path)
    path.write_text(HEADER)
    assert has_recording(path)


def test_append_cuts_a_torn_last_line_and_keeps_time_monotonic(tmp_path: Path) -> None:
    path = tape(
        tmp_path,
        '{"kind":"message","t":5.0,"dir":"c2s","message":{"jsonrpc":"2.0","id":1,"method":"a"}}\n',
        '{"kind":"message","t":5.1,"dir":"s2c","mess',  # a kill mid-write
    )
    append_events(path, [event(1.0, 7), event(1.5, 7, "s2c")])
    lines = path.read_text().splitlines()
    assert len(lines) == 4
    assert all(json.loads(line) for line in lines)  # nothing glued onto the torn line
    times = [json.loads(line)["t"] for line in lines[1:]]
    assert times == [5.0, 5.0, 5.5]
    assert [e.message["id"] for e in Cassette.load(path).events] == [1, 7, 7]


def test_append_refuses_what_is_not_a_cassette(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="no such cassette"):
        append_events(tmp_path / "missing.jsonl", [event(0, 1)])
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(b'{"kind":"head')
    with pytest.raises(CassetteError, match="no complete line"):
        append_events(torn, [event(0, 1)])
    append_events(torn, [])  # nothing to append: nothing touched
    assert torn.read_bytes() == b'{"kind":"head'


APPENDER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    from cassette.store.lock import FileLock
    from cassette.core.wire.model import MessageEvent
    from cassette.store.storage import append_events
    path, worker = sys.argv[1], int(sys.argv[2])
    lock = FileLock(path)
    for batch in range(40):
        big = "x" * (5000 + 997 * batch)  # lines larger than a pipe buffer
        ask = {{"jsonrpc": "2.0", "id": batch, "method": f"w{{worker}}", "params": {{"pad": big}}}}
        answer = {{"jsonrpc": "2.0", "id": batch, "result": {{"w": worker}}}}
        events = [
            MessageEvent(t=0.0, dir="c2s", message=ask),
            MessageEvent(t=0.0, dir="s2c", message=answer),
        ]
        with lock:
            append_events(path, events)
    """
)


def test_concurrent_appenders_never_interleave(tmp_path: Path) -> None:
    path = tape(tmp_path)
    script = APPENDER.format(root=str(ROOT))
    procs = [subprocess.Popen([PY, "-c", script, str(path), str(w)]) for w in range(3)]
    assert [p.wait(timeout=scaled(60)) for p in procs] == [0, 0, 0]
    events = Cassette.load(path).events
    assert len(events) == 3 * 40 * 2
    for request, response in zip(events[::2], events[1::2], strict=True):
        # every batch is whole: each request is followed by its own worker's answer
        assert isinstance(request, MessageEvent)
        assert isinstance(response, MessageEvent)
        assert request.message["method"] == f"w{response.message['result']['w']}"
        assert request.message["id"] == response.message["id"]
