"""A tiny stdio MCP server using only the standard library, for precise transport tests.

It says a line on stderr at start-up and prints one line on stdout that is not JSON-RPC
(as chatty servers do), answers ``initialize``, ``tools/list`` and ``tools/call`` for
``echo`` (and ``crash``, which exits with the code it is given), and exits 0 at stdin EOF.
``hold`` is never answered until a later ``release`` call: its answer then comes first, late
(for the recorder's ``--upstream-timeout``).
"""

import json
import sys


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> int:
    sys.stderr.write("raw-server: starting\n")
    sys.stderr.flush()
    sys.stdout.write("raw-server banner (not JSON-RPC)\n")
    sys.stdout.flush()
    held: list[dict] = []
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if "id" not in message:
            continue
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "initialize":
            reply["result"] = {
                "protocolVersion": message["params"].get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw-server", "version": "1.0"},
            }
        elif method == "tools/list":
            reply["result"] = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call" and message["params"]["name"] == "crash":
            sys.stderr.write("raw-server: crashing on request\n")
            sys.stderr.flush()
            return int(message["params"]["arguments"]["code"])
        elif method == "tools/call" and message["params"]["name"] == "hold":
            held.append({**reply, "result": {"content": [{"type": "text", "text": "late"}]}})
            continue
        elif method == "tools/call" and message["params"]["name"] == "release":
            for answer in held:
                send(answer)
            held.clear()
            reply["result"] = {"content": [{"type": "text", "text": "released"}]}
        elif method == "tools/call":
            text = message["params"]["arguments"].get("text", "")
            reply["result"] = {"content": [{"type": "text", "text": text}]}
        else:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        send(reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
