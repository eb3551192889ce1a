"""A local stand-in for the model APIs of Claude Code and Gemini CLI (stdlib only).

The agent drivers of the cross-client matrix (``agent_cli.py``) run the real agents, whose
every turn asks a model what to do. The machine has no model and no internet, so this
HTTP server plays one, just enough of each API for one scripted turn: offered a tool whose
name ends with ``--tool`` (the agents prefix MCP tools with the server's name), it asks to
call it with ``--arguments``; given that call's result, it ends the turn with a line of
text. Every other request (a title, a classifier, a token count) gets a short text answer.

What it saw is the observation: ``--out FILE`` receives, on exit, one JSON object with the
tool names each model request was offered (``offered``: the names of the first request
that offered the tool) and the tool results the agent sent back (``results``, as text).

    fake_model_api.py --tool echo --arguments '{"message": "hi"}' --out seen.json

prints ``listening on http://127.0.0.1:PORT`` once it accepts connections.

Spoken:
- Anthropic Messages API: ``POST /v1/messages`` (streamed as server-sent events, or one
  JSON answer), ``POST /v1/messages/count_tokens``;
- Gemini API: ``POST /v1beta/models/MODEL:streamGenerateContent`` (``alt=sse``),
  ``:generateContent`` and ``:countTokens``.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

#: the text the model ends its turn with, once it has the tool's result
DONE = "The tool answered."


class Script:
    """The one turn the model plays, and what the agent showed it."""

    def __init__(self, tool: str, arguments: dict[str, Any], log: str | None = None) -> None:
        self.tool = tool
        self.log = log  # where each request is appended, as one JSON line
        self.arguments = arguments
        self.offered: list[str] | None = None
        self.results: list[str] = []
        self.waits = 0
        self.lock = threading.Lock()

    def pick(self, names: list[str]) -> str | None:
        """The offered name of the scripted tool (``None``: not offered), noting the names
        the first request that offered it was given."""
        found = [n for n in names if n == self.tool or n.endswith("_" + self.tool)]
        if not found:
            return None
        with self.lock:
            if self.offered is None:
                self.offered = sorted(names)
        return found[0]

    def result(self, text: str) -> None:
        """The tool's result, as the agent handed it back (once: a request that repeats
        the conversation repeats it)."""
        with self.lock:
            if text not in self.results:
                self.results.append(text)

    def seen(self) -> dict[str, Any]:
        with self.lock:
            return {"offered": self.offered, "results": list(self.results)}


# -- Anthropic ------------------------------------------------------------------------------


def anthropic_turn(script: Script, body: dict[str, Any]) -> dict[str, Any]:
    """The assistant message for one Messages API request. The conversation is read
    whole: the agent may put a system message after the tool's result."""
    results = [
        block
        for message in body.get("messages") or []
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    names = [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]
    answers = [b for b in results if b.get("tool_use_id") == _CALLED]
    if answers:
        script.result(_text_of(answers[-1].get("content")))
        return _message([{"type": "text", "text": DONE}], "end_turn")
    name = script.pick(names)
    if name is None and WAIT_TOOL in names and script.waits < MAX_WAITS:
        # Claude Code starts a turn before a slow server has connected, and offers a tool
        # to wait for it: the model a user runs calls it, and so does this one
        script.waits += 1
        wait = {"type": "tool_use", "id": f"{_WAITED}{script.waits}", "name": WAIT_TOOL,
                "input": {}}  # fmt: skip
        return _message([wait], "tool_use")
    if name is None:
        return _message([{"type": "text", "text": "ok"}], "end_turn")
    call = {"type": "tool_use", "id": _CALLED, "name": name, "input": script.arguments}
    return _message([call], "tool_use")


#: Claude Code's tool that waits for MCP servers still connecting
WAIT_TOOL = "WaitForMcpServers"
#: how many times the model waits before it gives up on the tool
MAX_WAITS = 3
_WAITED = "toolu_wait_"
_CALLED = "toolu_fake_call"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return json.dumps(content)


def _message(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": "claude-fake",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def anthropic_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The message as the streaming API sends it: start, each block, delta, stop."""
    start = {**message, "content": [], "stop_reason": None}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opened = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index,
                                     "content_block": opened}),
            ("content_block_delta", {"type": "content_block_delta", "index": index,
                                     "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]  # fmt: skip
    stopped = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events += [
        ("message_delta", {"type": "message_delta", "delta": stopped,
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return events


# -- Gemini ---------------------------------------------------------------------------------


def gemini_turn(script: Script, body: dict[str, Any]) -> dict[str, Any]:
    """The generateContent answer for one request."""
    answered = [
        part["functionResponse"]
        for content in body.get("contents") or []
        if isinstance(content, dict) and isinstance(content.get("parts"), list)
        for part in content["parts"]
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)
    ]
    names = [
        str(d.get("name", ""))
        for tool in body.get("tools") or []
        if isinstance(tool, dict)
        for d in tool.get("functionDeclarations") or []
        if isinstance(d, dict)
    ]
    if answered:
        script.result(_gemini_result(answered[-1].get("response")))
        return _candidate([{"text": DONE}])
    if _wants_json(body):
        # the agent's own classifiers (next speaker, routing): an answer that ends the turn
        text = json.dumps({"next_speaker": "user", "reasoning": "done", "model_choice": "flash"})
        return _candidate([{"text": text}])
    name = script.pick(names)
    if name is None:
        return _candidate([{"text": "ok"}])
    return _candidate([{"functionCall": {"name": name, "args": script.arguments}}])


def _wants_json(body: dict[str, Any]) -> bool:
    config = body.get("generationConfig") or body.get("generation_config") or {}
    return isinstance(config, dict) and config.get("responseMimeType") == "application/json"


def _gemini_result(response: Any) -> str:
    """The text of a tool's result as Gemini hands it back (``{"content": [...]}`` or
    ``{"output": ...}``, depending on the result's shape)."""
    if isinstance(response, dict):
        content = response.get("content")
        if isinstance(content, list):
            return _text_of(content)
        if "output" in response:
            return _text_of(response["output"])
    return json.dumps(response, sort_keys=True)


def _candidate(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                          "totalTokenCount": 15},
        "modelVersion": "gemini-fake",
    }  # fmt: skip


# -- the server -----------------------------------------------------------------------------


def handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            sys.stderr.write("fake model api: " + (format % args) + "\n")

        def do_GET(self) -> None:
            self._json(404, {"error": {"message": f"no such endpoint {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                body = {}
            path = self.path.split("?", 1)[0]
            if script.log is not None:  # --log: for debugging a driver
                with open(script.log, "a", encoding="utf-8") as log:
                    log.write(json.dumps({"path": self.path, "body": body}) + "\n")
            if path.endswith("/count_tokens") or path.endswith(":countTokens"):
                self._json(200, {"input_tokens": 10, "totalTokens": 10})
            elif path.endswith("/v1/messages"):
                message = anthropic_turn(script, body)
                if body.get("stream"):
                    self._sse([(e, json.dumps(d)) for e, d in anthropic_events(message)])
                else:
                    self._json(200, message)
            elif path.endswith(":streamGenerateContent"):
                self._sse([(None, json.dumps(gemini_turn(script, body)))])
            elif path.endswith(":generateContent"):
                self._json(200, gemini_turn(script, body))
            else:
                self._json(404, {"error": {"message": f"no such endpoint {path}"}})

        def _json(self, status: int, value: Any) -> None:
            data = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _sse(self, events: list[tuple[str | None, str]]) -> None:
            data = b"".join(
                ((f"event: {e}\n" if e else "") + f"data: {d}\n\n").encode() for e, d in events
            )
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tool", required=True, help="the MCP tool the model calls")
    parser.add_argument("--arguments", default="{}", help="its arguments, as JSON")
    parser.add_argument("--out", required=True, help="where to write what the model saw")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", default=None, help="append each request here (debugging)")
    args = parser.parse_args(argv)
    script = Script(args.tool, json.loads(args.arguments), args.log)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler(script))
    server.daemon_threads = True

    def stop(*_: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
    Path(args.out).write_text(json.dumps(script.seen(), sort_keys=True), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
