"""Long cassettes for the tests of a replay that answers ``initialize`` from a cassette's
opening (``cassette.store.opening``): big enough to be served that way, and variations
that must not be."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cassette import Cassette, Header, MessageEvent
from cassette.core.wire.model import RecorderInfo
from cassette.store.opening import OPENING_FROM

#: the recorded client's initialize (a live client sending these params is a plain hit)
INITIALIZE: dict[str, Any] = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "opening-test", "version": "1.0.0"},
}
#: enough echo calls, each with a padded answer, for a cassette over ``OPENING_FROM``
CALLS = 2500
PAD = "x" * 300


def long_cassette(
    calls: int = CALLS, *, era: str = "legacy", extra: list[dict[str, Any]] | None = None
) -> Cassette:
    """initialize, notifications/initialized, then ``calls`` echo exchanges (and ``extra``
    client messages at the end, each a c2s event)."""
    events: list[Any] = []

    def add(direction: str, message: dict[str, Any]) -> None:
        events.append(
            MessageEvent(t=0.0, dir=direction, message=message, seq=len(events) + 1)  # type: ignore[arg-type]
        )

    add("c2s", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE})
    add(
        "s2c",
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "opening-test", "version": "1.0.0"},
            },
        },
    )
    add("c2s", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i in range(calls):
        call = {"name": "echo", "arguments": {"message": f"hello {i}"}}
        add("c2s", {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": call})
        text = f"Echo: hello {i} {PAD}"
        result = {"content": [{"type": "text", "text": text}]}
        add("s2c", {"jsonrpc": "2.0", "id": i + 1, "result": result})
    for message in extra or []:
        add("c2s", message)
    header = Header(
        transport="stdio",
        recorder=RecorderInfo("opening-test", "0"),
        started_at="2026-01-01T00:00:00Z",
        target={"command": ["opening-test"]},
        era=era,  # type: ignore[arg-type]
        protocol_version="2025-11-25",
    )
    return Cassette(header, tuple(events))


def write_long(path: Path, **kwargs: Any) -> Path:
    """``long_cassette(**kwargs)`` written to ``path``, checked to be long enough."""
    long_cassette(**kwargs).dump(path)
    assert path.stat().st_size >= OPENING_FROM
    return path
