"""A small stdio MCP server with no dependencies, for the examples: one tool, `add_note`,
and `tools/list`. It exits when its stdin closes, as a well-behaved stdio server does."""

import json
import sys

NOTES: list[str] = []

for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue  # notifications need no answer
    method = request["method"]
    if method == "initialize":
        result = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "notes", "version": "1.0.0"},
        }
    elif method == "tools/list":
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        result = {
            "tools": [{"name": "add_note", "description": "Keep a note.", "inputSchema": schema}]
        }
    elif method == "tools/call":
        NOTES.append(request["params"]["arguments"]["text"])
        result = {"content": [{"type": "text", "text": f"{len(NOTES)} note(s) kept"}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + "\n")
    sys.stdout.flush()
