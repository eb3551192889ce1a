"""The JSON paths every replayed message takes, against the standard library's own.

``cassette.core.wire.jsonrpc`` encodes with a C encoder built once (``one_shot``) and decodes a
frame with ``raw_decode`` when it starts with its value; both must give exactly what
``JSONEncoder.encode`` and ``JSONDecoder.decode`` give, errors included. Compared by
``repr`` (int against float, ``-0.0``, key order all show)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from cassette.core.replay import matching
from cassette.core.wire import jsonrpc

TEXT = st.text(alphabet=st.characters(codec=None), max_size=8)  # lone surrogates too
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)
COMPACT = {"separators": (",", ":"), "check_circular": False, "allow_nan": False}
SPACE = st.text(alphabet=" \t\n\r\x0c", max_size=3)


def outcome(function: Any, *args: Any) -> str:
    try:
        return repr(("value", function(*args)))
    except (ValueError, TypeError) as exc:
        return repr((type(exc).__name__, str(exc)))


@given(VALUES)
def test_the_one_shot_encoders_write_what_their_encoder_writes(value: Any) -> None:
    plain = json.JSONEncoder(ensure_ascii=False, **COMPACT)  # type: ignore[arg-type]
    ascii_ = json.JSONEncoder(**COMPACT)  # type: ignore[arg-type]
    canonical = json.JSONEncoder(ensure_ascii=False, sort_keys=True, **COMPACT)  # type: ignore[arg-type]
    assert outcome(jsonrpc.dumps, value) == outcome(plain.encode, value)
    assert outcome(jsonrpc._encode_ascii, value) == outcome(ascii_.encode, value)
    assert outcome(matching.canonical, value) == outcome(canonical.encode, value)


def test_the_one_shot_encoders_refuse_what_their_encoder_refuses() -> None:
    plain = json.JSONEncoder(ensure_ascii=False, **COMPACT)  # type: ignore[arg-type]
    for bad in (float("nan"), [float("inf")], {"a": object()}, {(1,): 2}):
        assert outcome(jsonrpc.dumps, bad) == outcome(plain.encode, bad)


@given(VALUES, SPACE, SPACE, st.sampled_from(["", "x", "{}", "]"]))
def test_a_frame_decodes_as_json_loads_decodes_it(
    value: Any, before: str, after: str, extra: str
) -> None:
    reference = json.JSONDecoder(
        parse_constant=jsonrpc._keep_constant, parse_float=jsonrpc._keep_float
    )
    text = before + json.dumps(value) + after + extra
    assert outcome(jsonrpc._decode, text) == outcome(reference.decode, text)


def test_what_is_not_json_is_refused_with_the_same_words() -> None:
    reference = json.JSONDecoder(
        parse_constant=jsonrpc._keep_constant, parse_float=jsonrpc._keep_float
    )
    for text in ("", " ", "x", "NaN", "[1,]", "{} {}", "[Infinity]", "1 2", "{}\x0c", '{"a":1}\n '):
        assert outcome(jsonrpc._decode, text) == outcome(reference.decode, text)
