"""A stdio MCP server with only the standard library, for ``show``'s views of time and
failure: a slow tool, a tool that fails, a tool it does not know, and a chatty stderr.

``lookup`` answers at once; ``slow_report`` answers after ``WATERFALL_SLOW`` seconds
(default 1.2: the server's own behaviour, what the views must make visible, not a wait
in a test); ``flaky_upload`` answers with ``isError: true`` (the tool ran and failed); a
tool it does not know gets the JSON-RPC error -32602. It writes a line on stderr at
start-up and one per call, as servers that log do, and exits 0 at stdin EOF.
``WATERFALL_REGIONS`` (default 3) changes the report's text, for a server that drifted.
"""

import json
import os
import sys
import time

TOOLS = [
    {"name": name, "description": f"{name} for the waterfall", "inputSchema": {"type": "object"}}
    for name in ("lookup", "slow_report", "flaky_upload")
]


def log(text: str) -> None:
    sys.stderr.write(f"waterfall-server: {text}\n")
    sys.stderr.flush()


def text(value: str, error: bool = False) -> dict:
    result: dict = {"content": [{"type": "text", "text": value}]}
    if error:
        result["isError"] = True
    return result


def call(reply: dict, name: str, arguments: dict) -> None:
    log(f"tools/call {name} {json.dumps(arguments)}")
    if name == "lookup":
        reply["result"] = text(f"found {arguments.get('key', '?')}")
    elif name == "slow_report":
        time.sleep(float(os.environ.get("WATERFALL_SLOW", "1.2")))
        regions = os.environ.get("WATERFALL_REGIONS", "3")
        reply["result"] = text(f"report: {regions} regions, 12 stations")
    elif name == "flaky_upload":
        log("upload failed: storage quota exceeded")
        reply["result"] = text("upload failed: storage quota exceeded", error=True)
    else:
        reply["error"] = {"code": -32602, "message": f"Unknown tool: {name}"}


def main() -> int:
    log("starting (3 tools)")
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        method = message.get("method")
        reply: dict = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "initialize":
            reply["result"] = {
                "protocolVersion": message["params"].get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "waterfall-server", "version": "1.0"},
            }
        elif method == "tools/list":
            reply["result"] = {"tools": TOOLS}
        elif method == "tools/call":
            params = message["params"]
            call(reply, params["name"], params.get("arguments") or {})
        elif method == "ping":
            reply["result"] = {}
        else:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    log("stdin closed, exiting")
    return 0


if __name__ == "__main__":
    sys.exit(main())
