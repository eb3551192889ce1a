"""Newline framing, sans-IO: bytes in, complete lines (newline included) out.

The stdio transport splits on ``\\n`` only, as the MCP stdio rules and both official SDKs
do; a ``\\r`` before it stays part of the line, so forwarding a line reproduces the bytes.
"""

from __future__ import annotations

__all__ = ["LineBuffer"]


class LineBuffer:
    """Accumulates chunks and hands back every complete line."""

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        """Add a chunk; return the lines it completed, each ending in ``\\n``."""
        data = self._pending + chunk if self._pending else chunk
        end = data.rfind(b"\n")
        if end < 0:
            self._pending = data
            return []
        self._pending = data[end + 1 :]
        lines = data[:end].split(b"\n")
        return [line + b"\n" for line in lines]

    def tail(self) -> bytes:
        """What is left after the last newline (a final line with no terminator)."""
        rest, self._pending = self._pending, b""
        return rest
