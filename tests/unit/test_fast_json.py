"""The ``fast`` extra: orjson parses cassettes, and its answer is always the stdlib's.

Every value is compared by ``repr`` (int against float, ``-0.0``, key order all show),
against ``cassette.core.wire.jsonrpc``'s standard-library path on the same bytes. The cases
orjson would answer differently take the standard library's path: lone surrogates and
numbers past a double (orjson refuses them), big integers (orjson makes floats of them,
so a run of 19 digits is never given to it); duplicate keys orjson answers as the
standard library does (last value, first place), which a test here holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cassette.core.wire import jsonrpc
from tests.helpers.support import scaled

orjson = pytest.importorskip("orjson")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fast_calls(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """orjson as the fast parser, counting what it is given."""
    seen: list[bytes] = []

    def counting(data: bytes) -> Any:
        seen.append(data)
        return orjson.loads(data)

    monkeypatch.setattr(jsonrpc, "_fast", [counting])
    return seen


def _stdlib(data: bytes) -> Any:
    return jsonrpc._decode(data.decode("utf-8"))


def _outcome(parse: Callable[[bytes], Any], data: bytes) -> str:
    try:
        return repr(parse(data))
    except ValueError as exc:  # UnicodeDecodeError too
        return f"{type(exc).__name__}: {exc}"


def test_a_plain_line_goes_to_orjson(fast_calls: list[bytes]) -> None:
    line = b'{"jsonrpc":"2.0","id":1,"result":{"n":[1,2.5,-0.0,null,true,"\\u00e9"]}}'
    assert repr(jsonrpc.loads(line)) == repr(_stdlib(line))
    assert fast_calls == [line]


@pytest.mark.parametrize(
    "line",
    [
        b'{"text":"\\ud800"}',  # a lone surrogate: legal JSON, not UTF-8
        b'{"text":"\\udc00x\\ud83d"}',
        b'{"n":1e400}',  # past a double: the stdlib gives inf
        b'{"n":-1e400}',
        b"NaN",  # refused, with the stdlib's message
        b'{"n":Infinity}',
        b"{not json",
        b'{"text":"\xff"}',  # not UTF-8: the stdlib's UnicodeDecodeError
    ],
)
def test_what_orjson_refuses_gets_the_stdlib_answer_or_error(
    fast_calls: list[bytes], line: bytes
) -> None:
    assert _outcome(jsonrpc.loads, line) == _outcome(_stdlib, line)
    assert fast_calls == [line]  # orjson was asked, refused, and the stdlib answered


@pytest.mark.parametrize(
    "number",
    [2**63, -(2**63) - 1, 2**64, 2**64 + 1, -(2**64), 10**30, -(10**40), 12345678901234567890],
)
def test_big_integers_never_reach_orjson_and_stay_exact(
    fast_calls: list[bytes], number: int
) -> None:
    line = json.dumps({"id": number, "n": [number]}).encode()
    value = jsonrpc.loads(line)
    assert value == {"id": number, "n": [number]}
    assert type(value["id"]) is int
    assert fast_calls == []


def test_orjson_alone_would_make_a_float_of_a_big_integer() -> None:
    # what the 19-digit guard is for
    assert type(orjson.loads(b"18446744073709551616")) is float
    assert type(orjson.loads(b"-9223372036854775809")) is float


def test_duplicate_keys_give_the_stdlib_answer(fast_calls: list[bytes]) -> None:
    line = b'{"a":1,"b":{"x":1,"x":[2]},"a":{"c":3},"c":null,"b":0}'
    assert repr(jsonrpc.loads(line)) == repr(_stdlib(line))
    assert fast_calls == [line]


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(_values, st.booleans())
def test_any_value_reads_back_as_the_stdlib_reads_it(value: Any, ascii_only: bool) -> None:
    line = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    saved = jsonrpc._fast[:]
    jsonrpc._fast[:] = [orjson.loads]
    try:
        assert _outcome(jsonrpc.loads, line) == _outcome(_stdlib, line)
    finally:
        jsonrpc._fast[:] = saved


def _large_cassette(folder: Path) -> Path:
    """examples/everything.jsonl with its events repeated past ``FAST_JSON_FROM`` bytes."""
    from cassette.core.tape.codec import FAST_JSON_FROM

    header, *events = (ROOT / "examples" / "everything.jsonl").read_bytes().splitlines(True)
    body = b"".join(events)
    tape = folder / "large.jsonl"
    tape.write_bytes(header + body * (FAST_JSON_FROM // len(body) + 1))
    assert tape.stat().st_size >= FAST_JSON_FROM
    return tape


def test_a_cassette_loads_the_same_with_and_without_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fast_calls: list[bytes]
) -> None:
    from cassette import Cassette

    tape = _large_cassette(tmp_path)
    fast = Cassette.load(tape)
    assert len(fast_calls) == len(tape.read_bytes().splitlines())  # orjson read every line
    monkeypatch.setattr(jsonrpc, "_fast", [None])
    slow = Cassette.load(tape)
    assert repr(fast.header) == repr(slow.header)
    assert [repr(e) for e in fast.events] == [repr(e) for e in slow.events]


def test_a_small_cassette_is_read_without_it(tmp_path: Path, fast_calls: list[bytes]) -> None:
    """Importing orjson costs more than it saves on a cassette under ``FAST_JSON_FROM``."""
    from cassette import Cassette
    from cassette.core.tape.codec import FAST_JSON_FROM

    tape = ROOT / "examples" / "everything.jsonl"
    assert tape.stat().st_size < FAST_JSON_FROM
    small = Cassette.load(tape)
    also = Cassette.loads(tape.read_bytes())
    assert fast_calls == []
    assert [repr(e) for e in small.events] == [repr(e) for e in also.events]
    Cassette.loads(_large_cassette(tmp_path).read_bytes())
    assert fast_calls  # bytes in memory follow the same rule


def test_it_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    # the switch is read at the edge, by the store (the core reads no environment)
    from cassette.store import config

    monkeypatch.setattr(jsonrpc, "_fast", [])
    monkeypatch.setenv("CASSETTE_FAST_JSON", "0")
    assert not config.fast_json()
    monkeypatch.setattr(jsonrpc, "_fast", [])
    monkeypatch.delenv("CASSETTE_FAST_JSON")
    assert config.fast_json()


def test_turned_off_a_large_cassette_is_read_without_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fast_calls: list[bytes]
) -> None:
    from cassette import Cassette

    tape = _large_cassette(tmp_path)
    monkeypatch.setenv("CASSETTE_FAST_JSON", "0")
    Cassette.load(tape)
    Cassette.loads(tape.read_bytes())
    assert fast_calls == []
    monkeypatch.delenv("CASSETTE_FAST_JSON")
    Cassette.load(tape)
    assert fast_calls


def test_turned_off_a_replay_process_never_imports_it(tmp_path: Path) -> None:
    """The switch reaches a process the environment is inherited by (a replay a client
    starts), through the store, which reads it when it loads the cassette."""
    import os
    import subprocess
    import sys

    tape = _large_cassette(tmp_path)
    probe = (
        "import sys; from cassette import Cassette; Cassette.load(sys.argv[1]); "
        "print('orjson' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for switch, imported in (("0", "False"), ("1", "True")):
        env["CASSETTE_FAST_JSON"] = switch
        done = subprocess.run(
            [sys.executable, "-c", probe, str(tape)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=scaled(60),
        )
        assert done.stdout.strip() == imported, done.stderr


def test_the_core_reads_no_environment() -> None:
    import ast

    readers = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in sorted((ROOT / "cassette" / "core").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb")
    ]
    assert readers == []
