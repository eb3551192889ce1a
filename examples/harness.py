"""Record a stdio server from a Python harness, then replay it in-process.

    python examples/harness.py

This is the library side of cassette-mcp (`from cassette import ...`): no subprocess for the
replay, no port, no SDK. The harness plays the client with `ClientConnection.request`.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import anyio

from cassette import Cassette, Replayer, open_recording, open_replay

SERVER = [sys.executable, str(Path(__file__).with_name("notes_server.py"))]
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "harness", "version": "1"},
}


async def session(server) -> list[dict]:  # type: ignore[no-untyped-def]
    """The scripted client: the same calls against the live server and against the tape."""
    replies = [await server.request("initialize", INIT)]
    await server.notify("notifications/initialized")
    replies.append(await server.request("tools/list"))
    for text in ("buy milk", "call mum"):
        replies.append(
            await server.request("tools/call", {"name": "add_note", "arguments": {"text": text}})
        )
    return replies


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tape = Path(tmp) / "notes.jsonl"

        # 1. Record: a transparent proxy in front of the real server, writing as it goes.
        async with open_recording(SERVER, tape) as server:
            live = await session(server)

        # 2. Replay in-process from the file: the server is not running any more.
        cassette = Cassette.load(tape)
        async with open_replay(cassette) as server:
            replayed = await session(server)
            miss = await server.request(
                "tools/call", {"name": "add_note", "arguments": {"text": "unrecorded"}}
            )

        assert replayed == live, (replayed, live)
        print(f"recorded {len(cassette.events)} events ({cassette.era} era); replay matched live")
        print("an unrecorded call gets:", miss["error"]["message"])

        # 3. The sans-IO core, with no I/O at all: values in, values out.
        replayer = Replayer(cassette, strategy="strict")
        reply = replayer.receive({"jsonrpc": "2.0", "id": "x", "method": "tools/list"})
        print(
            "sans-IO reply to tools/list:",
            [t["name"] for t in reply.messages[0]["result"]["tools"]],
        )


if __name__ == "__main__":
    anyio.run(main)
