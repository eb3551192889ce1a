"""Knowing when a client has *read* what we sent, so what a live server sent apart arrives apart.

Why: a client that handles everything one read returns as one batch (the TypeScript SDK
does, on stdio and on the legacy SSE stream) handles a response before the progress
notifications that came in the same read, and drops them. A live server's work keeps them
apart; a replay has no work to do. Yielding to our event loop between writes does not help:
the client may not have run yet. So before a response that follows notifications a front
waits until the client has read them, bounded by a deadline, where that can be known:

* stdio (``cassette.transports._fdio.unread_counter``): a pipe's unread bytes, or a Unix
  socket's unconsumed ones;
* a TCP client on this machine (Linux): its socket's receive queue, from the kernel's
  table of TCP sockets (``/proc/net/tcp``, ``tcp6``), found by the connection's two
  addresses. Our own socket's queue would say only that the bytes were acknowledged, which
  happens before the client program reads them.

Nothing announces that moment, so it is polled: at once, then at growing intervals
(0.1 ms doubling to 5 ms). A client that reads promptly costs a fraction of a millisecond.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final

import anyio

__all__ = ["Counter", "tcp_peer_counter", "until_read"]

#: How much a reader has not read yet (``None``: it can no longer be told).
Counter = Callable[[], int | None]

_FIRST_STEP: Final = 0.0001
_LONGEST_STEP: Final = 0.005


async def until_read(unread: Counter) -> bool:
    """Wait until ``unread()`` is 0 (``True``), or it can no longer tell (``False``). The
    caller bounds the wait with a deadline."""
    step = _FIRST_STEP
    while True:
        count = unread()
        if count is None:
            return False
        if count == 0:
            return True
        await anyio.sleep(step)
        step = min(step * 2, _LONGEST_STEP)


def tcp_peer_counter(client: object, server: object) -> Counter | None:
    """A ``Counter`` for the receive queue of a TCP client on this machine, from the ASGI
    ``client`` and ``server`` addresses of its connection; ``None`` where it cannot be read
    (not Linux, no such addresses, a client elsewhere is found at the first poll)."""
    if not sys.platform.startswith("linux"):
        return None
    ours = _table_key(server)
    theirs = _table_key(client)
    if ours is None or theirs is None or ours[0] != theirs[0]:
        return None
    table = Path("/proc/net") / theirs[0]
    needle = f"{theirs[1]} {ours[1]} "  # the client's socket: local is the client

    def count() -> int | None:
        try:
            text = table.read_text()
        except OSError:
            return None
        at = text.find(needle)
        if at < 0:
            return None
        # "<local> <remote> <st> <tx_queue>:<rx_queue> ..."
        fields = text[at + len(needle) :].split(maxsplit=2)
        if len(fields) < 2:
            return None
        with contextlib.suppress(ValueError):
            return int(fields[1].partition(":")[2], 16)
        return None

    return count


def _table_key(address: object) -> tuple[str, str] | None:
    """(table, ``ADDRESS:PORT``) as the kernel's TCP table spells an ASGI address."""
    if not isinstance(address, (list, tuple)) or len(address) < 2:
        return None
    host, port = address[0], address[1]
    if not isinstance(host, str) or not isinstance(port, int):
        return None
    for family, table in ((socket.AF_INET, "tcp"), (socket.AF_INET6, "tcp6")):
        try:
            packed = socket.inet_pton(family, host)
        except OSError:
            continue
        # Each 32-bit word in the machine's byte order, as the kernel prints it.
        words = struct.unpack(f"={len(packed) // 4}I", packed)
        return table, "".join(f"{word:08X}" for word in words) + f":{port:04X}"
    return None
