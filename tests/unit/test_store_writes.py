"""The store's writers: one whole-file writer, take-back under the lock, the fault plan
file the pytest plugin hands a server command, and the numbers an appender reads through
the codec."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from cassette.core.replay.faults import FaultPlan
from cassette.core.wire.model import HttpEvent, MessageEvent
from cassette.errors import CassetteError
from cassette.store import files
from cassette.store.faults import load_fault_plan, write_fault_plan
from cassette.store.files import write_atomic
from cassette.store.lock import FileLock
from cassette.store.storage import Cassette, highest_numbers
from cassette.store.takeback import take_back

HEADER = (
    '{"kind":"header","format":1,"transport":"streamable-http",'
    '"recorder":{"name":"t","version":"0"},"started_at":"x","era":"legacy"}\n'
)


def test_write_atomic_replaces_whole_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "a" / "t.jsonl"
    write_atomic(target, b"one\n")
    os.chmod(target, 0o600)
    write_atomic(target, b"two\n")
    assert target.read_bytes() == b"two\n"
    assert target.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in target.parent.iterdir()) == ["t.jsonl"]  # no leftovers


def test_write_atomic_flushes_the_file_and_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(files.os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    write_atomic(tmp_path / "t.jsonl", b"x\n")
    assert len(synced) == (1 if os.name == "nt" else 2)  # the file, then the folder
    synced.clear()
    write_atomic(tmp_path / "plan.json", b"{}", durable=False)
    assert synced == []


def test_write_atomic_failure_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "t.jsonl"
    target.write_bytes(b"old\n")

    def refuse(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", refuse)
    with pytest.raises(CassetteError, match="no space left"):
        write_atomic(target, b"new\n")
    assert target.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]


def test_take_back_removes_or_cuts_and_ignores_a_missing_file(tmp_path: Path) -> None:
    recorded = tmp_path / "r.jsonl"
    recorded.write_bytes(b"header\nevent\n")
    take_back(recorded)
    assert not recorded.exists()
    take_back(recorded)  # nothing left: nothing to do
    take_back(tmp_path / "gone" / "t.jsonl")
    assert not (tmp_path / "gone").exists()  # not even a folder for its lock
    grown = tmp_path / "g.jsonl"
    grown.write_bytes(b"header\nold\nnew\n")
    take_back(grown, len(b"header\nold\n"))
    assert grown.read_bytes() == b"header\nold\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.jsonl"]  # no lock file left


def test_take_back_waits_for_a_writer_that_holds_the_lock(tmp_path: Path) -> None:
    grown = tmp_path / "g.jsonl"
    grown.write_bytes(b"header\nold\n")
    writer = FileLock(grown)
    writer.acquire()

    def finish_appending() -> None:
        time.sleep(0.2)
        with grown.open("ab") as file:
            file.write(b"theirs\n")
        writer.release()

    thread = threading.Thread(target=finish_appending)
    thread.start()
    take_back(grown, len(b"header\n"))
    thread.join()
    assert grown.read_bytes() == b"header\n"  # cut after the writer's line, not before


def test_a_fault_plan_round_trips_through_its_file(tmp_path: Path) -> None:
    plan = FaultPlan.of([{"kind": "error", "method": "tools/call", "nth": 2}], seed=7)
    path = tmp_path / "faults-1.json"
    write_fault_plan(path, plan)
    assert load_fault_plan(path) == plan


def test_highest_numbers_reads_events_not_bytes(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    echo = {"jsonrpc": "2.0", "id": 1, "result": {"text": '"stream":"post-99","session":42'}}
    cassette = Cassette.loads(HEADER)
    events = (
        HttpEvent(t=0.0, method="GET", stream="get-4", status=200, session=2),
        MessageEvent(t=0.1, dir="s2c", message=echo, meta={"stream": "post-3", "session": 3}),
    )
    path.write_bytes(Cassette(cassette.header, events).dumps())
    assert highest_numbers(path) == (4, 3)  # the echoed text inside a message counts not
    empty = tmp_path / "e.jsonl"
    empty.write_text(HEADER, encoding="utf-8")
    assert highest_numbers(empty) == (0, 0)
