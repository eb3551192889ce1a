"""Inputs a server, a disk or a user can produce, at the level of plain values: numbers
JSON allows and Python cannot hold, and failures that overlap."""

from __future__ import annotations

import copy
import pickle

import pytest

from cassette.core.replay.matching import canonical
from cassette.core.wire import jsonrpc
from cassette.core.wire.jsonrpc import JSONNumber, find_literal, pretty
from cassette.errors import CassetteError, TransportError, anticipated_exception, sole_exception
from cassette.transports.http._http_record import joined_query

TEXTS = [
    '{"a":1e400}',
    '{"a":-1e400,"b":NaN,"c":[Infinity,-Infinity]}',
    '{"big":' + "9" * 5000 + "}",
    '{"negative":-' + "9" * 5000 + "}",
    '{"a":1.5,"b":123456789012345678901234567890}',
]


@pytest.mark.parametrize("text", TEXTS)
def test_every_number_reads_and_writes_back_as_it_was_sent(text: str) -> None:
    for value in (jsonrpc.loads(text), jsonrpc.loads(text.encode())):
        assert jsonrpc.dumps(value) == text
        assert jsonrpc.dumps_bytes(value) == text.encode()


def test_a_number_python_cannot_hold_is_a_float_with_its_text() -> None:
    value = jsonrpc.loads("[1e400, -1e400, NaN]")
    assert all(isinstance(item, JSONNumber) for item in value)
    assert value[0] == float("inf")
    assert value[1] == float("-inf")
    assert value[2] == JSONNumber("NaN")  # equal by its text, though NaN != NaN
    assert value[0] != JSONNumber("1E400")
    assert copy.deepcopy(value) == value
    assert pickle.loads(pickle.dumps(value)) == value


def test_sorted_and_indented_forms_keep_the_text() -> None:
    value = jsonrpc.loads('{"b":1e400,"a":NaN}')
    assert canonical(value) == '{"a":NaN,"b":1e400}'
    assert pretty(value) == '{\n  "b": 1e400,\n  "a": NaN\n}'


def test_a_plain_infinity_is_still_refused() -> None:
    with pytest.raises(ValueError, match="Out of range"):
        jsonrpc.dumps({"a": float("inf")})


def test_find_literal_says_where_the_first_one_is() -> None:
    assert find_literal(jsonrpc.loads('{"x":[1,{"a/b":1e400}]}')) == ("/x/1/a~1b", "1e400")
    assert find_literal({"x": [1.5, 2]}) is None


def test_a_frame_holding_them_is_a_message() -> None:
    found = jsonrpc.classify(b'{"jsonrpc":"2.0","id":1,"result":{"x":1e400}}')
    assert found.kind is jsonrpc.Kind.RESPONSE


def test_errors_that_say_the_same_thing_are_one_error() -> None:
    same = ExceptionGroup("tasks", [CassetteError("disk full"), CassetteError("disk full")])
    assert str(sole_exception(ExceptionGroup("outer", [same]))) == "disk full"
    mixed = ExceptionGroup("tasks", [CassetteError("disk full"), ValueError("bug")])
    assert sole_exception(mixed) is mixed


@pytest.mark.parametrize(
    ("upstream", "query", "url"),
    [
        ("http://h/mcp", "", "http://h/mcp"),
        ("http://h/mcp", "a=1", "http://h/mcp?a=1"),
        ("http://h/mcp?key=k", "a=1", "http://h/mcp?key=k&a=1"),
        ("http://h/mcp?", "a=1", "http://h/mcp?a=1"),
    ],
)
def test_the_recording_proxy_joins_the_client_query_onto_the_upstream_one(
    upstream: str, query: str, url: str
) -> None:
    assert joined_query(upstream, query) == url


FORGED = "evil\ncassette: error: forged"


def test_a_newline_in_a_tool_name_cannot_forge_a_line_of_ours() -> None:
    from cassette.core.replay.replayer import Replayer
    from tests.unit.test_replayer import req, res, tape

    call = req(1, "tools/call", {"name": FORGED, "arguments": {"a": 1}})
    replayer = Replayer(tape(("c2s", call), ("s2c", res(1, "ok"))))
    other = {"name": "x\ncassette: forged too", "arguments": {}}
    for params in ({"name": FORGED, "arguments": {"a": 2}}, other):
        (error,) = replayer.receive(req(2, "tools/call", params)).messages
        assert "\n" not in error["error"]["message"]
        assert "evil\\u000acassette" in error["error"]["message"]
    summary = replayer.summary()
    assert all(line.startswith(("  - ", "2 request")) for line in summary.splitlines()), summary


def test_a_group_of_different_errors_of_ours_is_its_first_not_a_bug() -> None:
    full, closed = CassetteError("disk full"), TransportError("closed")
    assert anticipated_exception(ExceptionGroup("tasks", [full, closed])) is full
    mixed = ExceptionGroup("tasks", [full, ValueError("bug")])
    assert anticipated_exception(mixed) is mixed  # a bug among them stays a bug (70)


def test_a_hook_may_keep_a_number_python_cannot_hold() -> None:
    from cassette.core.recording.hooks import call_hook

    message = jsonrpc.loads('{"jsonrpc":"2.0","id":1,"result":{"x":1e400,"y":NaN}}')
    kept = call_hook(lambda m, _d: m, message, "s2c")
    assert kept is not None
    assert jsonrpc.dumps(kept) == '{"jsonrpc":"2.0","id":1,"result":{"x":1e400,"y":NaN}}'
