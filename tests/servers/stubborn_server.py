"""A stdio MCP server that does not go when asked: for the recorder's shutdown tests.

Standard library only, so what it does at the end of its input is exactly what the
options say (an SDK server always exits there). It writes ``stubborn-server: pid N`` on
stderr first, so a test can check by process id that it is gone. It answers
``initialize``, ``tools/list`` and ``tools/call`` of ``echo`` at once; a call of ``hold``
is answered when its stdin closes (what a server does with a request in flight when it is
asked to stop), so an answer comes during the recorder's shutdown, with no clock.

  --ignore-eof      keep running when stdin closes (answers in flight still go out)
  --ignore-sigterm  SIGTERM does nothing (only SIGKILL ends it)

Without ``--ignore-eof`` it exits 0 at the end of its input, once its answers are out.
"""

import json
import os
import signal
import sys
import time


def send(message: dict) -> None:
    say(sys.stdout, json.dumps(message))


def say(stream, text: str) -> None:
    """Write a line; a reader that is gone does not end this server (it is stubborn)."""
    try:
        stream.write(text + "\n")
        stream.flush()
    except OSError:
        pass


def answer(message: dict) -> dict | None:
    method = message.get("method")
    if method == "initialize":
        return {
            "protocolVersion": message["params"].get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "stubborn-server", "version": "1.0"},
        }
    if method == "tools/list":
        schema = {"type": "object"}
        return {"tools": [{"name": n, "inputSchema": schema} for n in ("echo", "hold")]}
    if method == "tools/call":
        arguments = message["params"].get("arguments") or {}
        text = json.dumps(arguments, sort_keys=True)
        return {"content": [{"type": "text", "text": text}]}
    return None


def reply(message: dict) -> None:
    result = answer(message)
    if result is None:
        error = {"code": -32601, "message": "Method not found"}
        send({"jsonrpc": "2.0", "id": message["id"], "error": error})
    else:
        send({"jsonrpc": "2.0", "id": message["id"], "result": result})


def main(argv: list[str]) -> int:
    if "--ignore-sigterm" in argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only what the recorder sends counts
    say(sys.stderr, f"stubborn-server: pid {os.getpid()}")
    held: list[dict] = []
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        params = message.get("params") or {}
        if message["method"] == "tools/call" and params.get("name") == "hold":
            held.append(message)
        else:
            reply(message)
    for message in held:
        reply(message)
    say(sys.stderr, "stubborn-server: end of input")
    if "--ignore-eof" in argv:
        while True:
            time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
