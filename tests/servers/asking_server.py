"""A legacy stdio MCP server (standard library only) that asks its client everything a
server may ask, so that a recording shows how the client answers.

``asking_server.py``: ``server/discover`` is refused (``-32601``, as a legacy-only server
answers it), ``initialize`` grants the revision the client asks for. Its one tool,
``echo``, before it answers, asks the client ``roots/list``, then ``elicitation/create``
(a form with one field), then ``sampling/createMessage``, one after the other, whatever
the client declared: a recording of a client calling it holds the client's handshake
and its answer (or refusal) to each question. tests/e2e/test_profiles.py reads them to
compare the client profiles of ``cassette variant --as`` with the clients we pin.
"""

import json
import sys

TOOLS = [
    {
        "name": "echo",
        "description": "asks the client for its roots, a form and a message, then echoes",
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
    }
]
#: what the echo tool asks, in order
QUESTIONS = [
    ("roots/list", {}),
    (
        "elicitation/create",
        {
            "message": "Your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    ),
    (
        "sampling/createMessage",
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "a haiku"}}],
            "maxTokens": 16,
        },
    ),
]
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")


def send(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def result_of(message: dict) -> dict | None:
    """The result of a client request, or ``None`` for a method this server lacks."""
    method = message.get("method")
    params = message.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        return {
            "protocolVersion": asked if asked in LEGACY else LEGACY[0],
            "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
            "serverInfo": {"name": "asking", "version": "1.0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method in ("prompts/list", "resources/list"):  # nothing to offer, said plainly
        return {method.split("/")[0]: []}
    if method == "ping":
        return {}
    return None


def main() -> int:
    calls: dict[str, dict] = {}  # question id -> the tool call waiting on it
    for line in sys.stdin:
        message = json.loads(line)
        if "method" not in message:  # the client's answer to one of our questions
            waiting = calls.pop(str(message.get("id")), None)
            if waiting is not None:
                ask_next(waiting, calls)
            continue
        if "id" not in message:
            continue
        if message["method"] == "tools/call":
            ask_next({"id": message["id"], "text": tool_text(message), "asked": 0}, calls)
            continue
        result = result_of(message)
        if result is None:
            send({"id": message["id"], "error": {"code": -32601, "message": "Method not found"}})
        else:
            send({"id": message["id"], "result": result})
    return 0


def tool_text(message: dict) -> str:
    arguments = (message.get("params") or {}).get("arguments") or {}
    return f"Echo: {arguments.get('message', '')}"


def ask_next(call: dict, calls: dict[str, dict]) -> None:
    """Ask the call's next question, or answer the call when all were asked."""
    if call["asked"] == len(QUESTIONS):
        send({"id": call["id"], "result": {"content": [{"type": "text", "text": call["text"]}]}})
        return
    method, params = QUESTIONS[call["asked"]]
    question = f"ask-{call['id']}-{call['asked']}"
    call["asked"] += 1
    calls[question] = call
    send({"id": question, "method": method, "params": params})


if __name__ == "__main__":
    sys.exit(main())
