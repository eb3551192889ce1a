"""Hostile input: random bytes into the cassette reader, the replayer and the HTTP replay
front produce only the documented errors, never another exception, never a hang."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cassette.core.replay.replayer import Replayer
from cassette.errors import CassetteFormatError
from cassette.store.storage import Cassette
from cassette.transports.http.streamable_http import HttpReplayApp
from tests.helpers.support import front_app
from tests.unit.test_http_front import LEGACY, MODERN

HEADER = (
    b'{"kind":"header","format":1,"transport":"stdio","recorder":{"name":"t","version":"0"},'
    b'"started_at":"x","era":"legacy"}\n'
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


def load_error(data: bytes) -> str:
    """Read fuzzed bytes; "" when they read fine, else the error (only ours may happen)."""
    try:
        Cassette.loads(data, "fuzz.jsonl")
    except CassetteFormatError as exc:
        return str(exc)
    return ""


@given(st.binary(max_size=400))
def test_reader_on_random_bytes_raises_only_format_errors(data: bytes) -> None:
    error = load_error(data)
    assert error == "" or error.startswith("fuzz.jsonl:")


@given(st.lists(json_values, max_size=6))
def test_reader_on_random_json_lines_after_a_header(lines: list[Any]) -> None:
    data = HEADER + b"".join(json.dumps(v).encode() + b"\n" for v in lines)
    error = load_error(data)
    assert error == "" or error.startswith("fuzz.jsonl:")


@given(st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode()))
def test_replayer_answers_any_frame_without_raising(frame: bytes) -> None:
    replayer = Replayer(LEGACY)
    reply = replayer.receive_frame(frame)
    for message in reply.messages:
        json.dumps(message)  # whatever it says is JSON


@given(json_values)
def test_replayer_answers_any_json_rpc_shaped_request(params: Any) -> None:
    replayer = Replayer(LEGACY)
    reply = replayer.receive({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    assert reply.messages


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["POST", "GET", "DELETE", "PUT"]),
    st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(
        st.sampled_from(
            [
                "mcp-session-id",
                "mcp-protocol-version",
                "mcp-method",
                "mcp-name",
                "accept",
                "last-event-id",
                "origin",
            ]
        ),
        st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=20),
        max_size=4,
    ),
    st.booleans(),
)
def test_http_front_never_fails_with_a_server_error(
    method: str, body: bytes, headers: dict[str, str], modern: bool
) -> None:
    app = front_app(HttpReplayApp, MODERN if modern else LEGACY)
    if method == "GET":
        headers.pop("accept", None)  # an accepted GET opens an endless stream; not this test's

    async def go() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9") as client:
            with anyio.fail_after(5):
                response = await client.request(method, "/api/mcp", content=body, headers=headers)
        assert response.status_code < 500

    anyio.run(go)
