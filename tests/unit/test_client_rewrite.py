"""What ``verify --update`` relies on: only the chosen lines change, a file written by
someone else meanwhile is refused, the lock is taken and let go; and the server a
client-side tool reaches is one value, checked once."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cassette import Cassette
from cassette.client.compare import classify
from cassette.client.rewrite import Snapshot, rewrite_lines
from cassette.client.target import ServerTarget
from cassette.core.wire.model import MessageEvent, RecorderInfo
from cassette.errors import CassetteError, UsageError
from cassette.store.lock import FileLock
from tests.helpers.support import ROOT

EXAMPLE = ROOT / "examples" / "everything.jsonl"


def answer(tape: Cassette, seq: int) -> MessageEvent:
    event = next(e for e in tape.events if e.seq == seq)
    assert isinstance(event, MessageEvent)
    return event


def test_only_the_chosen_lines_and_the_header_change(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(EXAMPLE.read_bytes())
    tape = Cassette.load(path)
    seq = next(e.seq for e in tape.events if isinstance(e, MessageEvent) and "result" in e.message)
    event = answer(tape, seq)
    new = attrs.evolve(event, message={**event.message, "result": {"changed": True}})
    header = attrs.evolve(tape.header, recorder=RecorderInfo("cassette-mcp", "9.9.9"))

    anyio.run(rewrite_lines, path, Snapshot.of(path), header, {seq: new})

    before, after = EXAMPLE.read_text().splitlines(), path.read_text().splitlines()
    assert len(after) == len(before)
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed == [0, seq]
    reread = Cassette.load(path)
    assert answer(reread, seq).message["result"] == {"changed": True}
    assert reread.header.recorder.version == "9.9.9"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]  # no lock, no staging


def test_a_file_written_meanwhile_is_not_updated(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(EXAMPLE.read_bytes())
    seen = Snapshot.of(path)
    path.write_bytes(EXAMPLE.read_bytes() + b"\n")
    with pytest.raises(CassetteError, match="changed on disk while it was verified"):
        anyio.run(rewrite_lines, path, seen, None, {})
    assert path.read_bytes() == EXAMPLE.read_bytes() + b"\n"
    lock = FileLock(path)
    assert lock.try_acquire()  # let go even though it failed
    lock.release()


def test_a_server_is_a_command_or_a_url() -> None:
    assert ServerTarget.of(["node", "s.js"]).transport_name == "stdio"
    assert ServerTarget.of("http://h/mcp").transport_name == "streamable-http"
    assert ServerTarget.of("http://h/sse", transport="sse").transport_name == "sse"
    assert ServerTarget.of("http://h/mcp", transport="http").transport_name == "streamable-http"
    with pytest.raises(UsageError, match="either a command or a URL"):
        ServerTarget()
    with pytest.raises(UsageError, match="http:// or https://"):
        ServerTarget.of("localhost:3001/mcp")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(payload=st.dictionaries(st.text(max_size=4), json_values, min_size=1, max_size=5))
def test_json_in_text_is_the_same_answer_however_it_is_spelled(payload: dict[str, object]) -> None:
    def reply(text: str) -> dict[str, object]:
        return {"result": {"content": [{"type": "text", "text": text}]}}

    compact = json.dumps(payload, separators=(",", ":"))
    reordered = json.dumps(dict(reversed(list(payload.items()))), indent=2)
    assert classify(reply(compact), reply(reordered))[0] == "MATCH"
