"""The recorder: what it writes, and when the era (and so the header) is decided."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cassette.core.recording.recorder import Record, Recorder
from cassette.core.wire.model import ExitEvent, Header, MessageEvent, RawEvent, StderrEvent
from cassette.errors import EraError
from cassette.store.storage import Cassette

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def line(obj: Any) -> bytes:
    return (json.dumps(obj) + "\n").encode()


def new() -> Recorder:
    return Recorder(
        transport="stdio", started_at="2026-11-29T00:00:00.000Z", target={"command": ["srv"]}
    )


def feed(rec: Recorder, *frames: tuple[str, Any]) -> list[Record]:
    out: list[Record] = []
    for t, (direction, obj) in enumerate(frames):
        data = obj if isinstance(obj, bytes) else line(obj)
        out += rec.observe(direction, data, float(t))  # type: ignore[arg-type]
    return out


DISCOVER = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "server/discover",
    "params": {"_meta": MODERN_META},
}
DISCOVER_FAILED = {
    "jsonrpc": "2.0",
    "id": 1,
    "error": {"code": -32601, "message": "Method not found"},
}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25"},
}
INITIALIZED = {
    "jsonrpc": "2.0",
    "id": 2,
    "result": {"protocolVersion": "2025-11-25", "capabilities": {}},
}


def test_failed_probe_then_initialize_is_legacy_and_keeps_the_probe() -> None:
    rec = new()
    out = feed(rec, ("c2s", DISCOVER), ("s2c", DISCOVER_FAILED), ("c2s", INITIALIZE))
    assert out == []  # nothing decided yet: everything waits
    out = feed(rec, ("s2c", INITIALIZED))
    header = out[0]
    assert isinstance(header, Header)
    assert (header.era, header.protocol_version) == ("legacy", "2025-11-25")
    messages = [r.message for r in out[1:] if isinstance(r, MessageEvent)]
    assert messages == [DISCOVER, DISCOVER_FAILED, INITIALIZE, INITIALIZED]
    assert [r.seq for r in out] == [0, 1, 2, 3, 4]


def test_successful_discover_is_modern() -> None:
    rec = new()
    ok = {"jsonrpc": "2.0", "id": 1, "result": {"supportedVersions": ["2026-07-28"]}}
    out = feed(rec, ("c2s", DISCOVER), ("s2c", ok))
    assert isinstance(out[0], Header)
    assert (out[0].era, out[0].protocol_version) == ("modern", "2026-07-28")


def test_any_successful_modern_request_decides_modern() -> None:
    rec = new()
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": MODERN_META}}
    out = feed(rec, ("c2s", call), ("s2c", {"jsonrpc": "2.0", "id": 5, "result": {"tools": []}}))
    assert isinstance(out[0], Header)
    assert out[0].era == "modern"


def test_error_response_decides_nothing() -> None:
    rec = new()
    bad_init = {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "bad"}}
    assert feed(rec, ("c2s", INITIALIZE), ("s2c", bad_init)) == []
    assert rec.header is None


def test_a_session_with_no_success_closes_with_no_era() -> None:
    rec = new()
    feed(rec, ("c2s", DISCOVER), ("s2c", DISCOVER_FAILED))
    out = rec.close()
    assert isinstance(out[0], Header)
    assert out[0].era is None
    assert len(out) == 3
    assert rec.close() == []


def test_after_the_header_events_flow_through_one_by_one() -> None:
    rec = new()
    feed(rec, ("c2s", INITIALIZE), ("s2c", INITIALIZED))
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    out = feed(rec, ("c2s", note))
    assert len(out) == 1
    assert isinstance(out[0], MessageEvent)
    assert out[0].seq == 3


def test_era_cannot_change_once_written() -> None:
    rec = new()
    feed(rec, ("c2s", INITIALIZE), ("s2c", INITIALIZED))
    assert rec.decide_era("legacy") == []
    with pytest.raises(EraError, match="cannot change"):
        rec.decide_era("modern")


def test_later_modern_looking_success_does_not_rewrite_the_era() -> None:
    rec = new()
    feed(rec, ("c2s", INITIALIZE), ("s2c", INITIALIZED))
    call = {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": MODERN_META}}
    out = feed(rec, ("c2s", call), ("s2c", {"jsonrpc": "2.0", "id": 9, "result": {}}))
    assert all(isinstance(r, MessageEvent) for r in out)
    assert rec.header is not None
    assert rec.header.era == "legacy"


def test_non_json_rpc_lines_are_raw_and_verbatim() -> None:
    rec = new()
    rec.decide_era("legacy")
    out = feed(
        rec,
        ("s2c", b"server says hi\r\n"),
        ("s2c", b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n'),
        ("s2c", b'{"not":"jsonrpc"}\n'),
        ("s2c", b"\xff\xfe binary\n"),
    )
    assert all(isinstance(r, RawEvent) for r in out)
    assert [r.text for r in out[:3]] == [  # type: ignore[union-attr]
        "server says hi\r",
        '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
        '{"not":"jsonrpc"}',
    ]
    last = out[3]
    assert isinstance(last, RawEvent)
    assert last.text is None
    assert last.b64 == "//4gYmluYXJ5"


def test_stderr_and_exit_are_events() -> None:
    rec = new()
    rec.decide_era("legacy")
    assert rec.stderr("starting", 0.5) == [StderrEvent(t=0.5, text="starting")]
    assert rec.exit(0, 1.0) == [ExitEvent(t=1.0, code=0)]


def test_header_records_target_and_recorder() -> None:
    rec = new()
    header = rec.decide_era("legacy", "2025-06-18")[0]
    assert isinstance(header, Header)
    assert header.target == {"command": ["srv"]}
    assert header.recorder.name == "cassette-mcp"
    assert header.transport == "stdio"


def test_lone_surrogate_escape_is_recorded_and_reads_back_exactly() -> None:
    from cassette.core.tape.codec import decode, encode_line

    rec = new()
    feed(rec, ("c2s", INITIALIZE))
    weird = {"jsonrpc": "2.0", "id": 2, "result": {"protocolVersion": "2025-11-25", "x": "\ud800"}}
    out = rec.observe(
        "s2c",
        b'{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","x":"\\ud800"}}\n',
        1.0,
    )
    data = b"".join(encode_line(r) for r in out)
    data.decode("utf-8")  # the file stays valid UTF-8
    events = decode(data, "t").events
    assert isinstance(events[-1], MessageEvent)
    assert events[-1].message == weird


def test_nan_is_a_message_written_back_as_it_was_sent() -> None:
    # Python servers write NaN (json.dumps' default): the answer is a message, not raw
    # text a replay could never send as an answer.
    rec = new()
    rec.decide_era("legacy")
    (event,) = rec.observe("s2c", b'{"jsonrpc":"2.0","id":1,"result":{"x":NaN}}\n', 0.0)
    assert isinstance(event, MessageEvent)
    from cassette.core.tape.codec import encode_line

    assert b'"result":{"x":NaN}}' in encode_line(event)


def test_discover_failing_over_an_sse_stream_leaves_no_era_and_keeps_the_failure() -> None:
    rec = new()
    probe = rec.observe("c2s", line(DISCOVER), 0.0, {"stream": "post-1"})
    failure = rec.observe("s2c", line(DISCOVER_FAILED), 0.1, {"stream": "post-1", "sse": True})
    assert probe == failure == []
    out = rec.close()
    header = out[0]
    assert isinstance(header, Header)
    assert header.era is None
    events = [r for r in out[1:] if isinstance(r, MessageEvent)]
    assert [e.message for e in events] == [DISCOVER, DISCOVER_FAILED]
    assert events[1].meta == {"stream": "post-1", "sse": True}


def test_http_probe_then_initialize_records_as_legacy() -> None:
    rec = new()
    rec.observe("c2s", line(DISCOVER), 0.0, {"stream": "post-1"})
    rec.http("POST", "post-1", 400, 0.1)
    rec.observe("s2c", line({**DISCOVER_FAILED, "id": None}), 0.1, {"stream": "post-1"})
    rec.observe("c2s", line({**INITIALIZE, "id": 1}), 0.2, {"stream": "post-2"})
    held = rec.observe(
        "s2c", line({**INITIALIZED, "id": 1}), 0.3, {"stream": "post-2", "session": 1}
    )
    assert held == []  # a session's handshake alone decides once the session does more
    rec.observe("c2s", line(LIST), 0.4, {"stream": "post-3", "session": 1})
    out = rec.observe("s2c", line(LISTED), 0.5, {"stream": "post-3", "session": 1})
    header = out[0]
    assert isinstance(header, Header)
    assert (header.era, header.protocol_version) == ("legacy", "2025-11-25")
    assert len(out) == 8  # the header, the probe, its status and failure, handshake, list


LIST = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
LISTED = {"jsonrpc": "2.0", "id": 3, "result": {"tools": []}}
MODERN_LIST = {**LIST, "params": {"_meta": MODERN_META}}


def _tested_connection(rec: Recorder) -> None:
    """A bridge's connection test (mcp-remote): a legacy handshake in a session of its own."""
    rec.observe("c2s", line({**INITIALIZE, "id": 1}), 0.0, {"stream": "post-1"})
    rec.observe("s2c", line({**INITIALIZED, "id": 1}), 0.1, {"stream": "post-1", "session": 1})
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert rec.observe("c2s", line(note), 0.2, {"stream": "post-2", "session": 1}) == []


