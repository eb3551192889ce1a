"""How ``new_episodes`` numbers what it appends to a cassette recorded over streamable HTTP:
after whatever the file holds at the moment of the append (another process may have
appended since it was loaded), so two extenders of one cassette never share a stream name
or a session ordinal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from cassette import Cassette, MessageEvent
from cassette.core.wire.model import Event, HttpEvent
from cassette.modes.extend import Extension, LiveLeg
from cassette.transport import Reply, Target

HEADER = {
    "kind": "header",
    "format": 1,
    "transport": "streamable-http",
    "recorder": {"name": "t", "version": "0"},
    "started_at": "x",
    "era": "legacy",
}
REQUEST = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "b"}}
ANSWER = {"jsonrpc": "2.0", "id": 7, "result": {}}


def line(**fields: Any) -> str:
    return json.dumps(fields, separators=(",", ":")) + "\n"


def message(t: float, direction: str, value: dict[str, Any], **meta: Any) -> str:
    return line(kind="message", t=t, dir=direction, message=value, meta=meta)


def exchange(local: str) -> list[Event]:
    return [
        MessageEvent(t=1.0, dir="c2s", message=REQUEST, meta={"stream": local}),
        HttpEvent(t=1.1, method="POST", stream=local, status=207),
        MessageEvent(t=1.2, dir="s2c", message=ANSWER, meta={"stream": local, "sse": True}),
    ]


def test_appends_take_the_next_free_stream_and_session_at_append_time(tmp_path: Path) -> None:
    tape = tmp_path / "t.jsonl"
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    tape.write_text(line(**HEADER) + message(0.1, "c2s", ping, stream="post-3", session=2))
    extension = Extension(Cassette.load(tape), tape, Target(url="http://127.0.0.1:1/mcp"))
    with tape.open("a") as file:  # another process appended meanwhile
        file.write(message(0.2, "c2s", ping, stream="post-9", session=5))

    async def ignore(_reply: Reply) -> None:
        pass

    async def append(leg: LiveLeg, local: str) -> None:
        leg.batch = exchange(local)  # a settled exchange: the request answered
        leg.answered = [REQUEST]
        await leg._flush_if_settled()

    async def go() -> None:
        async with anyio.create_task_group() as tg:
            mine, other = extension(ignore, tg), extension(ignore, tg)
            await append(mine, "local-1")
            await append(other, "local-2")
            await append(mine, "local-3")

    anyio.run(go)
    events = Cassette.load(tape).events[2:]
    streams = [e.stream if isinstance(e, HttpEvent) else e.meta["stream"] for e in events]
    sessions = [e.session if isinstance(e, HttpEvent) else e.meta["session"] for e in events]
    assert streams == ["post-10"] * 3 + ["post-11"] * 3 + ["post-12"] * 3
    assert sessions == [6] * 3 + [7] * 3 + [6] * 3  # a leg keeps its session
    assert extension.appended == ['tools/call "b"'] * 3
    first = events[2]
    assert isinstance(first, MessageEvent)
    assert dict(first.meta or {}) == {"stream": "post-10", "session": 6, "sse": True}
