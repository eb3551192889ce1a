"""A stdio MCP server (standard library only) that says where it runs from, as servers do
in tracebacks and log lines: for the tests that a cassette keeps no machine's folders.

At start-up it writes, on stderr, a traceback naming its own file's absolute path, and a
line naming a cache under the home folder, then ``wherever: ready``. Its first answer
comes after a line on stdout that is not JSON-RPC, naming its working folder and file. It
answers ``initialize``, ``tools/list`` and ``tools/call`` (``where``, answered the same
everywhere) and exits 0 at stdin EOF. Nothing else is ever written, so a client that
waits for ``ready`` before it sends anything gets the same events in the same order.
"""

import json
import os
import sys

HERE = os.path.abspath(__file__)
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "wherever", "db.sqlite")


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> int:
    sys.stderr.write("Traceback (most recent call last):\n")
    sys.stderr.write(f'  File "{HERE}", line 27, in main\n')
    sys.stderr.write(f"RuntimeError: no cache at {CACHE}; starting without one\n")
    sys.stderr.write("wherever: ready\n")
    sys.stderr.flush()
    said = False
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if "id" not in message:
            continue
        if not said:
            sys.stdout.write(f"wherever: serving from {os.getcwd()} ({HERE})\n")
            said = True
        reply: dict = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "initialize":
            reply["result"] = {
                "protocolVersion": message["params"].get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "wherever", "version": "1.0"},
            }
        elif method == "tools/list":
            reply["result"] = {"tools": [{"name": "where", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            reply["result"] = {"content": [{"type": "text", "text": "a place"}]}
        else:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        send(reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
