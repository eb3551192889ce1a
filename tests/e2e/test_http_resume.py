"""Resuming a dropped POST stream with ``Last-Event-ID``, live and on replay.

A raw client calls a slow tool of server-everything (progress notifications, then the
result), and keeps only the first progress notification: it drops the POST's event stream
there and resumes with a GET carrying that event's id. The replay must then send exactly
what the client lacked, the tool result included, and end the GET with the POST's stream.

Live, server-everything's event store replays what it stored after the id, so the live
side of the comparison reads the whole POST stream first and resumes from its first
progress event (the server's view of what was sent is the same); the replay runs with
``--pace recorded``, so its client really drops the stream while the rest is still to come.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cassette.transports.http.sse_parser import SSEEvent, SSEParser
from tests.e2e.test_http_sdk import recording_proxy, start_everything_http
from tests.helpers.http_probes import INIT, INITIALIZED, JSON, LEGACY_VERSION
from tests.helpers.support import OFFLINE_ENV, Background, replay_command

pytestmark = pytest.mark.e2e

CALL = {
    "jsonrpc": "2.0",
    "id": 5,
    "method": "tools/call",
    "params": {
        "name": "trigger-long-running-operation",
        "arguments": {"duration": 1.2, "steps": 4},
        "_meta": {"progressToken": "resume"},
    },
}


def events(response: httpx.Response) -> Iterator[SSEEvent]:
    parser = SSEParser()
    for chunk in response.iter_bytes():
        yield from parser.feed(chunk)
    yield from parser.close()


def message(event: SSEEvent) -> Any:
    return json.loads(event.data) if event.data else None


def open_session(client: httpx.Client, url: str) -> dict[str, str]:
    opened = client.post(url, json=INIT, headers=JSON)
    assert opened.status_code == 200
    headers = {**JSON, "mcp-session-id": opened.headers["mcp-session-id"]}
    headers["mcp-protocol-version"] = LEGACY_VERSION
    assert client.post(url, json=INITIALIZED, headers=headers).status_code == 202
    return headers


def live_resumption(url: str) -> tuple[list[Any], list[Any]]:
    """The whole POST stream, and what resuming after its first progress event gives."""
    with httpx.Client(timeout=30) as client:
        session = open_session(client, url)
        with client.stream("POST", url, json=CALL, headers=session) as stream:
            received = [e for e in events(stream) if e.data]
        first = next(e for e in received if message(e).get("method") == "notifications/progress")
        headers = {
            "accept": "text/event-stream",
            "mcp-session-id": session["mcp-session-id"],
            "last-event-id": first.last_event_id,
        }
        rest: list[Any] = []
        with client.stream("GET", url, headers=headers) as resumed:
            for event in events(resumed):  # live keeps the GET open: read up to the result
                if event.data:
                    rest.append(message(event))
                if rest and rest[-1].get("id") == CALL["id"]:
                    break
        return [message(e) for e in received], rest


def replayed_resumption(url: str) -> tuple[list[Any], list[Any]]:
    """Drop the POST stream after its first progress event; resume; read to the end."""
    with httpx.Client(timeout=30) as client:
        session = open_session(client, url)
        kept: list[SSEEvent] = []
        with client.stream("POST", url, json=CALL, headers=session) as stream:
            for event in events(stream):
                if event.data:
                    kept.append(event)
                    break  # the connection drops here
        headers = {
            "accept": "text/event-stream",
            "mcp-session-id": session["mcp-session-id"],
            "last-event-id": kept[-1].last_event_id,
        }
        with client.stream("GET", url, headers=headers) as resumed:
            assert resumed.status_code == 200
            rest = [message(e) for e in events(resumed) if e.data]  # ends by itself
        return [message(e) for e in kept], rest


def test_a_dropped_post_stream_resumes_with_everything_it_lacked(tmp_path: Path) -> None:
    tape = tmp_path / "resume.jsonl"
    server, upstream = start_everything_http()
    with server:
        proxy, url = recording_proxy(tape, upstream)
        with proxy:
            with httpx.Client(timeout=30) as client:
                session = open_session(client, url)
                with client.stream("POST", url, json=CALL, headers=session) as stream:
                    assert [e for e in events(stream) if e.data]
            proxy.stop()
        whole, live_rest = live_resumption(upstream)
    assert [m.get("method") for m in whole] == ["notifications/progress"] * 4 + [None]
    assert live_rest == whole[1:]  # the server's own resumption: all after the first

    front = Background(
        [*replay_command(tape), "--front", "http", "--port", "0", "--pace", "recorded"],
        env=OFFLINE_ENV,
    )
    with front:
        url = front.wait_for(r"serving on (http://\S+)").group(1)
        kept, rest = replayed_resumption(url)
        assert front.stop() == 0, front.output()
    assert kept == whole[:1]
    assert rest == live_rest  # progress 2 to 4 and the tool result, then the end
