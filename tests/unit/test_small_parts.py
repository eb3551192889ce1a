"""The small pure pieces: frame classification, JSON diffs, line framing, argv redaction,
and the plugin registry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cassette
from cassette.core.wire.jsonrpc import Kind, classify
from cassette.core.words.jsondiff import MISSING, differences, pointer, same_json
from cassette.errors import UnknownTransportError
from cassette.transports.stdio._lines import LineBuffer


@pytest.mark.parametrize(
    ("frame", "kind"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"}', Kind.REQUEST),
        (b'{"jsonrpc":"2.0","id":"a","method":"x","params":{}}', Kind.REQUEST),
        (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', Kind.NOTIFICATION),
        (b'{"jsonrpc":"2.0","id":1,"result":{}}', Kind.RESPONSE),
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}', Kind.ERROR),
        (b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}', Kind.ERROR),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', Kind.BATCH),
        (b"[]", Kind.INVALID),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', Kind.INVALID),
        (b'{"jsonrpc":"1.0","id":1,"method":"ping"}', Kind.INVALID),
        (b'{"jsonrpc":"2.0","id":1,"result":{},"error":{}}', Kind.INVALID),
        (b'{"id":1,"method":"ping"}', Kind.INVALID),
        (b"hello", Kind.NOT_JSON),
        (b"\xff\xfe", Kind.NOT_JSON),
        (b"[" * 100_000, Kind.NOT_JSON),
    ],
)
def test_classify(frame: bytes, kind: Kind) -> None:
    assert classify(frame).kind is kind


@given(st.binary(max_size=200))
def test_classify_never_raises(data: bytes) -> None:
    assert isinstance(classify(data).kind, Kind)


def test_differences_are_json_pointers() -> None:
    found = differences({"a": {"b/c": 1, "x": [1, 2]}}, {"a": {"b/c": 2, "x": [1]}, "n": True})
    assert [(d.path, d.recorded, d.received) for d in found] == [
        ("/a/b~1c", 1, 2),
        ("/a/x/1", 2, MISSING),
        ("/n", MISSING, True),
    ]
    assert pointer(("~", 0)) == "/~0/0"


@given(st.recursive(st.integers() | st.text(max_size=3), lambda s: st.lists(s, max_size=3)))
def test_no_differences_with_itself(value: Any) -> None:
    assert differences(value, value) == []
    assert same_json(value, value)


def test_json_equality_is_not_python_equality() -> None:
    assert not same_json(1, True)
    assert not same_json(1, 1.0)
    assert differences({"a": 1}, {"a": True})[0].path == "/a"


@given(st.lists(st.binary(max_size=20), max_size=10), st.data())
def test_line_buffer_gives_the_same_lines_at_any_split(chunks: list[bytes], data: Any) -> None:
    stream = b"".join(chunks)
    cut = data.draw(st.lists(st.integers(0, len(stream)), max_size=5).map(sorted))
    pieces = [stream[a:b] for a, b in zip([0, *cut], [*cut, len(stream)], strict=True)]
    buffer = LineBuffer()
    lines = [line for piece in pieces for line in buffer.feed(piece)]
    tail = buffer.tail()
    assert b"".join(lines) + tail == stream
    assert all(line.endswith(b"\n") and line.count(b"\n") == 1 for line in lines)
    assert b"\n" not in tail


def test_line_buffer_keeps_carriage_returns() -> None:
    buffer = LineBuffer()
    assert buffer.feed(b"a\r\nb\rc\n") == [b"a\r\n", b"b\rc\n"]


def test_registry_lists_builtins_and_names_what_is_installed() -> None:
    assert {"stdio", "memory"} <= set(cassette.available())
    assert cassette.get_transport("stdio").name == "stdio"
    with pytest.raises(UnknownTransportError, match=r"installed: .*stdio"):
        cassette.get_transport("carrier-pigeon")


@pytest.mark.parametrize("word", [b"NaN", b"Infinity", b"-Infinity"])
def test_non_standard_json_numbers_are_kept_as_written(word: bytes) -> None:
    found = classify(b'{"jsonrpc":"2.0","id":1,"result":' + word + b"}")
    assert found.kind is Kind.RESPONSE
    assert found.value["result"].literal == word.decode()


def test_line_buffer_refuses_a_line_over_the_limit_and_goes_on() -> None:
    from cassette.transports.stdio._lines import Oversized

    buffer = LineBuffer(limit=10)
    out = buffer.feed(b"short\n" + b"x" * 8)
    assert out == [b"short\n"]
    out = buffer.feed(b"y" * 8 + b"z\nnext\n")  # the long line ends here, 18 bytes in all
    assert isinstance(out[0], Oversized)
    assert out[0].size == 18
    assert out[1:] == [b"next\n"]
    assert isinstance(buffer.feed(b"w" * 30 + b"\n")[0], Oversized)  # long in one chunk too


@given(st.lists(st.binary(max_size=30), max_size=10), st.data())
def test_line_buffer_with_a_limit_keeps_every_short_line(chunks: list[bytes], data: Any) -> None:
    from cassette.transports.stdio._lines import Oversized

    stream = b"".join(chunks)
    cut = data.draw(st.lists(st.integers(0, len(stream)), max_size=5).map(sorted))
    pieces = [stream[a:b] for a, b in zip([0, *cut], [*cut, len(stream)], strict=True)]
    buffer = LineBuffer(limit=12)
    lines = [line for piece in pieces for line in buffer.feed(piece)]
    expected = [line + b"\n" for line in stream.split(b"\n")[:-1]]
    assert len(lines) == len(expected)
    for got, want in zip(lines, expected, strict=True):
        if len(want) > 12:
            assert isinstance(got, Oversized)
            assert got.size == len(want)
        else:
            assert got == want


def test_a_recorded_command_is_the_same_on_every_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Paths in the project become relative to it, paths elsewhere in the home folder
    ``~/...``; flags and paths outside both stay as given. The project usually lies in
    the home folder too: the project wins."""
    from cassette.runtime.record import portable_argv

    home = tmp_path / "home" / "ada"
    project = home / "src" / "agent"
    monkeypatch.setattr(Path, "home", lambda: home)
    elsewhere = str(tmp_path / "opt" / "server")
    argv = [
        str(project / ".venv" / "bin" / "python"),
        str(home / ".local" / "bin" / "uvx"),
        "-m",
        "tools.server",
        "relative/config.toml",
        elsewhere,
        str(project),
    ]
    assert portable_argv(argv, project) == [
        ".venv/bin/python",
        "~/.local/bin/uvx",
        "-m",
        "tools.server",
        "relative/config.toml",
        elsewhere,
        ".",
    ]