def test_a_connection_test_beside_a_modern_session_is_kept_as_the_legacy_probe() -> None:
    rec = new()
    _tested_connection(rec)
    rec.observe("c2s", line(DISCOVER), 0.3, {"stream": "post-3"})
    found = {"jsonrpc": "2.0", "id": 1, "result": {"supportedVersions": ["2026-07-28"]}}
    out = rec.observe("s2c", line(found), 0.4, {"stream": "post-3"})
    header = out[0]
    assert isinstance(header, Header)
    assert header.era == "modern"
    assert rec.probed
    marked = [r.meta.get("variant") for r in out[1:] if isinstance(r, MessageEvent) and r.meta]
    assert marked == ["legacy-probe", "legacy-probe", "legacy-probe", None, None]
    assert [r.seq for r in out[1:]] == [1, 2, 3, 4, 5]  # in order, as observed


def test_a_second_legacy_session_or_the_end_makes_the_connection_test_legacy() -> None:
    rec = new()
    _tested_connection(rec)
    rec.observe("c2s", line({**INITIALIZE, "id": 1}), 0.3, {"stream": "post-3"})
    out = rec.observe(
        "s2c", line({**INITIALIZED, "id": 1}), 0.4, {"stream": "post-3", "session": 2}
    )
    assert isinstance(out[0], Header)
    assert out[0].era == "legacy"
    assert not rec.probed
    alone = new()
    _tested_connection(alone)
    closed = alone.close()
    assert isinstance(closed[0], Header)
    assert (closed[0].era, closed[0].protocol_version) == ("legacy", "2025-11-25")


