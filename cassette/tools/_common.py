"""Shared pieces of the toolbox: findings, request/response pairing."""

from __future__ import annotations

import json
import sys
from typing import Any, Literal

import attrs

from cassette.core.model import Event, MessageEvent
from cassette.core.pairing import Exchange, exchanges, kind_of, same_json_id

__all__ = [
    "Caller",
    "Exchange",
    "Finding",
    "emit",
    "exchanges",
    "kind_of",
    "same_json_id",
    "size_of",
]

Severity = Literal["error", "warning", "info"]


@attrs.frozen(slots=True)
class Finding:
    """One thing wrong with a cassette, at a line of its file (1 is the header)."""

    line: int
    code: str
    message: str
    severity: Severity = "error"

    def as_data(self) -> dict[str, Any]:
        return attrs.asdict(self)


def size_of(event: Event) -> int:
    """Bytes the event's payload takes as compact JSON (or text)."""
    if isinstance(event, MessageEvent):
        return len(json.dumps(event.message, separators=(",", ":"), ensure_ascii=False).encode())
    text = getattr(event, "text", None) or getattr(event, "b64", None) or ""
    return len(str(text).encode())


class Caller:
    """Requests one at a time over a ``ClientConnection``-like ``conn``, numbered here.

    An error with a null id answers the request in flight: a server that could not tell
    which request it refuses (an HTTP 400 body such as "Server not initialized" to a
    ``server/discover`` probe) says so with ``"id": null``, and waiting for an answer with
    the request's own id would then last until the deadline. With one request in flight
    there is no doubt whose error it is.
    """

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self._next_id = 0

    async def request(self, method: str, params: Any = None) -> dict[str, Any]:
        self._next_id += 1
        msg_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.conn.send(message)
        while True:
            reply: dict[str, Any] = await self.conn.receive()
            if "method" not in reply and (
                reply.get("id") == msg_id or (reply.get("id") is None and "error" in reply)
            ):
                return reply

    async def notify(self, method: str, params: Any = None) -> None:
        await self.conn.notify(method, params)


def emit(text: str) -> None:
    """Reports go to stdout: these commands carry no protocol there."""
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
    sys.stdout.flush()
