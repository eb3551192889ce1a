"""The input limits: the nesting-depth scan agrees with an exact reference, deep JSON is
refused with a message that says so (classifier, replayer, cassette reader), sizes parse,
the project's settings apply, and every HTTP front answers 413 over its body limit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cassette.core.replay.replayer import Replayer
from cassette.core.wire.jsonrpc import Kind, classify, loads
from cassette.core.wire.limits import (
    DEFAULT_MAX_DEPTH,
    TooDeepError,
    check_depth,
    max_depth,
    nesting_depth,
    parse_size,
    set_max_depth,
)
from cassette.errors import CassetteFormatError, UsageError
from cassette.runtime import DeliveryPolicy, ReplayOptions, serve_replay
from cassette.store.config import limits_for
from cassette.store.storage import Cassette
from cassette.transport import Frame, ServeOptions
from cassette.transports.http._http_record import RecordingProxy
from cassette.transports.http._sse_replay import SseReplayApp, _Session
from cassette.transports.http.streamable_http import HttpReplayApp
from tests.helpers.support import front_app
from tests.unit.test_hostile_input import HEADER
from tests.unit.test_http_front import LEGACY
from tests.unit.test_http_proxy_faults import Collect, closed_port


def reference_depth(value: Any) -> int:
    """Depth by walking the decoded value: what the scan must agree with."""
    if isinstance(value, list):
        return 1 + max((reference_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((reference_depth(v) for v in value.values()), default=0)
    return 0


def nested(depth: int, inner: str = "1") -> str:
    """``depth`` levels alternating arrays and objects around ``inner``."""
    text = inner
    for level in range(depth):
        text = f"[{text}]" if level % 2 else f'{{"k":{text}}}'
    return text


@pytest.fixture
def depth_limit() -> Iterator[None]:
    """Tests that change the process's limit put it back."""
    yield
    set_max_depth(DEFAULT_MAX_DEPTH)


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("5", 0),
        ('"[[[{{{"', 0),
        ("[]", 1),
        ("{}", 1),
        ('[1,{"a":[2]},3]', 3),
        ('["]]]]", [[1]]]', 3),  # closing brackets in a string must not lower the count
        ('["[[[[", 1]', 1),  # nor opening ones raise it
        ('["\\\\", [[]]]', 3),  # an escaped backslash ends before the quote
        ('["\\"[[[", {}]', 2),  # an escaped quote does not end the string
        ('{"a":"","b":"","c":[""]}', 2),  # empty strings next to each other
        ('["\\u005b", ["\\n"]]', 2),
    ],
)
def test_nesting_depth_of_plain_values(text: str, depth: int) -> None:
    assert nesting_depth(text) == depth
    assert nesting_depth(text.encode()) == depth
    assert reference_depth(json.loads(text)) == depth


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("[" * 5000 + "]" * 5000, 5000),  # deeper than peeling pays for: counted in runs
        ("[" + ",".join(["[" * 40 + "]" * 40] * 500) + "]", 41),
        ("[" + ",".join(["[]"] * 3000 + ["[" * 300 + '"]]"' + "]" * 300]) + "]", 301),
        ('{"a":' * 700 + "1" + "}" * 700, 700),
        ("[[[", 3),  # not JSON (cut short): still the depth it reached
    ],
)
def test_nesting_depth_of_deep_and_wide_values(text: str, depth: int) -> None:
    assert nesting_depth(text) == depth


tricky_text = st.text(alphabet='[]{}"\\ab\n\u00e9', max_size=8)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | tricky_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(tricky_text, inner, max_size=3),
    max_leaves=30,
)


@given(json_values, st.booleans(), st.booleans())
def test_nesting_depth_agrees_with_the_decoded_value(
    value: Any, ascii_only: bool, spaced: bool
) -> None:
    separators = (", ", ": ") if spaced else (",", ":")
    text = json.dumps(value, ensure_ascii=ascii_only, separators=separators)
    assert nesting_depth(text) == reference_depth(value)
    assert nesting_depth(text.encode("utf-8")) == reference_depth(value)


