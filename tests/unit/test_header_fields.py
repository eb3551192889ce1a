"""Validate once, refuse clearly: a header the reader accepts is safe for every consumer.

Hypothesis builds headers whose fields (and the members of ``target`` and ``redaction``
the tools read) hold any JSON value, plausible ones mixed in. Reading either refuses the
file with a ``CassetteFormatError`` naming ``file:1``, or every consumer of the header
(replay, the HTTP front, lint, show, diff, redact, distill) works with it: what a replay
would refuse, the reader (and so ``lint``) refuses first.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cassette.core.replay.matching import get_strategy
from cassette.core.replay.sessions import ReplayPool
from cassette.errors import CassetteFormatError
from cassette.store.storage import Cassette
from cassette.tools.diff import diff_cassettes
from cassette.tools.distill import distill_cassette
from cassette.tools.lint import lint_cassette
from cassette.tools.redact_cmd import redact_cassette
from cassette.tools.show import render_html, timeline
from cassette.transports.http.streamable_http import HttpReplayApp
from tests.helpers.support import front_app

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)
strings = st.sampled_from(["strict", "default", "loose", "(", "/a", "abc", "", "[", "x+"])


def some(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A field's value: one a writer might plausibly put there, or random JSON."""
    return st.one_of(values, values, json_values)


string_lists = st.lists(strings, max_size=3)
targets = st.fixed_dictionaries(
    {},
    optional={
        "command": some(string_lists),
        "url": some(st.sampled_from(["http://127.0.0.1:9/mcp", "nope", "/x"])),
        "strategy": some(strings),
        "other": json_values,
    },
)
redactions = st.fixed_dictionaries(
    {},
    optional={
        "salt": some(st.text(max_size=8)),
        "patterns": some(string_lists),
        "paths": some(string_lists),
        "env": some(string_lists),
    },
)
headers = st.fixed_dictionaries(
    {
        "kind": st.just("header"),
        "format": st.just(1),
        "transport": st.sampled_from(["stdio", "streamable-http", "sse"]),
        "recorder": st.just({"name": "t", "version": "0"}),
        "started_at": st.just("2026-01-01T00:00:00Z"),
    },
    optional={
        "target": some(targets),
        "era": some(st.sampled_from(["legacy", "modern"])),
        "protocol_version": some(st.just("2025-11-25")),
        "redaction": some(redactions),
    },
)

SESSION = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2"}},
    {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {}}},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo"}},
    {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "hi"}]}},
]


def _file(header: dict[str, Any]) -> bytes:
    events = [
        {"kind": "message", "t": i / 10, "dir": "c2s" if i % 2 == 0 else "s2c", "message": m}
        for i, m in enumerate(SESSION)
    ]
    return b"".join(json.dumps(line).encode() + b"\n" for line in (header, *events))


def _use_everywhere(tape: Cassette) -> None:
    """Everything that reads a header, as the command line does."""
    strategy = get_strategy(tape.header.target.get("strategy") or "default")  # as replay does
    session = ReplayPool(tape, strategy, environ={"X": "secret-value"}).new()
    for message in (SESSION[0], SESSION[2]):
        session.receive(message)
    front_app(HttpReplayApp, tape)
    lint_cassette(tape)
    timeline(tape)
    render_html(tape)
    diff_cassettes(tape, tape)
    redact_cassette(tape)
    distill_cassette(tape)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(headers)
def test_a_header_is_refused_on_line_1_or_works_everywhere(header: dict[str, Any]) -> None:
    refused: CassetteFormatError | None = None
    try:
        tape = Cassette.loads(_file(header), "h.jsonl")
    except CassetteFormatError as exc:
        refused = exc
    if refused is not None:
        assert str(refused).startswith("h.jsonl:1: ")
        return
    _use_everywhere(tape)


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("target", {"strategy": "fuzzy"}, 'target.strategy: must be one of "strict"'),
        ("target", {"strategy": ["default"]}, "target.strategy: must be one of"),
        ("target", {"url": ["http://x"]}, "target.url: must be a string"),
        ("target", {"command": "node server.js"}, "target.command: must be a list of strings"),
        ("redaction", {"patterns": 3}, "redaction.patterns must be a list of strings"),
        ("redaction", {"paths": ["a/b"]}, "redaction.paths must be JSON Pointers"),
        ("redaction", {"salt": 7}, "redaction.salt must be a hex string"),
        ("redaction", {"env": [1]}, "redaction.env must be a list of strings"),
    ],
)
def test_a_bad_member_is_named_with_file_and_line(field: str, value: Any, reason: str) -> None:
    header = {
        "kind": "header",
        "format": 1,
        "transport": "stdio",
        "recorder": {"name": "t", "version": "0"},
        "started_at": "x",
        field: value,
    }
    with pytest.raises(CassetteFormatError) as caught:
        Cassette.loads(_file(header), "h.jsonl")
    assert str(caught.value).startswith(f"h.jsonl:1: bad header: {reason}")


def test_null_rule_lists_read_as_none() -> None:
    header = {
        "kind": "header",
        "format": 1,
        "transport": "stdio",
        "recorder": {"name": "t", "version": "0"},
        "started_at": "x",
        "redaction": {"salt": "ab", "patterns": None, "paths": None, "env": None},
    }
    tape = Cassette.loads(_file(header), "h.jsonl")
    _use_everywhere(tape)
    assert tape.header.redaction == header["redaction"]


@pytest.mark.parametrize(
    ("meta", "reason"),
    [
        ({"stream": ["post-1"]}, "meta.stream: must be a string"),
        ({"session": "1"}, "meta.session: must be an integer"),
        ({"session": True}, "meta.session: must be an integer"),
        ({"sse": 1}, "meta.sse: must be true or false"),
        ({"retry": 1.5}, "meta.retry: must be an integer"),
    ],
)
def test_a_meta_member_of_the_wrong_type_is_named(meta: dict[str, Any], reason: str) -> None:
    header = {
        "kind": "header",
        "format": 1,
        "transport": "streamable-http",
        "recorder": {"name": "t", "version": "0"},
        "started_at": "x",
    }
    event = {"kind": "message", "t": 0, "dir": "c2s", "message": SESSION[0], "meta": meta}
    data = b"".join(json.dumps(line).encode() + b"\n" for line in (header, event))
    with pytest.raises(CassetteFormatError) as caught:
        Cassette.loads(data, "m.jsonl")
    assert str(caught.value) == f"m.jsonl:2: bad message event: {reason}"
