"""The reference peer: a tiny JSON-RPC server whose every answer the check-suite can predict.

Standard library only, and sans-IO at its core: ``ReferencePeer.feed`` takes one frame
(one line) and returns the lines to send back, so the same peer can sit behind any
newline-framed transport (stdio here; a TCP socket, a pipe, ... in a plugin's own tests).
Run it over stdio with ``python -m cassette.testing.peer``.

Besides ``initialize``, ``ping``, ``tools/list`` and an ``echo`` tool, it has methods made
for the checks:

* ``check/burst`` ``{"count": N}``: N ``check/tick`` notifications numbered 0..N-1, then
  the response (ordering);
* ``check/raw`` ``{"text": T}``: the line T verbatim, which is not JSON-RPC, then the
  response (framing of raw lines);
* ``check/exit`` ``{"code": C}``: the response, then the peer ends with exit code C (the
  end of the stream seen from the server's side).

It greets every connection with ``BANNER``, a line that is not JSON-RPC, as chatty servers
do, and answers a line that is not JSON with a parse error.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Final

__all__ = ["BANNER", "PEER_NAME", "ReferencePeer", "main"]

PEER_NAME: Final = "cassette-check-peer"
BANNER: Final = b"cassette-check-peer: ready (this line is not JSON-RPC)\n"


#: The requests the peer answers, and the method answering each.
_HANDLERS: Final = {
    "initialize": "_initialize",
    "ping": "_ping",
    "tools/list": "_tools_list",
    "tools/call": "_tools_call",
    "check/burst": "_check_burst",
    "check/raw": "_check_raw",
    "check/exit": "_check_exit",
}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def _error(msg_id: Any, code: int, text: str) -> bytes:
    return _line({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": text}})


class ReferencePeer:
    """One connection's worth of the reference server (see the module docstring)."""

    def __init__(self) -> None:
        #: set by ``check/exit``: the runner should stop, with this exit code
        self.exit_code: int | None = None

    def greeting(self) -> list[bytes]:
        """What the peer says before anything is asked."""
        return [BANNER]

    def feed(self, frame: bytes) -> list[bytes]:
        """Answer one frame; each returned line ends with a newline."""
        if not frame.strip():
            return []
        try:
            message = json.loads(frame)
        except ValueError:
            return [_error(None, -32700, "Parse error")]
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return [_error(None, -32600, "Invalid Request")]
        method = message.get("method")
        if "id" not in message or not isinstance(method, str):
            return []  # a notification, or the client answering: nothing to say
        params = message.get("params")
        return self._request(message["id"], method, params if isinstance(params, dict) else {})

    def _request(self, msg_id: Any, method: str, params: dict[str, Any]) -> list[bytes]:
        handler = getattr(self, _HANDLERS[method], None) if method in _HANDLERS else None
        if handler is None:
            return [_error(msg_id, -32601, "Method not found")]
        try:
            *before, value = handler(params)
        except ValueError as exc:
            return [_error(msg_id, -32602, str(exc))]
        return [*before, _line({"jsonrpc": "2.0", "id": msg_id, "result": value})]

    # One method per request the peer answers: the lines to send first, then the result.

    def _initialize(self, params: dict[str, Any]) -> list[Any]:
        version = params.get("protocolVersion")
        return [
            {
                "protocolVersion": version if isinstance(version, str) else "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": PEER_NAME, "version": "1"},
            }
        ]

    def _ping(self, _params: dict[str, Any]) -> list[Any]:
        return [{}]

    def _tools_list(self, _params: dict[str, Any]) -> list[Any]:
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        return [{"tools": [{"name": "echo", "inputSchema": schema}]}]

    def _tools_call(self, params: dict[str, Any]) -> list[Any]:
        if params.get("name") != "echo":
            raise ValueError(f"unknown tool {params.get('name')!r}")
        arguments = params.get("arguments")
        text = arguments.get("text", "") if isinstance(arguments, dict) else ""
        return [{"content": [{"type": "text", "text": str(text)}]}]

    def _check_burst(self, params: dict[str, Any]) -> list[Any]:
        count = params.get("count")
        if not isinstance(count, int) or not 0 <= count <= 10_000:
            raise ValueError("count must be an integer from 0 to 10000")
        ticks = [
            _line({"jsonrpc": "2.0", "method": "check/tick", "params": {"n": n}})
            for n in range(count)
        ]
        return [*ticks, {"count": count}]

    def _check_raw(self, params: dict[str, Any]) -> list[Any]:
        text = params.get("text")
        if not isinstance(text, str) or "\n" in text:
            raise ValueError("text must be a string without a newline")
        return [text.encode("utf-8") + b"\n", {}]

    def _check_exit(self, params: dict[str, Any]) -> list[Any]:
        code = params.get("code")
        self.exit_code = code if isinstance(code, int) else 0
        return [{}]


def main() -> int:
    """Serve one client on stdin and stdout; exit at end of input or on ``check/exit``."""
    peer = ReferencePeer()
    out = sys.stdout.buffer
    sys.stderr.write(f"{PEER_NAME}: started\n")
    sys.stderr.flush()
    for line in peer.greeting():
        out.write(line)
    out.flush()
    for frame in sys.stdin.buffer:
        for line in peer.feed(frame):
            out.write(line)
        out.flush()
        if peer.exit_code is not None:
            return peer.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
