"""Newline framing, sans-IO: bytes in, complete lines (newline included) out.

The stdio transport splits on ``\\n`` only, as the MCP stdio rules and both official SDKs
do; a ``\\r`` before it stays part of the line, so forwarding a line reproduces the bytes.

A line may be arbitrarily long and arrive in many chunks: pieces are kept in a list and
joined once, when the line ends, so a long line costs linear time. With a ``limit``, a
line that grows past it is not kept at all: its bytes are counted and dropped until its
newline, and it comes out as an ``Oversized`` marker saying how long it was, so the caller
can refuse it with a clear error instead of running out of memory.
"""

from __future__ import annotations

__all__ = ["LineBuffer", "Oversized"]


class Oversized(bytes):
    """Stands for a line over the limit (its content was dropped); ``size`` is its length."""

    size: int

    def __new__(cls, size: int) -> Oversized:
        marker = super().__new__(cls, b"")
        marker.size = size
        return marker


class LineBuffer:
    """Accumulates chunks and hands back every complete line."""

    __slots__ = ("_dropped", "_parts", "_size", "limit")

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        self._dropped = -1  # >= 0 while skipping an oversized line

    def feed(self, chunk: bytes) -> list[bytes]:
        """Add a chunk; return the lines it completed, each ending in ``\\n``."""
        out: list[bytes] = []
        start = 0
        if not self._parts and self._dropped < 0 and chunk.endswith(b"\n") and self.limit is None:
            lines = chunk[:-1].split(b"\n")  # the common case: whole lines, fast path
            return [line + b"\n" for line in lines]
        while (end := chunk.find(b"\n", start)) >= 0:
            piece = chunk[start : end + 1]
            start = end + 1
            if self._dropped >= 0:
                out.append(Oversized(self._dropped + len(piece)))
                self._dropped = -1
            elif self._parts:
                size = self._size + len(piece)
                over = self.limit is not None and size > self.limit
                out.append(Oversized(size) if over else b"".join((*self._parts, piece)))
                self._parts, self._size = [], 0
            elif self.limit is not None and len(piece) > self.limit:
                out.append(Oversized(len(piece)))
            else:
                out.append(piece)
        self._keep(chunk[start:])
        return out

    def _keep(self, rest: bytes) -> None:
        if not rest:
            return
        if self._dropped >= 0:
            self._dropped += len(rest)
            return
        self._parts.append(rest)
        self._size += len(rest)
        if self.limit is not None and self._size > self.limit:
            self._dropped, self._parts, self._size = self._size, [], 0

    def tail(self) -> bytes:
        """What is left after the last newline (a final line with no terminator)."""
        if self._dropped >= 0:
            size, self._dropped = self._dropped, -1
            return Oversized(size)
        rest = b"".join(self._parts)
        self._parts, self._size = [], 0
        return rest
