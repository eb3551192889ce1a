"""Which JSON Schema governs which part of a message, as the server declared it.

Redaction must not break a schema (``cassette.core.redaction``), so whoever redacts a
session (the recorder, ``redact -o``, the scanner) follows it with a ``SchemaBook``:
``tools/list`` results teach it each tool's ``inputSchema`` and ``outputSchema``; a
``tools/call`` request is governed by its tool's input schema at ``/params/arguments``,
and its result by the output schema at ``/result/structuredContent``; a server's
``elicitation/create`` request names the form (``requestedSchema``) the client's answer
fills at ``/result/content``. Pure: messages in, schemas out.
"""

from __future__ import annotations

from typing import Any

from cassette.core.ids import id_key

__all__ = ["SchemaBook"]

Schemas = dict[tuple[str, ...], Any]


def _params(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


class SchemaBook:
    """The schemas one session has declared so far (see the module docstring)."""

    def __init__(self) -> None:
        self.tools: dict[str, tuple[Any, Any]] = {}
        self._open: dict[object, tuple[str, str]] = {}  # (dir, stream, id) -> (method, tool)
        self._forms: dict[object, Any] = {}

    def schemas(self, direction: str, message: dict[str, Any], stream: object = None) -> Schemas:
        """The schemas that govern parts of ``message`` (call before redacting it)."""
        method = message.get("method")
        if "id" not in message:
            return {}
        if isinstance(method, str):
            return self._request(direction, method, message, stream)
        other = "s2c" if direction == "c2s" else "c2s"
        key = (other, stream, *id_key(message.get("id")))
        if direction == "c2s":
            form = self._forms.pop(key, None)
            return {("result", "content"): form} if isinstance(form, dict) else {}
        asked = self._open.pop(key, ("", ""))
        if asked[0] == "tools/list":
            self._learn(message.get("result"))
        found = self.tools.get(asked[1]) if asked[0] == "tools/call" else None
        if found and isinstance(found[1], dict):
            return {("result", "structuredContent"): found[1]}
        return {}

    def _request(
        self, direction: str, method: str, message: dict[str, Any], stream: object
    ) -> Schemas:
        key = (direction, stream, *id_key(message.get("id")))
        params = _params(message)
        if method == "elicitation/create":
            self._forms[key] = params.get("requestedSchema")
            return {}
        if method not in ("tools/call", "tools/list"):
            return {}
        name = params.get("name")
        tool = name if isinstance(name, str) else ""
        self._open[key] = (method, tool)
        found = self.tools.get(tool)
        if method == "tools/call" and found and isinstance(found[0], dict):
            return {("params", "arguments"): found[0]}
        return {}

    def _learn(self, result: object) -> None:
        tools = result.get("tools") if isinstance(result, dict) else None
        for tool in tools if isinstance(tools, list) else ():
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                self.tools[tool["name"]] = (tool.get("inputSchema"), tool.get("outputSchema"))
