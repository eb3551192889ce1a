"""cassette-mcp's reference peer behind a TCP listener: something for the plugin to reach.

``python -m cassette_tcp.peer [PORT]`` listens on 127.0.0.1 (a free port by default),
prints ``listening on tcp://HOST:PORT`` on stderr, and answers every connection with its
own ``cassette.testing.ReferencePeer``. Tests start it in process with ``peer_server``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc
from anyio.abc import SocketAttribute

from cassette.testing import ReferencePeer

__all__ = ["peer_server", "serve_peer"]


async def _answer(sock: anyio.abc.SocketStream) -> None:
    peer = ReferencePeer()
    pending = b""
    async with sock:
        try:
            for line in peer.greeting():
                await sock.send(line)
            async for chunk in sock:
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    for reply in peer.feed(line):
                        await sock.send(reply)
                    if peer.exit_code is not None:
                        return  # the peer ends the session: closing the socket says so
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass  # the client went away


async def serve_peer(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    task_status: anyio.abc.TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the reference peer until cancelled; reports ``tcp://HOST:PORT`` when listening."""
    listener = await anyio.create_tcp_listener(local_host=host, local_port=port)
    bound_host, bound_port = listener.extra(SocketAttribute.local_address)[:2]  # noqa: S610
    task_status.started(f"tcp://{bound_host}:{bound_port}")
    async with listener:
        await listener.serve(_answer)


@asynccontextmanager
async def peer_server() -> AsyncIterator[str]:
    """The reference peer on a free local port, for the duration of the block."""
    async with anyio.create_task_group() as tg:
        url = await tg.start(serve_peer)
        try:
            yield url
        finally:
            tg.cancel_scope.cancel()


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0

    async def run() -> None:
        async with anyio.create_task_group() as tg:
            url = await tg.start(serve_peer, "127.0.0.1", port)
            print(f"listening on {url}", file=sys.stderr, flush=True)

    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(run)


if __name__ == "__main__":
    main()
