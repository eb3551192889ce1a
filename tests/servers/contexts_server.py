"""A stdio MCP server that prints every context of ``tests/helpers/secret_contexts.py``: in a tool's
text content, its structured content and ``_meta``, on stderr (one line each, and the
multi-line secrets line by line), on stdout as raw lines, with the secret-named variable
it was started with and its own command line. ``echo`` echoes its arguments, so a secret
a client sends comes back in an answer too. Standard library and the corpus only."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.helpers.secret_contexts import EXAMPLES


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def texts() -> list[str]:
    return [e.payload for exs in EXAMPLES.values() for e in exs if e.kind == "text"]


def structured() -> dict:
    out = {}
    for name, exs in EXAMPLES.items():
        for i, e in enumerate(exs):
            if e.kind == "json":
                out[f"{name}-{i}"] = e.payload
    return out


def stderr_lines() -> list[str]:
    lines = [line for t in texts() for line in t.splitlines()]
    lines += [
        line for exs in EXAMPLES.values() for e in exs if e.kind == "lines" for line in e.payload
    ]
    lines.append(
        "environment: " + json.dumps({k: os.environ.get(k, "") for k in ("MY_SERVICE_TOKEN",)})
    )
    lines.append("started as: " + " ".join(sys.argv[1:]))
    return lines


def main() -> int:
    for line in stderr_lines():
        sys.stderr.write(line + "\n")
    sys.stderr.flush()
    sys.stdout.write("raw: " + texts()[0] + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        method = message.get("method")
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "initialize":
            reply["result"] = {
                "protocolVersion": message["params"].get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "contexts", "version": "1.0"},
            }
        elif method == "tools/list":
            tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("corpus", "echo")]
            reply["result"] = {"tools": tools}
        elif method == "tools/call" and message["params"]["name"] == "corpus":
            content = [{"type": "text", "text": t} for t in texts()]
            content.append({"type": "text", "text": "started as: " + " ".join(sys.argv[1:])})
            env = os.environ.get("MY_SERVICE_TOKEN", "")
            content.append({"type": "text", "text": f"my token is {env}"})
            reply["result"] = {"content": content, "structuredContent": structured()}
        elif method == "tools/call":
            arguments = message["params"].get("arguments", {})
            reply["result"] = {"content": [{"type": "text", "text": json.dumps(arguments)}]}
        else:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        send(reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
