"""Unit tests of the quiet re-recording merge (``cassette.store.quiet``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cassette import Cassette
from cassette.core.tape.codec import encode_line
from cassette.core.wire.model import Header, MessageEvent, RecorderInfo
from cassette.core.words.volatile import Ignores, steady
from cassette.store import quiet
from cassette.store.quiet import settle


def tape(path: Path, started: str, events: list[tuple[float, str]], version: str = "1") -> Path:
    header = Header("stdio", RecorderInfo("cassette-mcp", version), started)
    lines = [encode_line(header)]
    for t, text in events:
        message = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"text": text}}
        lines.append(encode_line(MessageEvent(t=t, dir="s2c", message=message)))
    path.write_bytes(b"".join(lines))
    return path


def test_an_unchanged_session_leaves_the_file_untouched(tmp_path: Path) -> None:
    old = tape(tmp_path / "t.jsonl", "2026-01-01T00:00:00.000Z", [(0.1, "a"), (0.2, "b")])
    before = old.read_bytes()
    new = tape(
        tmp_path / ".t.jsonl.recording", "2026-02-02T00:00:00.000Z", [(0.3, "a"), (0.9, "b")]
    )
    settle(new, old)
    assert old.read_bytes() == before
    assert not new.exists()


def test_a_changed_event_is_timed_between_its_kept_neighbours(tmp_path: Path) -> None:
    old = tape(
        tmp_path / "t.jsonl", "2026-01-01T00:00:00.000Z", [(0.1, "a"), (0.2, "b"), (0.3, "c")]
    )
    before = old.read_bytes().splitlines()
    new = tape(tmp_path / "n", "2026-02-02T00:00:00.000Z", [(1.0, "a"), (1.05, "B"), (9.0, "c")])
    settle(new, old)
    after = old.read_bytes().splitlines()
    assert [a == b for a, b in zip(before, after, strict=True)] == [True, True, False, True]
    assert [e.t for e in Cassette.load(old).events] == [0.1, 0.15, 0.3]


def test_a_new_header_keeps_the_old_start_when_old_lines_stay(tmp_path: Path) -> None:
    old = tape(tmp_path / "t.jsonl", "2026-01-01T00:00:00.000Z", [(0.1, "a")])
    new = tape(tmp_path / "n", "2026-02-02T00:00:00.000Z", [(0.5, "a"), (0.6, "z")], version="2")
    settle(new, old)
    merged = Cassette.load(old)
    assert merged.header.recorder.version == "2"
    assert merged.header.started_at == "2026-01-01T00:00:00.000Z"
    assert [e.t for e in merged.events] == [0.1, 0.2]


def test_an_old_file_that_no_longer_reads_is_simply_replaced(tmp_path: Path) -> None:
    old = tmp_path / "t.jsonl"
    old.write_bytes(b"not a cassette\n")
    new = tape(tmp_path / "n", "2026-02-02T00:00:00.000Z", [(0.5, "a")])
    data = new.read_bytes()
    settle(new, old)
    assert old.read_bytes() == data


def test_an_inserted_and_a_removed_event_change_only_their_lines(tmp_path: Path) -> None:
    events = [(round(0.1 * n, 6), f"e{n}") for n in range(1, 9)]
    old = tape(tmp_path / "t.jsonl", "2026-01-01T00:00:00.000Z", events)
    before = old.read_bytes().splitlines(keepends=True)
    changed = [*events[:2], (0.25, "new"), *events[2:5], *events[6:]]  # e6 gone, "new" added
    new = tape(tmp_path / "n", "2026-02-02T00:00:00.000Z", [(t + 5, x) for t, x in changed])
    settle(new, old)
    after = old.read_bytes().splitlines(keepends=True)
    assert [line for line in after if line not in before] == [after[3]]
    assert [line for line in before if line not in after] == [before[6]]
    assert b'"new"' in after[3]
    assert [e.t for e in Cassette.load(old).events][1:4] == [0.2, 0.25, 0.3]


def test_a_long_changed_middle_is_one_block_and_keeps_head_and_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(quiet, "_MOST_ALIGNED", 1)
    old = tape(
        tmp_path / "t.jsonl",
        "2026-01-01T00:00:00.000Z",
        [(0.1, "a"), (0.2, "b"), (0.3, "c"), (0.4, "d")],
    )
    before = old.read_bytes().splitlines()
    new = tape(
        tmp_path / "n", "2026-02-02T00:00:00.000Z", [(1.1, "a"), (1.2, "x"), (1.3, "y"), (1.4, "d")]
    )
    settle(new, old)
    after = old.read_bytes().splitlines()
    assert [a == b for a, b in zip(before, after, strict=True)] == [True, True, False, False, True]
    assert [e.t for e in Cassette.load(old).events] == [0.1, 0.2, 0.3, 0.4]


# -- keep-volatile: answers compared as verify compares them ---------------------------------


def answers(path: Path, started: str, results: list[dict[str, object]]) -> Path:
    """A session of one request and its answer per result."""
    header = Header("stdio", RecorderInfo("cassette-mcp", "1"), started)
    lines = [encode_line(header)]
    for n, result in enumerate(results, start=1):
        request = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "now"}}
        answer = {"jsonrpc": "2.0", "id": n, "result": result}
        lines.append(encode_line(MessageEvent(t=n / 10, dir="c2s", message=request)))
        lines.append(encode_line(MessageEvent(t=n / 10 + 0.05, dir="s2c", message=answer)))
    path.write_bytes(b"".join(lines))
    return path


def report(at: str, build: str, trace: str) -> dict[str, object]:
    text = json.dumps({"generatedAt": at, "build": build})
    return {"content": [{"type": "text", "text": text}], "_meta": {"trace": trace}}


def test_keep_volatile_keeps_an_answer_that_changed_only_in_volatile_values(
    tmp_path: Path,
) -> None:
    uuid_a, uuid_b = "0f8fad5b-d9cb-469f-a165-70867728950e", "7c9e6679-7425-40de-944b-e07fc1f90ae7"
    old = answers(
        tmp_path / "t.jsonl",
        "2026-01-01T00:00:00.000Z",
        [report("2026-01-01T10:00:00Z", "1", uuid_a), {"content": [], "n": 1}],
    )
    before = old.read_bytes()
    fresh = [report("2026-03-04T11:12:13.5+01:00", "2", uuid_b), {"content": [], "n": 2}]
    plain = answers(tmp_path / "plain", "2026-02-02T00:00:00.000Z", fresh)
    quiet.settle(plain, old)  # without: the changed answers are written anew
    assert changed(before, old.read_bytes()) == [3, 5]
    old.write_bytes(before)

    ignored = Ignores(("/result/content/0/text#/build",))
    kept = answers(tmp_path / "kept", "2026-02-02T00:00:00.000Z", fresh)
    quiet.settle(kept, old, ignored)
    # the time, the trace id and the ignored build: the old line stays; n changed: new
    assert changed(before, old.read_bytes()) == [5]


def changed(before: bytes, after: bytes) -> list[int]:
    pairs = zip(before.splitlines(), after.splitlines(), strict=True)
    return [n for n, (a, b) in enumerate(pairs, start=1) if a != b]


def test_steady_leaves_out_what_verify_would_not_compare() -> None:
    ignores = Ignores(("/result/items/1", "/result/a~1b"), keys=("etag",))
    one = {"result": {"items": [1, 2], "a/b": "x", "etag": "1", "at": "2026-01-01T00:00:00Z"}}
    two = {"result": {"items": [1, 3], "a/b": "y", "etag": "2", "at": "2027-02-02T00:00:00Z"}}
    assert steady(one, ignores) == steady(two, ignores)
    assert steady(one, Ignores()) != steady(two, Ignores())
    three = {"result": {"items": [9, 2], "a/b": "x", "etag": "1", "at": "2026-01-01T00:00:00Z"}}
    assert steady(one, ignores) != steady(three, ignores)  # outside the pointers: a change
    # a pointer that leads nowhere leaves the answer as it is
    assert steady(one, Ignores(("/result/nothing/here",))) == steady(one, Ignores())


def _with_stderr(path: Path, started: str, order: list[tuple[float, str]]) -> Path:
    """A cassette of messages and stderr lines, in ``order`` (``!text``: a stderr line)."""
    from cassette.core.wire.model import StderrEvent

    lines = [encode_line(Header("stdio", RecorderInfo("cassette-mcp", "1"), started))]
    for t, text in order:
        if text.startswith("!"):
            lines.append(encode_line(StderrEvent(t=t, text=text[1:])))
        else:
            message = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"x": text}}
            lines.append(encode_line(MessageEvent(t=t, dir="s2c", message=message)))
    path.write_bytes(b"".join(lines))
    return path


def test_stderr_read_before_a_message_rather_than_after_is_no_change(tmp_path: Path) -> None:
    """Stderr and messages come down two pipes: which the recorder reads first is a race,
    so the same lines interleaved otherwise leave the file as it was."""
    old = _with_stderr(
        tmp_path / "t.jsonl", "2026-01-01T00:00:00.000Z", [(0.1, "a"), (0.2, "!up"), (0.3, "b")]
    )
    before = old.read_bytes()
    new = _with_stderr(
        tmp_path / "n", "2026-02-02T00:00:00.000Z", [(0.1, "!up"), (0.2, "a"), (0.3, "b")]
    )
    settle(new, old)
    assert old.read_bytes() == before


def test_a_changed_stderr_line_is_still_a_change(tmp_path: Path) -> None:
    old = _with_stderr(tmp_path / "t.jsonl", "2026-01-01T00:00:00.000Z", [(0.1, "a"), (0.2, "!up")])
    new = _with_stderr(tmp_path / "n", "2026-02-02T00:00:00.000Z", [(0.1, "!down"), (0.2, "a")])
    settle(new, old)
    texts = [getattr(e, "text", None) for e in Cassette.load(old).events]
    assert sorted(t for t in texts if t) == ["down"]
