"""A stdio MCP server with only the standard library whose answers never vary, for the
re-recording tests: two recordings of it hold the same messages, and ``STEADY_TEMP``
changes one answer (``forecast``'s temperature) and nothing else. It writes nothing on
stderr, so the order of the recorded events is the same in every run."""

import json
import os
import sys

TOOLS = [
    {"name": "greet", "inputSchema": {"type": "object"}},
    {"name": "forecast", "inputSchema": {"type": "object"}},
]


def answer(message: dict) -> dict | None:
    method = message.get("method")
    if method == "initialize":
        return {
            "protocolVersion": message["params"].get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "steady", "version": "1.0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call" and message["params"]["name"] == "forecast":
        text = f"Oslo: {os.environ.get('STEADY_TEMP', '-3')} C, snow"
        return {"content": [{"type": "text", "text": text}]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "Hello, Ada."}]}
    return None  # anything else (a modern client's server/discover, ping): not found


def main() -> int:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        result = answer(message)
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        if result is None:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        else:
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
