"""The cassette file format: encode/decode round trips, the shipped schema, reader rules.

Everything here is plain values except the storage tests at the end, which use tmp_path.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cassette.core.recording.recorder import Recorder
from cassette.core.tape import fields
from cassette.core.tape.codec import converter, encode_line
from cassette.core.wire.jsonrpc import dumps_bytes
from cassette.core.wire.model import (
    ERAS,
    FORMAT_VERSION,
    Event,
    ExitEvent,
    Header,
    HttpEvent,
    MessageEvent,
    RawEvent,
    RecorderInfo,
    StderrEvent,
)
from cassette.errors import (
    CassetteError,
    CassetteExistsError,
    CassetteFormatError,
    CassetteNotFoundError,
    CassetteVersionError,
)
from cassette.store.storage import Cassette, CassetteWriter

# -- strategies --------------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def objects_without(names: frozenset[str] = frozenset()) -> st.SearchStrategy[dict[str, Any]]:
    """JSON objects none of whose members is named in ``names``."""
    keys = st.text().filter(lambda k: k not in names) if names else st.text()
    return st.dictionaries(keys, json_values, max_size=5)


json_objects = objects_without()
# The members of `meta` and `target` the reader checks (cassette.core.tape.fields): random values
# under them are bad files, not round trips. Hypothesis draws strings from the constants of
# the code under test, so it does produce these names, now and then.
targets = objects_without(frozenset(fields._TARGET))
times = st.floats(min_value=0.0, allow_nan=False, allow_infinity=False)
directions = st.sampled_from(["c2s", "s2c"])
metas = st.none() | objects_without(frozenset(fields._META))
timestamps = st.datetimes(timezones=st.just(UTC)).map(
    lambda d: d.isoformat(timespec="milliseconds").replace("+00:00", "Z")
)


def headers(started_at: st.SearchStrategy[str]) -> st.SearchStrategy[Header]:
    return st.builds(
        Header,
        transport=st.text(),
        recorder=st.builds(RecorderInfo, name=st.text(), version=st.text()),
        started_at=started_at,
        target=targets,
        era=st.none() | st.sampled_from(ERAS),
        protocol_version=st.none() | st.text(),
    )


messages = st.builds(MessageEvent, t=times, dir=directions, message=json_objects, meta=metas)
stderrs = st.builds(StderrEvent, t=times, text=st.text())
exits = st.builds(ExitEvent, t=times, code=st.none() | st.integers())
# What the recorder produces: text when the frame is UTF-8, otherwise base64 of its bytes.
raws_as_recorded = st.builds(
    RawEvent, t=times, dir=directions, text=st.text(), meta=metas
) | st.builds(
    RawEvent,
    t=times,
    dir=directions,
    b64=st.binary().map(lambda b: base64.b64encode(b).decode("ascii")),
    meta=metas,
)
# Anything the model allows: the codec must round-trip it even if no recorder writes it.
raws_any = st.builds(
    RawEvent,
    t=times,
    dir=directions,
    text=st.none() | st.text(),
    b64=st.none() | st.text(),
    meta=metas,
)

events_any = st.lists(messages | raws_any | stderrs | exits, max_size=8)
events_as_recorded = st.lists(messages | raws_as_recorded | stderrs | exits, max_size=8)


def _dump(header: Header, events: list[Event]) -> bytes:
    return b"".join(encode_line(r) for r in (header, *events))


# -- round trip --------------------------------------------------------------------------


@given(header=headers(st.text()), events=events_any)
def test_encode_then_load_gives_the_same_values(header: Header, events: list[Event]) -> None:
    data = _dump(header, events)

    cassette = Cassette.loads(data, "rt.jsonl")

    assert cassette.header == header
    assert cassette.events == tuple(events)
    assert cassette.warnings == ()
    # seq is not stored (and not compared); the reader derives it from the line number.
    assert cassette.header.seq == 0
    assert [e.seq for e in cassette.events] == list(range(1, len(events) + 1))
    assert cassette.dumps() == data


@given(header=headers(st.text()), events=events_any)
def test_every_encoded_line_is_one_json_object_line(header: Header, events: list[Event]) -> None:
    for record in (header, *events):
        line = encode_line(record)
        assert line.endswith(b"\n")
        assert line.count(b"\n") == 1
        obj = json.loads(line.decode("utf-8"))
        assert isinstance(obj, dict)
        assert "seq" not in obj
        # Optional fields with no value are left out, never written as null.
        optional = ("target", "era", "protocol_version", "meta", "text", "b64")
        assert all(obj[k] is not None for k in optional if k in obj)


pointers = st.none() | st.lists(st.text(), max_size=3).map(tuple)
https = st.builds(
    HttpEvent,
    t=times,
    method=st.text(),
    stream=st.text(),
    status=st.integers(),
    session=st.none() | st.integers(),
)
every_kind = (
    st.builds(
        MessageEvent, t=times, dir=directions, message=json_objects, meta=metas, redacted=pointers
    )
    | raws_any
    | stderrs
    | exits
    | https
)


@given(header=headers(st.text()), event=every_kind)
def test_a_line_is_what_the_converter_writes(header: Header, event: Event) -> None:
    # encode_line writes without the cattrs converter (it cost a recording tens of ms at its
    # first line); the bytes must be exactly the converter's, key order included.
    for value in (header, event):
        body = converter.unstructure(value)
        if isinstance(value, Header):
            body = {"kind": "header", "format": body.pop("format", FORMAT_VERSION), **body}
        else:
            body = {"kind": value.kind, **body}
        assert encode_line(value) == dumps_bytes(body) + b"\n"


def test_header_line_starts_with_kind_then_format() -> None:
    line = encode_line(Header(transport="stdio", recorder=RecorderInfo("a", "b"), started_at="x"))
    assert line.startswith(b'{"kind":"header","format":1,')


def test_an_exit_with_unknown_code_writes_null() -> None:
    assert encode_line(ExitEvent(t=1.5, code=None)) == b'{"kind":"exit","t":1.5,"code":null}\n'


def test_a_cassette_survives_dump_and_load_through_a_file(tmp_path: Path) -> None:
    header = Header(
        transport="stdio",
        recorder=RecorderInfo("cassette-mcp", "0.1.0"),
        started_at="2026-01-01T00:00:00.000Z",
        target={"command": ["srv"]},
        era="legacy",
        protocol_version="2025-06-18",
    )
    events = (
        MessageEvent(t=0.000412, dir="c2s", message={"jsonrpc": "2.0", "id": 1, "method": "x"}),
        RawEvent(t=0.1, dir="s2c", text="héllo"),
        StderrEvent(t=0.2, text="log"),
        ExitEvent(t=0.3, code=-15),
    )
    path = tmp_path / "tape.jsonl"

    Cassette(header, events).dump(path)
    loaded = Cassette.load(path)

    assert (loaded.header, loaded.events, loaded.source) == (header, events, str(path))


# -- the shipped JSON Schema ---------------------------------------------------------------


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    resource = files("cassette") / "schema" / "cassette-v1.schema.json"
    schema = json.loads(resource.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def test_schema_names_itself(validator: jsonschema.Draft202012Validator) -> None:
    assert validator.schema["$id"] == "https://cassette-mcp.dev/schema/cassette-v1.schema.json"
    assert validator.schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@given(header=headers(timestamps), events=events_as_recorded)
def test_every_line_encode_line_writes_validates_against_the_schema(
    validator: jsonschema.Draft202012Validator, header: Header, events: list[Event]
) -> None:
    for record in (header, *events):
        line = json.loads(encode_line(record).decode("utf-8"))
        errors = [e.message for e in validator.iter_errors(line)]
        assert errors == [], (line, errors)


def test_what_the_recorder_writes_validates_and_reads_back(
    validator: jsonschema.Draft202012Validator,
) -> None:
    recorder = Recorder(
        transport="stdio", started_at="2026-03-14T09:26:53.589Z", target={"command": ["srv"]}
    )
    records = [
        *recorder.observe("c2s", b'{"jsonrpc":"2.0","id":0,"method":"server/discover"}\n', 0.1),
        *recorder.observe(
            "s2c", b'{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"no"}}\n', 0.2
        ),
        *recorder.observe("s2c", b"server ready\n", 0.25),
        *recorder.observe("s2c", b"\xff\xfe\n", 0.26),
        *recorder.observe("c2s", b'[{"jsonrpc":"2.0","method":"a"}]\n', 0.27),
        *recorder.stderr("INFO ready", 0.28),
        *recorder.observe(
            "c2s", b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n', 0.3
        ),
        *recorder.observe(
            "s2c", b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}\n', 0.4
        ),
        *recorder.exit(-15, 0.5),
        *recorder.close(),
    ]
    data = b"".join(encode_line(r) for r in records)

    for line in data.splitlines():
        obj = json.loads(line)
        assert validator.is_valid(obj), obj
    cassette = Cassette.loads(data, "tape.jsonl")
    assert cassette.header == records[0]
    assert (cassette.header.era, cassette.header.protocol_version) == ("legacy", "2025-06-18")
    assert cassette.events == tuple(records[1:])
    assert [type(e).__name__ for e in cassette.events] == [
        "MessageEvent",
        "MessageEvent",
        "RawEvent",
        "RawEvent",
        "RawEvent",
        "StderrEvent",
        "MessageEvent",
        "MessageEvent",
        "ExitEvent",
    ]


@pytest.mark.parametrize(
    "line",
    [
        {
            "kind": "header",
            "format": 2,
            "transport": "s",
            "recorder": {"name": "a", "version": "b"},
            "started_at": "2026-01-01T00:00:00Z",
        },
        {"kind": "header", "format": 1, "transport": "s", "started_at": "2026-01-01T00:00:00Z"},
        {
            "kind": "header",
            "format": 1,
            "transport": "s",
            "recorder": {"name": "a", "version": "b"},
            "started_at": "2026-01-01T00:00:00Z",
            "era": "future",
        },
        {"kind": "message", "t": 1, "dir": "up", "message": {}},
        {"kind": "message", "t": -1, "dir": "c2s", "message": {}},
        {"kind": "message", "t": "1", "dir": "c2s", "message": {}},
        {"kind": "message", "t": 1, "dir": "c2s", "message": []},
        {"kind": "raw", "t": 1, "dir": "c2s"},
        {"kind": "raw", "t": 1, "dir": "c2s", "text": "x", "b64": "AA=="},
        {"kind": "raw", "t": 1, "dir": "c2s", "b64": "not base64!"},
        {"kind": "stderr", "t": 1},
        {"kind": "exit", "t": 1},
        {"kind": "exit", "t": 1, "code": 1.5},
        {"kind": "tape-splice", "t": 1},
        {"t": 1},
    ],
)
def test_schema_rejects_lines_a_writer_must_not_produce(
    validator: jsonschema.Draft202012Validator, line: dict[str, Any]
) -> None:
    assert not validator.is_valid(line)


def test_schema_allows_fields_it_does_not_name(
    validator: jsonschema.Draft202012Validator,
) -> None:
    line = {"kind": "stderr", "t": 0.5, "text": "x", "added_in_a_later_release": [1, 2]}
    assert validator.is_valid(line)


# -- reader rules --------------------------------------------------------------------------

HEADER = encode_line(
    Header(
        transport="stdio",
        recorder=RecorderInfo("cassette-mcp", "0.1.0"),
        started_at="2026-01-01T00:00:00.000Z",
    )
)
PING = MessageEvent(t=0.5, dir="c2s", message={"jsonrpc": "2.0", "id": 1, "method": "ping"})
PONG = MessageEvent(t=0.75, dir="s2c", message={"jsonrpc": "2.0", "id": 1, "result": {}})
MSG1 = encode_line(PING)
MSG2 = encode_line(PONG)


def _line(obj: Any) -> bytes:
    return json.dumps(obj).encode("utf-8") + b"\n"


def _format_error(data: bytes, source: str = "tape.jsonl") -> CassetteFormatError:
    with pytest.raises(CassetteFormatError) as info:
        Cassette.loads(data, source)
    return info.value


def _assert_error_at(error: CassetteFormatError, line: int, source: str = "tape.jsonl") -> None:
    assert str(error).startswith(f"{source}:{line}: ")
    assert (error.source, error.line) == (source, line)


@pytest.mark.parametrize("data", [b"", b"\n", b"   \n", b"\n" + HEADER])
def test_an_empty_file_or_a_blank_first_line_is_an_error(data: bytes) -> None:
    error = _format_error(data)
    assert type(error) is CassetteFormatError
    _assert_error_at(error, 1)


@pytest.mark.parametrize("first", [MSG1, b"[]\n", b'"header"\n', _line({"format": 1})])
def test_the_first_line_must_be_a_header(first: bytes) -> None:
    error = _format_error(first + MSG2)
    assert type(error) is CassetteFormatError
    _assert_error_at(error, 1)
    assert "header" in error.reason


def test_a_corrupt_middle_line_is_an_error_naming_its_line() -> None:
    error = _format_error(HEADER + MSG1 + b'{"kind":"message","t":\n' + MSG2)
    assert type(error) is CassetteFormatError
    _assert_error_at(error, 3)
    assert "not JSON" in error.reason


GOOD_MESSAGE = {"kind": "message", "t": 1.0, "dir": "c2s", "message": {"jsonrpc": "2.0"}}


@pytest.mark.parametrize(
    "bad",
    [
        {**GOOD_MESSAGE, "dir": "up"},
        {**GOOD_MESSAGE, "t": "1.0"},
        {**GOOD_MESSAGE, "t": True},
        {**GOOD_MESSAGE, "t": None},
        {**GOOD_MESSAGE, "message": [1, 2]},
        {**GOOD_MESSAGE, "message": "ping"},
        {"kind": "message", "t": 1.0, "dir": "c2s"},
        {"kind": "raw", "dir": "c2s", "text": "x"},
        {"kind": "raw", "t": 1.0, "dir": "c2s", "text": 7},
        {"kind": "stderr", "t": 1.0},
        {"kind": "exit", "t": 1.0},
        {"kind": "exit", "t": 1.0, "code": 1.5},
        {"kind": "exit", "t": 1.0, "code": "1"},
        {"kind": "exit", "t": 1.0, "code": False},
        {"t": 1.0, "dir": "c2s", "message": {}},
        {"kind": 3, "t": 1.0},
        [GOOD_MESSAGE],
        "message",
    ],
)
def test_json_that_is_not_a_valid_event_is_an_error_naming_its_line(bad: Any) -> None:
    error = _format_error(HEADER + MSG1 + _line(bad) + MSG2)
    assert type(error) is CassetteFormatError
    _assert_error_at(error, 3)


def test_a_second_header_is_an_error() -> None:
    error = _format_error(HEADER + MSG1 + HEADER + MSG2)
    assert type(error) is CassetteFormatError
    _assert_error_at(error, 3)
    assert "second header" in error.reason


def test_a_newer_format_is_refused_with_an_upgrade_message() -> None:
    header = json.loads(HEADER)
    newer = _line({**header, "format": 2, "something_new": {"x": 1}})
    future_event = _line({"kind": "message", "t": "in a new shape"})

    with pytest.raises(CassetteVersionError) as info:
        Cassette.loads(newer + future_event, "tape.jsonl")

    error = info.value
    assert isinstance(error, CassetteFormatError)
    assert isinstance(error, ValueError)
    _assert_error_at(error, 1)
    assert "upgrade" in error.reason
    assert "2" in error.reason


@pytest.mark.parametrize("fmt", [0, -1, "1", 1.0, True, None])
def test_a_header_without_a_valid_format_is_a_format_error(fmt: Any) -> None:
    header = {**json.loads(HEADER), "format": fmt}
    error = _format_error(_line(header) + MSG1)
    assert type(error) is CassetteFormatError
    _assert_error_at(error, 1)


def test_a_header_without_format_is_a_format_error() -> None:
    header = json.loads(HEADER)
    del header["format"]
    error = _format_error(_line(header))
    assert type(error) is CassetteFormatError
    _assert_error_at(error, 1)


@pytest.mark.parametrize(
    "change",
    [
        {"era": "future"},
        {"transport": 1},
        {"recorder": "cassette-mcp"},
        {"recorder": {"name": "cassette-mcp"}},
        {"target": None},
        {"target": ["python"]},
    ],
)
def test_a_header_with_a_bad_field_is_a_format_error(change: dict[str, Any]) -> None:
    header = {**json.loads(HEADER), **change}
    error = _format_error(_line(header) + MSG1)
    assert type(error) is CassetteFormatError
    _assert_error_at(error, 1)


@pytest.mark.parametrize(
    "line",
    [b"\xff\xfe\n", b'{"kind":"stderr","t":1,"text":"caf\xe9"}\n', b"\xed\xa0\x80\n"],
)
def test_a_line_that_is_not_utf8_is_an_error(line: bytes) -> None:
    error = _format_error(HEADER + line + MSG1)
    assert type(error) is CassetteFormatError
    _assert_error_at(error, 2)
    assert "UTF-8" in error.reason


def test_a_header_that_is_not_utf8_is_an_error() -> None:
    error = _format_error(HEADER.replace(b"stdio", b"std\xffo") + MSG1)
    _assert_error_at(error, 1)


def test_an_unknown_event_kind_is_skipped_with_a_warning() -> None:
    unknown = _line({"kind": "tape-splice", "t": 0.6, "whatever": [1]})

    cassette = Cassette.loads(HEADER + MSG1 + unknown + MSG2, "tape.jsonl")

    assert cassette.events == (PING, PONG)
    assert [e.seq for e in cassette.events] == [1, 3]
    assert len(cassette.warnings) == 1
    assert cassette.warnings[0].startswith("tape.jsonl:3: ")
    assert "tape-splice" in cassette.warnings[0]


def test_unknown_fields_are_ignored() -> None:
    header = {**json.loads(HEADER), "added_later": {"x": 1}}
    event = {**json.loads(MSG1), "added_later": True}

    cassette = Cassette.loads(_line(header) + _line(event), "tape.jsonl")

    assert cassette.header == Cassette.loads(HEADER).header
    assert cassette.events == (PING,)
    assert cassette.warnings == ()


def test_explicit_nulls_read_as_absent() -> None:
    header = {**json.loads(HEADER), "era": None, "protocol_version": None}
    raw = {"kind": "raw", "t": 1, "dir": "s2c", "text": "x", "b64": None, "meta": None}

    cassette = Cassette.loads(_line(header) + _line(raw), "tape.jsonl")

    assert (cassette.header.era, cassette.header.protocol_version) == (None, None)
    assert cassette.era == "legacy"
    assert cassette.events == (RawEvent(t=1.0, dir="s2c", text="x"),)


def test_a_cut_off_last_line_is_dropped_with_a_warning() -> None:
    cassette = Cassette.loads(HEADER + MSG1 + MSG2[:20], "tape.jsonl")

    assert cassette.events == (PING,)
    assert len(cassette.warnings) == 1
    assert cassette.warnings[0].startswith("tape.jsonl:3: ")


@given(header=headers(st.text()), events=events_any, last=messages | raws_any, data=st.data())
def test_a_last_line_cut_anywhere_leaves_the_prefix_intact(
    header: Header, events: list[Event], last: Event, data: st.DataObject
) -> None:
    last_line = encode_line(last)
    # Cut somewhere after the first byte and before the closing brace: never valid JSON.
    cut = data.draw(st.integers(min_value=1, max_value=len(last_line) - 2), label="cut")

    cassette = Cassette.loads(_dump(header, events) + last_line[:cut], "tape.jsonl")

    assert cassette.header == header
    assert cassette.events == tuple(events)
    lineno = len(events) + 2
    assert len(cassette.warnings) == 1
    assert cassette.warnings[0].startswith(f"tape.jsonl:{lineno}: ")


def test_a_last_line_complete_but_for_its_newline_is_kept() -> None:
    cassette = Cassette.loads(HEADER + MSG1 + MSG2[:-1], "tape.jsonl")

    assert cassette.events == (PING, PONG)
    assert cassette.warnings == ()


def test_a_header_without_a_newline_is_read() -> None:
    cassette = Cassette.loads(HEADER[:-1], "tape.jsonl")
    assert cassette.events == ()
    assert cassette.warnings == ()


def test_a_cut_off_header_is_an_error() -> None:
    error = _format_error(HEADER[:30])
    assert type(error) is CassetteFormatError
    _assert_error_at(error, 1)
    assert "cut off" in error.reason


@pytest.mark.parametrize(
    "last", [b'{"kind":"message","t":\n', b"\xff\n", _line({**GOOD_MESSAGE, "dir": "up"})]
)
def test_a_malformed_last_line_with_its_newline_is_an_error(last: bytes) -> None:
    error = _format_error(HEADER + MSG1 + last)
    assert type(error) is CassetteFormatError
    _assert_error_at(error, 3)


def test_blank_lines_are_ignored_but_still_count() -> None:
    data = HEADER + b"\n" + MSG1 + b"   \n\t\n" + b"\r\n" + MSG2 + b"\n\n"

    cassette = Cassette.loads(data, "tape.jsonl")

    assert cassette.events == (PING, PONG)
    assert [e.seq for e in cassette.events] == [2, 6]
    assert cassette.warnings == ()


def test_a_blank_last_line_without_newline_is_ignored() -> None:
    cassette = Cassette.loads(HEADER + MSG1 + b"  ", "tape.jsonl")
    assert cassette.events == (PING,)
    assert cassette.warnings == ()


def test_loads_accepts_text() -> None:
    cassette = Cassette.loads((HEADER + MSG1).decode("utf-8"))
    assert cassette.events == (PING,)
    assert cassette.source == "<cassette>"


# -- storage: reading files ----------------------------------------------------------------


def test_loading_a_missing_file_raises_not_found(tmp_path: Path) -> None:
    path = tmp_path / "nope.jsonl"

    with pytest.raises(CassetteNotFoundError) as info:
        Cassette.load(path)

    assert isinstance(info.value, FileNotFoundError)
    assert isinstance(info.value, CassetteError)
    assert str(path) in str(info.value)


def test_loading_a_directory_is_a_cassette_error(tmp_path: Path) -> None:
    with pytest.raises(CassetteError) as info:
        Cassette.load(tmp_path)

    assert not isinstance(info.value, CassetteNotFoundError | CassetteFormatError)
    assert str(tmp_path) in str(info.value)


def test_errors_in_a_loaded_file_name_its_path(tmp_path: Path) -> None:
    path = tmp_path / "tape.jsonl"
    path.write_bytes(HEADER + b"oops\n" + MSG1)

    with pytest.raises(CassetteFormatError) as info:
        Cassette.load(path)

    _assert_error_at(info.value, 2, source=str(path))


# -- storage: the writer -------------------------------------------------------------------


def test_the_writer_refuses_to_overwrite_a_recording(tmp_path: Path) -> None:
    path = tmp_path / "tape.jsonl"
    path.write_bytes(HEADER + MSG1)

    with pytest.raises(CassetteExistsError) as info, CassetteWriter(path) as writer:
        writer.write([])

    assert isinstance(info.value, FileExistsError)
    assert isinstance(info.value, CassetteError)
    assert path.read_bytes() == HEADER + MSG1


def test_the_writer_overwrites_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "tape.jsonl"
    path.write_bytes(b"")

    with CassetteWriter(path) as writer:
        writer.write([Cassette.loads(HEADER).header, PING])

    assert path.read_bytes() == HEADER + MSG1


def test_the_writer_replaces_a_recording_when_told_to(tmp_path: Path) -> None:
    path = tmp_path / "tape.jsonl"
    path.write_bytes(HEADER + MSG1 + MSG2 + MSG2)

    with CassetteWriter(path, overwrite=True) as writer:
        writer.write([Cassette.loads(HEADER).header])

    assert path.read_bytes() == HEADER


def test_every_write_is_on_disk_before_the_writer_closes(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "dir" / "tape.jsonl"
    header = Cassette.loads(HEADER).header
    writer = CassetteWriter(path).open()
    try:
        assert path.read_bytes() == b""
        writer.write([header])
        assert path.read_bytes() == HEADER
        writer.write([PING])
        assert path.read_bytes() == HEADER + MSG1
        writer.write([])
        writer.write([PONG, ExitEvent(t=1.0, code=0)])
        on_disk = path.read_bytes()
        assert on_disk == HEADER + MSG1 + MSG2 + b'{"kind":"exit","t":1.0,"code":0}\n'
        assert Cassette.load(path).events == (PING, PONG, ExitEvent(t=1.0, code=0))
    finally:
        writer.close()
    writer.close()  # closing twice is harmless
    assert path.read_bytes() == on_disk


def test_the_writer_with_fsync_writes_the_same_bytes(tmp_path: Path) -> None:
    path = tmp_path / "tape.jsonl"
    with CassetteWriter(path, fsync=True) as writer:
        writer.write([Cassette.loads(HEADER).header, PING])
        assert path.read_bytes() == HEADER + MSG1


def test_the_writer_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(CassetteError) as info:
        CassetteWriter(tmp_path).open()
    assert not isinstance(info.value, CassetteExistsError)


def test_writing_to_a_writer_that_is_not_open_is_an_error(tmp_path: Path) -> None:
    writer = CassetteWriter(tmp_path / "tape.jsonl")
    with pytest.raises(CassetteError):
        writer.write([PING])
    assert not (tmp_path / "tape.jsonl").exists()


def test_a_complete_but_invalid_event_on_an_unterminated_last_line_is_an_error() -> None:
    # A crash cuts JSON short; a whole JSON object there was written that way, not cut off.
    error = _format_error(HEADER + MSG1 + b'{"kind":"message","t":"soon","dir":"c2s","message":{}}')
    assert str(error).startswith("tape.jsonl:3: bad message event")


def test_nan_in_a_cassette_field_is_refused() -> None:
    # A message may hold any number; the cassette's own fields must be finite numbers.
    error = _format_error(HEADER + b'{"kind":"exit","t":NaN,"code":0}\n' + MSG1)
    assert str(error).startswith("tape.jsonl:2: bad exit event: t: expected a finite number")


# -- the direct way in agrees with the converter ------------------------------------------

_ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["legacy", "modern", "c2s", "s2c", "x"]),
    st.just({}),
    st.just({"name": "n", "version": "1"}),
    st.just({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    st.just([]),
)


def _shapes(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(keys), _ANY_VALUE, max_size=len(keys))


@given(
    st.sampled_from(
        [
            ("message", MessageEvent, ["t", "dir", "message", "meta"]),
            ("stderr", StderrEvent, ["t", "text"]),
            ("exit", ExitEvent, ["t", "code"]),
        ]
    ).flatmap(lambda c: st.tuples(st.just(c), _shapes(c[2])))
)
def test_the_direct_way_builds_what_the_converter_builds(case: Any) -> None:
    """A shape the direct way takes must be one the converter takes, to the same value."""
    from cassette.core.tape import codec

    (kind, cls, _), obj = case
    fast = codec._PLAIN[kind](obj, 5)
    if fast is None:
        return
    slow = codec.converter.structure(obj, cls)
    assert fast == slow
    assert type(fast.t) is float


@given(
    _shapes(
        ["transport", "started_at", "recorder", "target", "era", "protocol_version", "redaction"]
    )
)
def test_the_direct_header_is_the_converted_header(obj: dict[str, Any]) -> None:
    from cassette.core.tape import codec

    obj = {"kind": "header", "format": 1, **obj}
    fast = codec._plain_header(obj)
    if fast is None:
        return
    assert fast == codec.converter.structure(obj, Header)