# -- before_record ------------------------------------------------------------------------------

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
INIT_OK = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}}
LOG = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "noise"}}


def hooked(hook: Any) -> bytes:
    """A short session recorded with the default redaction and ``hook``, as written."""
    from cassette.core.redaction.redactor import Redactor
    from cassette.core.tape.codec import encode_line

    rec = Recorder(transport="stdio", started_at="x", redactor=Redactor(), before_record=hook)
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}},
    }
    answer = {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "hi"}]}}
    frames = [("c2s", INIT), ("s2c", INIT_OK), ("s2c", LOG), ("c2s", call), ("s2c", answer)]
    records = feed(rec, *frames) + rec.close()
    return b"".join(encode_line(r) for r in records)


def test_redaction_runs_after_the_hook_so_a_secret_it_adds_is_never_written() -> None:
    def add_password(message: dict[str, Any], direction: str) -> dict[str, Any]:
        if message.get("method") == "tools/call":
            message["params"]["arguments"]["password"] = "hook-added-sunshine"
        return message

    written = hooked(add_password)
    assert b'"password"' in written  # the hook's change is kept ...
    assert b"hook-added-sunshine" not in written  # ... and redacted after it


def test_a_hook_that_returns_none_drops_the_message_and_the_era_still_follows() -> None:
    seen: list[tuple[str, str]] = []

    def drop_logs(message: dict[str, Any], direction: str) -> dict[str, Any] | None:
        seen.append((direction, str(message.get("method", message.get("id")))))
        return None if message.get("method") == "notifications/message" else message

    written = hooked(drop_logs)
    cassette = Cassette.loads(written)
    assert b"noise" not in written
    assert [m.get("method") for m in cassette.messages("s2c")] == [None, None]
    assert cassette.header.era == "legacy"  # decided from what passed, not what was kept
    # the hook saw every message, in order, with its direction
    assert seen == [
        ("c2s", "initialize"),
        ("s2c", "1"),
        ("s2c", "notifications/message"),
        ("c2s", "tools/call"),
        ("s2c", "2"),
    ]


def test_the_hook_gets_a_copy_so_dropping_the_initialize_keeps_the_era() -> None:
    def drop_initialize(message: dict[str, Any], direction: str) -> dict[str, Any] | None:
        if message.get("method") == "initialize":
            message.clear()  # scribbling on the copy changes nothing the recorder relies on
            return None
        return message

    cassette = Cassette.loads(hooked(drop_initialize))
    assert cassette.header.era == "legacy"
    assert cassette.header.protocol_version == "2025-11-25"
    assert [m.get("method") for m in cassette.messages("c2s")] == ["tools/call"]
