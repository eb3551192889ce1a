"""A stdio MCP server with only the standard library whose answers never vary, for the
re-recording tests: two recordings of it hold the same messages, and ``STEADY_TEMP``
changes one answer (``forecast``'s temperature) and nothing else. Its ``sign_in`` tool
is the exception on purpose: every run answers with fresh random credentials (a token
shape, a token under a secret name inside JSON text, a typed token under an output
schema's pattern; and with ``STEADY_FRESH_PII=1`` an e-mail address and a phone number
too), as a real sign-in does. Its ``clock`` tool is the other: it stamps the time and a
fresh trace id into its answer (and ``STEADY_BUILD`` into the JSON it answers as text),
the values ``verify`` treats as volatile. It
writes nothing on stderr, so the order of the recorded events is the same in every run."""

import datetime
import json
import os
import secrets
import sys
import uuid

TOKEN_SCHEMA = {
    "type": "object",
    "properties": {"token": {"type": "string", "pattern": "^tk_[0-9a-f]{16}$"}},
}
TOOLS = [
    {"name": "greet", "inputSchema": {"type": "object"}},
    {"name": "forecast", "inputSchema": {"type": "object"}},
    {"name": "sign_in", "inputSchema": {"type": "object"}, "outputSchema": TOKEN_SCHEMA},
    {"name": "clock", "inputSchema": {"type": "object"}},
]


def sign_in() -> dict:
    """Fresh credentials each run: nothing of them may make two recordings differ."""
    github = "ghp_" + secrets.token_hex(18)
    access = secrets.token_urlsafe(24)
    typed = "tk_" + secrets.token_hex(8)
    mail, phone = "ada@corp.example.com", "+47 912 34 567"
    if os.environ.get("STEADY_FRESH_PII") == "1":
        mail = f"user.{secrets.token_hex(3)}@corp.example.com"
        phone = f"+47 9{secrets.randbelow(10**7):07d}"
    text = json.dumps({"access_token": access, "expires_in": 3600})
    return {
        "content": [
            {"type": "text", "text": f"signed in with {github}; reach {mail} or {phone}"},
            {"type": "text", "text": text},
            {"type": "text", "text": f"again: {github}"},
        ],
        "structuredContent": {"token": typed},
    }


def clock() -> dict:
    """The same report each run but for when it was made: a timestamp in a text, one in
    the JSON answered as text, a trace id in ``_meta``; and a build number."""
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")
    report = {"generatedAt": now, "build": os.environ.get("STEADY_BUILD", "1"), "snow": True}
    return {
        "content": [
            {"type": "text", "text": f"report made at {now}"},
            {"type": "text", "text": json.dumps(report)},
        ],
        "_meta": {"trace": str(uuid.uuid4())},
    }


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
    if method == "tools/call":
        return call(message["params"]["name"])
    return None  # anything else (a modern client's server/discover, ping): not found


def call(name: str) -> dict:
    if name == "sign_in":
        return sign_in()
    if name == "clock":
        return clock()
    if name == "forecast":
        text = f"Oslo: {os.environ.get('STEADY_TEMP', '-3')} C, snow"
        return {"content": [{"type": "text", "text": text}]}
    return {"content": [{"type": "text", "text": "Hello, Ada."}]}


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
