"""cassette's own MCP client connection: one request at a time, and the server's questions
answered while it waits.

A server may ask its client something in the middle of answering a request
(``sampling/createMessage``, ``elicitation/create``, ``roots/list``, ``ping``) and will not
answer until it hears back. A client that only waits for its own response would then wait
for ever; this one hands every server request it reads to an ``Answerer`` and sends back
what that returns, then keeps waiting. Notifications are not kept: what the server said
is in the recording, and a long session must not grow our memory.

An error with a null id answers the request in flight: a server that could not tell which
request it refuses (an HTTP 400 body such as "Server not initialized" to a
``server/discover`` probe) says so with ``"id": null``, and waiting for an answer with the
request's own id would then last until the deadline. With one request in flight there is
no doubt whose error it is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from cassette.core.wire.jsonrpc import JSONObject
from cassette.runtime.harness import ClientConnection
from cassette.transport import FrameStream

__all__ = ["Answerer", "McpClient", "closed_errors", "refuse"]

#: Given a server's request, the body of the answer: ``{"result": ...}`` or ``{"error": ...}``.
Answerer = Callable[[JSONObject], Awaitable[JSONObject]]

METHOD_NOT_FOUND = -32601


def closed_errors() -> tuple[type[BaseException], ...]:
    """What the connection raises once the server is gone (``except closed_errors():``).
    A server that exits at once is seen either as the end of its output or, when our write
    comes second, as a broken stdin (``TransportClosedError``): one failure, however it
    shows. anyio is imported here, not at import time, for the commands' start-up."""
    import anyio

    from cassette.errors import TransportClosedError

    return (
        anyio.EndOfStream,
        anyio.ClosedResourceError,
        anyio.BrokenResourceError,
        TransportClosedError,
    )


async def refuse(request: JSONObject) -> JSONObject:
    """The answer of a client that offers nothing: ``ping`` is answered (every client
    must), anything else is "Method not found"."""
    if request.get("method") == "ping":
        return {"result": {}}
    return {"error": {"code": METHOD_NOT_FOUND, "message": "Method not found"}}


class McpClient:
    """Requests numbered here, over a ``FrameStream``; server requests go to ``answer``."""

    def __init__(self, stream: FrameStream | ClientConnection, answer: Answerer = refuse) -> None:
        self.conn = stream if isinstance(stream, ClientConnection) else ClientConnection(stream)
        self.answer = answer
        self._next_id = 0

    async def request(self, method: str, params: Any = None) -> JSONObject:
        """Send a request and return its response (result or error); every server request
        read meanwhile is answered first."""
        self._next_id += 1
        msg_id = self._next_id
        message: JSONObject = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.conn.send(message)
        while True:
            reply = await self.conn.receive()
            if "method" in reply:
                if "id" in reply:
                    await self._answer(reply)
                continue  # a notification: recorded where it matters, not kept here
            if reply.get("id") == msg_id or (reply.get("id") is None and "error" in reply):
                return reply

    async def _answer(self, request: JSONObject) -> None:
        body = await self.answer(request)
        await self.conn.send({"jsonrpc": "2.0", "id": request["id"], **body})

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        await self.conn.notify(method, params)
