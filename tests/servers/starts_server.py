"""A stdio MCP server (standard library only) that knows how often it was started.

``starts_server.py COUNTER``: each start adds one to the number in the file COUNTER, and
its ``visit`` tool answers with that number, so a client that starts the server once per
call sees ``start 1``, ``start 2``, ... live, and a replay that served the wrong start
would answer with the wrong number. ``echo`` answers its ``text``.
"""

import json
import sys
from pathlib import Path

TOOLS = [
    {"name": "visit", "description": "which start this is", "inputSchema": {"type": "object"}},
    {
        "name": "echo",
        "description": "echo the text",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
]


def started(counter: Path) -> int:
    text = counter.read_text().strip() if counter.exists() else ""
    number = int(text or 0) + 1
    counter.write_text(str(number))
    return number


def answer(message: dict, number: int) -> dict | None:
    method = message.get("method")
    if method == "initialize":
        return {
            "protocolVersion": message["params"].get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "starts", "version": "1.0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call" and message["params"]["name"] == "visit":
        return {"content": [{"type": "text", "text": f"start {number}"}]}
    if method == "tools/call":
        text = str(message["params"].get("arguments", {}).get("text", ""))
        return {"content": [{"type": "text", "text": f"echo: {text}"}]}
    if method == "ping":
        return {}
    return None


def main() -> int:
    number = started(Path(sys.argv[1]))
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        result = answer(message, number)
        reply: dict = {"jsonrpc": "2.0", "id": message["id"]}
        if result is None:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        else:
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
