"""Record with the sans-IO `Recorder` from a harness of your own, into a cassette file.

    python examples/recorder.py [TAPE]

Use this when your harness already carries the bytes between a client and a server (an
in-process pipe, a test double of a transport, a proxy of your own) and only needs them
written as a cassette: the `Recorder` turns each frame into records (redacted, the era
decided by the first successful exchange), and a `CassetteWriter` appends them with one
write each, so a crash leaves every record written so far readable. Nothing here starts a
process or opens a socket. The cassette it writes replays like any other.
"""

from __future__ import annotations

import json
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from cassette import Cassette, CassetteWriter, Recorder, Redactor, Replayer


def frame(message: dict) -> bytes:  # type: ignore[type-arg]
    """One JSON-RPC message as a stdio line carries it."""
    return json.dumps(message).encode() + b"\n"


#: what the harness saw pass, in order: (direction, frame, seconds since the start);
#: ``stderr``: a line the server printed there
TRAFFIC: list[tuple[Literal["c2s", "s2c", "stderr"], bytes, float]] = [
    (
        "c2s",
        frame(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "my-harness", "version": "1"},
                },
            }
        ),
        0.0,
    ),
    ("stderr", b"weather server ready", 0.005),
    (
        "s2c",
        frame(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "weather", "version": "1.0"},
                },
            }
        ),
        0.012,
    ),
    ("c2s", frame({"jsonrpc": "2.0", "method": "notifications/initialized"}), 0.013),
    (
        "c2s",
        frame({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "token"}}),
        0.020,
    ),
    (
        "s2c",
        frame(  # a fake credential the server hands out: redacted before it is written
            {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {"content": [{"type": "text", "text": "ghp_" + "0123456789ab" * 3}]},
            }
        ),
        0.031,
    ),
]


def record(tape: Path) -> None:
    recorder = Recorder(
        transport="stdio",  # what the header says the session ran on
        started_at=datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        target={"command": ["python", "weather_server.py"]},  # for show, verify and variant
        redactor=Redactor(),  # the built-in rules; None records every byte as it was
    )
    with CassetteWriter(tape).open() as writer:
        for direction, data, t in TRAFFIC:
            if direction == "stderr":
                writer.write(recorder.stderr(data.decode(), t))
            else:  # nothing comes back until the era is known; then the header and the rest
                writer.write(recorder.observe(direction, data, t))
        writer.write(recorder.exit(0, 0.040))  # how the server ended
        writer.write(recorder.close())  # whatever is still held back


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tape = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tmp) / "weather.jsonl"
        record(tape)
        cassette = Cassette.load(tape)
        assert "ghp_" not in tape.read_text("utf-8")
        replayer = Replayer(cassette)
        replayer.receive(json.loads(TRAFFIC[0][1]))  # the recorded initialize
        reply = replayer.receive(
            {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "token"}}
        )
        print(f"wrote {len(cassette.events)} events ({cassette.era} era) to {tape.name}")
        print("replayed:", reply.messages[-1]["result"]["content"][0]["text"])


if __name__ == "__main__":
    main()
