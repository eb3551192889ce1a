"""A small stdio MCP server (standard library only) for the record-mode tests.

    python episode_server.py [--log FILE] [--tag TAG]

Every start appends a line to ``--log`` (so a test can tell whether a server went live,
and how often), and a session the recorder's probe opened one more (``probe``: its
``initialize`` names the client ``cassette-probe``), so a test can tell the client's
starts from the probes'. It refuses any request before ``initialize`` (so a fall-through that
skipped the handshake fails loudly) and says who initialized it. Tools: ``echo`` (returns
``TAG:text``, so a re-recording is visible), ``count`` (how many calls this process has
answered) and ``progress`` (one progress notification with the request's token, then the
result). It exits 0 when its stdin closes.
"""

import argparse
import json
import os
import sys


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def log_probe(path: str | None, client: str) -> None:
    """A session the recorder's probe opened: one more line in the log."""
    if path and client == "cassette-probe":
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"probe {os.getpid()}\n")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log")
    parser.add_argument("--tag", default="live")
    args = parser.parse_args()
    if args.log:
        with open(args.log, "a", encoding="utf-8") as log:
            log.write(f"start {os.getpid()}\n")
    initialized_by = None
    calls = 0
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if "id" not in message or "method" not in message:
            continue
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        params = message.get("params") or {}
        if method == "initialize":
            initialized_by = params.get("clientInfo", {}).get("name", "?")
            log_probe(args.log, initialized_by)
            reply["result"] = {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "episode-server", "version": "1.0"},
            }
        elif initialized_by is None:
            reply["error"] = {"code": -32002, "message": f"{method} before initialize"}
        elif method == "tools/list":
            names = ("echo", "count", "progress")
            reply["result"] = {
                "tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names]
            }
        elif method == "tools/call":
            calls += 1
            name = params.get("name")
            arguments = params.get("arguments") or {}
            if name == "progress":
                token = (params.get("_meta") or {}).get("progressToken")
                if token is not None:
                    send(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/progress",
                            "params": {"progressToken": token, "progress": 1, "total": 1},
                        }
                    )
                text = "done"
            elif name == "count":
                text = f"{calls} call(s), initialized by {initialized_by}"
            else:
                text = f"{args.tag}:{arguments.get('text', '')}"
            reply["result"] = {"content": [{"type": "text", "text": text}]}
        else:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        send(reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