@given(json_values, st.integers(min_value=1, max_value=6))
def test_check_depth_refuses_exactly_what_is_deeper_than_the_limit(value: Any, limit: int) -> None:
    text = json.dumps(value)
    if reference_depth(value) > limit:
        with pytest.raises(TooDeepError, match=f"^nested deeper than {limit} levels$"):
            check_depth(text, limit)
    else:
        check_depth(text, limit)


def test_the_default_limit_admits_its_own_depth_and_refuses_one_more() -> None:
    assert max_depth() == DEFAULT_MAX_DEPTH == 256
    assert classify(nested(256)).kind is Kind.BATCH  # parsed (an array outermost)
    refused = classify(nested(257).encode())
    assert refused.kind is Kind.NOT_JSON
    assert refused.problem == "JSON nested deeper than 256 levels"


def test_deeper_than_python_can_parse_is_refused_by_the_limit_not_a_recursion_error() -> None:
    refused = classify(b"[" * 100_000 + b"]" * 100_000)
    assert refused.problem == "JSON nested deeper than 256 levels"


def test_brackets_inside_strings_do_not_count_against_the_limit() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"s": "[{" * 5000}}
    assert classify(json.dumps(message)).kind is Kind.REQUEST


def test_the_replayer_answers_deep_json_with_a_parse_error_saying_why() -> None:
    frame = b'{"jsonrpc":"2.0","id":1,"method":"x","params":' + nested(300).encode() + b"}"
    reply = Replayer(LEGACY).receive_frame(frame)
    assert reply.messages == (
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error: JSON nested deeper than 256 levels"},
        },
    )


def test_a_cassette_line_deeper_than_the_limit_is_a_format_error_naming_it() -> None:
    deep = b'{"kind":"message","t":0,"dir":"c2s","message":' + nested(400).encode() + b"}\n"
    with pytest.raises(CassetteFormatError) as caught:
        Cassette.loads(HEADER + deep, "deep.jsonl")
    assert str(caught.value) == (
        "deep.jsonl:2: JSON nested deeper than the limit of 256 levels per message"
    )


def test_a_message_at_the_limit_still_reads_back_inside_its_event() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "x", "params": json.loads(nested(255))}
    assert nesting_depth(json.dumps(message)) == 256
    line = json.dumps({"kind": "message", "t": 0, "dir": "c2s", "message": message}).encode()
    tape = Cassette.loads(HEADER + line + b"\n", "edge.jsonl")
    assert tape.events[0].message == message  # type: ignore[union-attr]


@pytest.mark.usefixtures("depth_limit")
def test_the_process_limit_can_be_changed_and_must_be_sensible() -> None:
    set_max_depth(3)
    assert classify("[[[[1]]]]").problem == "JSON nested deeper than 3 levels"
    with pytest.raises(TooDeepError):
        loads("[[[[1]]]]")
    for bad in (0, -1, True, 2.5):
        with pytest.raises(UsageError):
            set_max_depth(bad)  # type: ignore[arg-type]
    assert max_depth() == 3


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("65536", 65536),
        ("64MiB", 64 * 1024 * 1024),
        ("64 mib", 64 * 1024 * 1024),
        ("10MB", 10_000_000),
        ("512k", 512_000),
        ("2KiB", 2048),
        ("1GiB", 1024**3),
        ("3b", 3),
        (4096, 4096),
    ],
)
def test_sizes_parse(text: str | int, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "MiB", "-5", "0", "1.5MB", "12 furlongs", "0KiB"])
def test_bad_sizes_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError, match="bad size"):
        parse_size(text)


def test_project_settings_give_the_limits_and_the_command_line_wins() -> None:
    settings = {"max-message-bytes": "1KiB", "max-depth": 64}
    assert limits_for(settings, max_message_bytes=None, max_depth=None) == (1024, 64)
    assert limits_for(settings, max_message_bytes=10, max_depth=5) == (10, 5)
    assert limits_for({}, max_message_bytes=None, max_depth=None) == (None, None)
    with pytest.raises(UsageError, match=r"\[tool.cassette\] max-message-bytes: bad size"):
        limits_for({"max-message-bytes": "huge"}, max_message_bytes=None, max_depth=None)
    with pytest.raises(UsageError, match=r"\[tool.cassette\] max-depth"):
        limits_for({"max-depth": "deep"}, max_message_bytes=None, max_depth=None)


