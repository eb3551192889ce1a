"""A long cassette's ``initialize`` answered from its opening: which cassettes get one
(``cassette.store.opening``), and that a session served that way gets every answer a
session of the whole cassette gets (``cassette.core.replay.opening``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cassette.core.replay.opening import OpeningPool, OpeningResponder
from cassette.core.replay.sessions import ReplayPool
from cassette.store.opening import read_opening
from cassette.store.storage import Cassette
from tests.helpers.opening_tapes import INITIALIZE, long_cassette, write_long


@pytest.fixture(scope="module")
def tape(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_long(tmp_path_factory.mktemp("opening") / "long.jsonl")


def test_opening_holds_the_handshake_and_the_client_message_after_it(tape: Path) -> None:
    opening = read_opening(tape)
    assert opening is not None
    methods = [e.message.get("method") for e in opening.events]  # type: ignore[union-attr]
    assert methods == ["initialize", None, "notifications/initialized"]
    assert opening.header == Cassette.load(tape).header


def test_a_short_cassette_has_no_opening(tmp_path: Path) -> None:
    path = tmp_path / "short.jsonl"
    long_cassette(10).dump(path)
    assert read_opening(path) is None


@pytest.mark.parametrize(
    ("name", "kwargs", "edit"),
    [
        ("modern era", {"era": "modern"}, None),
        (
            "a second initialize",
            {"extra": [{"jsonrpc": "2.0", "id": -1, "method": "initialize"}]},
            None,
        ),
        (
            "a server/discover",
            {"extra": [{"jsonrpc": "2.0", "id": -1, "method": "server/discover"}]},
            None,
        ),
        ("a meta", None, (b'"kind":"message"', b'"kind":"message","meta":{"start":2}')),
        ("an escape", None, (b"hello 7 ", b"hello \\u0037 ")),
        ("a sampling request", None, (b"Echo: hello 9 ", b"sampling/createMessage ")),
    ],
)
def test_what_could_change_the_handshake_answer_means_no_opening(
    tmp_path: Path, name: str, kwargs: dict[str, Any] | None, edit: tuple[bytes, bytes] | None
) -> None:
    path = write_long(tmp_path / "t.jsonl", **(kwargs or {}))
    if edit is not None:
        data = path.read_bytes()
        assert edit[0] in data
        path.write_bytes(data.replace(edit[0], edit[1], 1))
    assert read_opening(path) is None, name


def _pools(tape: Path) -> tuple[ReplayPool, OpeningPool, list[str]]:
    whole = ReplayPool(Cassette.load(tape))
    opening = read_opening(tape)
    assert opening is not None
    loads: list[str] = []

    def load() -> ReplayPool:
        loads.append("whole")
        return ReplayPool(Cassette.load(tape))

    return whole, OpeningPool(ReplayPool(opening), load), loads


def _init(params: dict[str, Any], request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def _call(text: str, request_id: int) -> dict[str, Any]:
    arguments = {"message": text}
    params = {"name": "echo", "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


NOTE = {"jsonrpc": "2.0", "method": "notifications/initialized"}
SCRIPTS: dict[str, list[dict[str, Any]]] = {
    "the recorded handshake": [
        _init(INITIALIZE),
        NOTE,
        _call("hello 0", 2),
        _call("hello 2499", 3),
        _call("nope", 4),
        _init(INITIALIZE, 5),
        _call("hello 0", 6),
    ],
    "another client": [_init({**INITIALIZE, "clientInfo": {"name": "other", "version": "9"}})],
    "capabilities the recording lacks": [
        _init({**INITIALIZE, "capabilities": {"sampling": {}, "roots": {}}}),
        _call("hello 1", 2),
    ],
    "an older revision": [_init({**INITIALIZE, "protocolVersion": "2025-06-18"}), NOTE],
    "a cursor": [_init({**INITIALIZE, "cursor": "c1"})],
    "a 2026-07-28 client": [_init({**INITIALIZE, "protocolVersion": "2026-07-28"})],
    "a call first": [_call("hello 3", 1), _init(INITIALIZE, 2)],
    "a ping first": [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, _init(INITIALIZE, 2)],
}


@pytest.mark.parametrize("script", SCRIPTS.values(), ids=SCRIPTS.keys())
def test_every_answer_is_the_whole_cassettes(tape: Path, script: list[dict[str, Any]]) -> None:
    whole, opening, _ = _pools(tape)
    expected, served = whole.new(), opening.new()
    assert expected.start() == served.start()
    for message in script:
        want, got = expected.receive(message), served.receive(message)
        assert got.messages == want.messages, message
        assert got.warnings == want.warnings, message
        assert (got.miss is None) == (want.miss is None), message
    whole.release(expected)
    opening.release(served)
    assert opening.summary() == whole.summary()
    assert [m.method for m in opening.misses] == [m.method for m in whole.misses]


def test_the_recorded_handshake_is_answered_before_the_whole_is_loaded(tape: Path) -> None:
    whole, opening, loads = _pools(tape)
    served = opening.new()
    assert isinstance(served, OpeningResponder)
    served.start()
    frame = b'{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":'
    frame += b'"2025-11-25","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}'
    answer = served.receive_frame(frame)
    assert answer.messages[0]["id"] == 7
    assert answer.messages[0]["result"]["serverInfo"]["name"] == "opening-test"
    assert loads == []  # answered from the opening alone
    later = served.receive_frame(
        b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":'
        b'{"name":"echo","arguments":{"message":"hello 2000"}}}'
    )
    assert loads == ["whole"]
    assert later.warnings == ()  # the whole cassette answered the handshake the same
    assert later.messages[0]["result"]["content"][0]["text"].startswith("Echo: hello 2000 ")
    expected = whole.new()
    expected.start()
    assert expected.receive_frame(frame).messages == answer.messages


def test_a_session_that_ends_after_the_handshake_still_loads_the_whole(tape: Path) -> None:
    _, opening, loads = _pools(tape)
    served = opening.new()
    served.start()
    served.receive(_init(INITIALIZE))
    assert loads == []
    opening.release(served)
    assert loads == ["whole"]  # the end of the run (its faults, its report) is the whole's
    assert opening.misses == []


@pytest.mark.parametrize(
    ("rest", "proved"),
    [
        (b'x"initialize"y', False),  # a second one, cut by every chunk's end
        (b'{"meta":1}', False),
        (b"sampling/createMessage", False),
        (b"x" * 40, True),
    ],
)
def test_words_cut_by_a_chunk_end_are_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rest: bytes, proved: bool
) -> None:
    from cassette.store import opening

    monkeypatch.setattr(opening, "_CHUNK", 3)
    path = tmp_path / "t.bin"
    path.write_bytes(rest)
    with path.open("rb") as file:
        assert opening._proved([b'{"method":"initialize"}\n'], file) is proved


def test_a_file_without_a_newline_has_no_opening(tmp_path: Path) -> None:
    path = tmp_path / "sparse.jsonl"
    with path.open("wb") as file:
        file.truncate(1 << 30)  # a gigabyte of zeros, no disk used: read a megabyte of it
    assert read_opening(path) is None


def _with_probes(path: Path, count: int = 3) -> bytes:
    """The recorder's probe lines, as it writes them after the session (``meta.probe``;
    a legacy probe holds an ``initialize`` and a ``server/discover`` may be kept too)."""
    from cassette.core.tape.codec import encode_line
    from cassette.core.wire.model import MessageEvent

    lines = b""
    for n in range(count):
        for direction, message in (
            ("c2s", {"jsonrpc": "2.0", "id": f"p{n}", "method": "initialize", "params": {}}),
            ("s2c", {"jsonrpc": "2.0", "id": f"p{n}", "result": {"note": "server/discover"}}),
        ):
            event = MessageEvent(t=9.0, dir=direction, message=message, meta={"probe": "x"})  # type: ignore[arg-type]
            lines += encode_line(event)
    return lines


def test_the_recorders_probe_lines_at_the_end_keep_the_opening(tmp_path: Path) -> None:
    path = write_long(tmp_path / "t.jsonl")
    path.write_bytes(path.read_bytes() + _with_probes(path))
    opening = read_opening(path)
    assert opening is not None
    assert [e.message.get("method") for e in opening.events] == [  # type: ignore[union-attr]
        "initialize",
        None,
        "notifications/initialized",
    ]


def test_a_probe_line_inside_the_session_means_no_opening(tmp_path: Path) -> None:
    path = write_long(tmp_path / "t.jsonl")
    data = path.read_bytes()
    middle = data.index(b"\n", len(data) // 2) + 1
    path.write_bytes(data[:middle] + _with_probes(path, 1) + data[middle:])
    assert read_opening(path) is None
