"""A server request recorded on the standalone GET stream, replayed to a client that opens
its GET stream only after the request that causes it.

The official Python SDK client starts its GET stream as it sends
``notifications/initialized`` and goes on with its requests meanwhile, so on a loaded
machine a request whose recorded answer asks the client something over the GET stream
(server-everything's ``get-roots-list`` asks ``roots/list``) can reach the replay before
the GET stream does. The replay used to decide then and there that the server request
could not be sent, and went on as if the client had answered: the tool's result went out
at once, the client ended its session, and the ``roots/list`` and the log message after it
arrived on the GET stream it was closing (the SDK logged ``Error parsing SSE message``
with ``BrokenResourceError``), so the replayed callbacks differed from live.

Here a raw client takes the slow path on purpose, in a fixed order: the call, then the
GET stream, then the answer. The replay must send the request on the GET stream when it
opens and hold the call's result until the answer comes, as the recorded server did. The
client answers with another root than the recorded one: the replay warns of that only
when it waited for the answer and compared it (one that went on without waiting, as
before, says nothing).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest

from cassette.core.tape.codec import encode_line
from cassette.core.wire.model import Header, HttpEvent, MessageEvent, RecorderInfo
from cassette.transports.http.sse_parser import SSEParser
from tests.helpers.http_probes import INIT, INITIALIZED, JSON, LEGACY_VERSION
from tests.helpers.support import OFFLINE_ENV, Background, replay_command

pytestmark = pytest.mark.e2e

URL = r"(http://127\.0\.0\.1:\d+/\S*)"
#: a client that answers roots/list (a server may ask only what the client declared)
HELLO = {**INIT, "params": {**INIT["params"], "capabilities": {"roots": {}}}}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get-roots-list"}}
ASK = {"jsonrpc": "2.0", "id": 0, "method": "roots/list"}
ROOTS = {"roots": [{"uri": "file:///work/project", "name": "project"}]}
ANSWER = {"jsonrpc": "2.0", "id": 0, "result": ROOTS}
#: what this client answers: another root, so the replay says so only if it waited for it
OTHER = {
    "jsonrpc": "2.0",
    "id": 0,
    "result": {"roots": [{"uri": "file:///elsewhere", "name": "project"}]},
}
RESULT = {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "1 root"}]}}
LOG = {
    "jsonrpc": "2.0",
    "method": "notifications/message",
    "params": {"level": "info", "data": "Roots updated: 1 root(s) received from client"},
}
SERVED = {"protocolVersion": LEGACY_VERSION, "capabilities": {"tools": {}, "logging": {}}}


def write_tape(path: Path) -> None:
    """The session as server-everything's streamable HTTP server answered it: the roots
    request and the log message on the GET stream, the result on the call's own POST,
    sent only once the client had answered."""
    header = Header(
        "streamable-http",
        RecorderInfo("cassette-mcp", "1"),
        "2026-01-01T00:00:00.000Z",
        target={"url": "http://127.0.0.1:9/mcp"},
        era="legacy",
        protocol_version=LEGACY_VERSION,
    )
    session = {"session": 1}
    sse = {"session": 1, "sse": True}
    events: list[Any] = [
        ("c2s", HELLO, {"stream": "post-1"}),
        ("s2c", {"jsonrpc": "2.0", "id": 1, "result": SERVED}, {"stream": "post-1", **sse}),
        ("c2s", INITIALIZED, {"stream": "post-2", **session}),
        HttpEvent(t=0.0, method="GET", stream="get-3", status=200, session=1),
        ("c2s", CALL, {"stream": "post-4", **session}),
        ("s2c", ASK, {"stream": "get-3", **sse}),
        ("c2s", ANSWER, {"stream": "post-5", **session}),
        ("s2c", RESULT, {"stream": "post-4", **sse}),
        ("s2c", LOG, {"stream": "get-3", **sse}),
    ]
    lines = [encode_line(header)]
    for n, event in enumerate(events):
        if isinstance(event, tuple):
            direction, message, meta = event
            lines.append(encode_line(MessageEvent(0.1 * n, direction, message, meta=meta)))
        else:
            lines.append(encode_line(attrs.evolve(event, t=0.1 * n)))
    path.write_bytes(b"".join(lines))


def messages(response: httpx.Response) -> Iterator[Any]:
    """The JSON-RPC messages of an event stream, as they arrive."""
    parser = SSEParser()
    for chunk in response.iter_bytes():
        for event in parser.feed(chunk):
            if event.data:
                yield json.loads(event.data)


def test_a_get_stream_opened_after_the_call_still_gets_the_request_the_result_waits_for(
    tmp_path: Path,
) -> None:
    tape = tmp_path / "roots.jsonl"
    write_tape(tape)
    argv = [*replay_command(tape), "--front", "http", "--port", "0"]
    with Background(argv, env=OFFLINE_ENV) as front:
        url = front.wait_for("serving on " + URL).group(1)
        with httpx.Client(timeout=30) as client:
            opened = client.post(url, json=HELLO, headers=JSON)
            assert opened.status_code == 200, opened.text
            session = {**JSON, "mcp-session-id": opened.headers["mcp-session-id"]}
            session["mcp-protocol-version"] = LEGACY_VERSION
            assert client.post(url, json=INITIALIZED, headers=session).status_code == 202
            get = {k: v for k, v in session.items() if k != "content-type"}
            get["accept"] = "text/event-stream"
            with client.stream("POST", url, json=CALL, headers=session) as call:
                assert call.status_code == 200
                with client.stream("GET", url, headers=get) as stream:
                    assert stream.status_code == 200
                    from_get = messages(stream)
                    assert next(from_get) == ASK
                    answered = client.post(url, json=OTHER, headers=session)
                    assert answered.status_code == 202
                    assert list(messages(call)) == [RESULT]
                    assert next(from_get) == LOG
            assert client.delete(url, headers=get).status_code == 200
        code = front.stop()
    out = front.output()
    assert code == 0, out
    assert "answer to roots/list (id 0) differs from the recording at /roots/0/uri" in out, out
    assert "miss" not in out, out