async def post(app: Any, path: str, body: bytes) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9") as client:
        with anyio.fail_after(20):
            return await client.post(
                path,
                content=body,
                headers={
                    "accept": "application/json, text/event-stream",
                    "content-type": "application/json",
                },
            )


JSON_POST = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "x" * 200}).encode()


def test_the_http_replay_front_answers_413_over_its_limit() -> None:
    async def go() -> None:
        refused = await post(front_app(HttpReplayApp, LEGACY, max_body=100), "/api/mcp", PING)
        assert refused.status_code == 413
        assert refused.json()["error"] == {
            "code": -32600,
            "message": "request body over the 100 byte limit",
        }
        taken = await post(front_app(HttpReplayApp, LEGACY, max_body=len(PING)), "/api/mcp", PING)
        assert taken.status_code != 413

    anyio.run(go)


def test_the_sse_replay_front_answers_413_over_its_limit() -> None:
    async def go() -> None:
        app = front_app(SseReplayApp, LEGACY, max_body=100)
        async with anyio.create_task_group() as tg:
            # the session a GET on the stream would have opened
            app.sessions["s1"] = _Session(tg, None)  # no unread-byte counter: not stdio
            refused = await post(app, f"{app.post_path}?sessionId=s1", PING)
        assert refused.status_code == 413
        assert b"over the 100 byte limit" in refused.content

    anyio.run(go)


def test_the_recording_proxy_answers_413_before_reaching_the_upstream() -> None:
    tap = Collect()
    # An unreachable upstream would be a 502: a 413 means the body never left the proxy.
    proxy = RecordingProxy(f"http://127.0.0.1:{closed_port()}/mcp", tap, "127.0.0.1", max_body=100)

    async def go() -> None:
        response = await post(proxy, "/mcp", PING)
        await proxy.aclose()
        assert response.status_code == 413

    anyio.run(go)
    assert tap.frames == []
    assert tap.statuses == []


def test_serve_replay_hands_its_size_limit_to_the_http_front() -> None:
    """The library path the command line takes: ``serve_replay`` with the policy's
    ``max_message_bytes``."""

    async def go() -> tuple[int, int]:
        ready = anyio.Event()
        urls: list[str] = []

        def on_ready(url: str) -> None:
            urls.append(url)
            ready.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(
                serve_replay,
                LEGACY,
                ReplayOptions(
                    transport="streamable-http",
                    listen=ServeOptions(on_ready=on_ready),
                    policy=DeliveryPolicy(max_message_bytes=100),
                ),
            )
            with anyio.fail_after(20):
                await ready.wait()
            async with httpx.AsyncClient() as client:
                big = await client.post(urls[0], content=PING, headers=JSON_POST)
                # a request that may come without a session, under the limit
                opening = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'
                small = await client.post(urls[0], content=opening, headers=JSON_POST)
            tg.cancel_scope.cancel()
        return big.status_code, small.status_code

    big, small = anyio.run(go)
    assert big == 413
    assert small == 200  # a request under the limit is answered


def test_replay_refuses_a_frame_over_its_limit_on_any_frame_stream() -> None:
    """A plugin's or the in-memory transport: ``replay`` checks the size itself."""
    from cassette.runtime import replay
    from cassette.transports.memory import memory_pair

    client, server = memory_pair()
    ping = b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n'

    async def go() -> list[Any]:
        async with anyio.create_task_group() as tg:
            policy = DeliveryPolicy(max_message_bytes=100)
            tg.start_soon(replay, server, Replayer(LEGACY), policy)
            with anyio.fail_after(20):
                await client.send(Frame(PING + b"\n"))
                first = json.loads((await client.receive()).data)
                await client.send(Frame(ping))
                second = json.loads((await client.receive()).data)
            await client.aclose()
        return [first, second]

    first, second = anyio.run(go)
    assert first["error"]["code"] == -32600
    assert first["error"]["message"] == (
        f"cassette-mcp: a line of {len(PING) + 1} bytes is over the size limit"
    )
    assert second["id"] == 2  # the session went on
