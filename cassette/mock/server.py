"""A manifest served as an MCP server: sans-IO, one client message in, the answer out.

Theory of operation
-------------------
``MockServer`` speaks the legacy era (the ``initialize`` handshake), whatever era the
manifest was distilled from: to a dual-era client's ``server/discover`` probe it answers
``Method not found``, as a legacy server does, and the client falls back to
``initialize``. It keeps no session state, so one server answers every session of a
network front (``new`` returns itself) and any number of clients at once.

* ``initialize`` answers the client's protocol version when it is a legacy revision, else
  the manifest's when that is one, else the newest; capabilities are advertised for what
  the manifest has (tools, resources, prompts) and nothing else.
* ``tools/call`` and ``prompts/get`` pick the first call entry whose ``arguments`` equal
  the request's (JSON equality, key order aside); failing that, the first entry without
  ``arguments``. Its ``result`` (or ``error``) is rendered with the request's arguments
  (``cassette.mock.template``).
* A request the manifest cannot answer (an unknown tool, prompt or resource, or no entry
  matching the arguments) is a *miss*: a JSON-RPC error ``-32099`` saying what the manifest
  has instead, counted in ``misses`` as a replay counts its misses.
* ``ping``, ``logging/setLevel`` and ``completion/complete`` (no values) are answered;
  any other method gets ``-32601``; notifications and client answers are ignored.

``MockServer`` has the interface the replay fronts drive
(``cassette.core.replay.sessions.Responder``), so ``cassette mock`` serves it on the replay's stdio
and HTTP fronts unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from cassette._version import __version__
from cassette.core.replay.matching import MissReport, canonical
from cassette.core.replay.reply import Reply
from cassette.core.replay.sessions import Responder
from cassette.core.wire.jsonrpc import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REPLAY_MISS,
    Kind,
    classify,
    classify_value,
    error_response,
)
from cassette.core.wire.mcp import LEGACY_VERSIONS
from cassette.core.wire.model import Header, RecorderInfo, Recording
from cassette.errors import ManifestError
from cassette.mock.template import TemplateTooLarge, render
from cassette.mock.validate import validate_manifest

__all__ = ["MockServer"]


@attrs.frozen
class _ServedAs:
    """The recording a network front reads to know how to serve a mock: no events."""

    header: Header
    events: tuple[()] = ()


INVALID_PARAMS: Final = -32602
LATEST_LEGACY: Final = max(LEGACY_VERSIONS)
_LISTED: Final = 8  # names or argument sets a miss message lists before "and N more"
#: Keys of manifest entries that are the mock's, not part of the MCP definition it lists.
_MANIFEST_ONLY: Final = frozenset({"calls", "contents", "error", "listed"})
_SERVED_AS: Final = _ServedAs(
    Header("stdio", RecorderInfo("cassette-mcp", __version__), "", era="legacy")
)


class _Miss(Exception):
    """The manifest has no answer; ``summary`` begins with the method."""

    def __init__(self, method: str, summary: str) -> None:
        super().__init__(summary)
        self.report = MissReport("not-recorded", method, summary)


class _Refused(Exception):
    """A JSON-RPC error the request earns (bad params, or an error the manifest gives);
    ``warning`` is for the person running the mock, when there is something to tell."""

    def __init__(self, error: dict[str, Any], warning: str | None = None) -> None:
        super().__init__(error.get("message"))
        self.error = error
        self.warning = warning


def _listing(names: list[str]) -> str:
    shown = ", ".join(names[:_LISTED])
    return shown + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


def _definition(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in _MANIFEST_ONLY}


class MockServer:
    """Answers MCP requests from a manifest (see the module docstring).

    The manifest is checked first (``validate_manifest(manifest, schemas=False)``); one
    with errors raises ``ManifestError`` listing them, and the warnings are kept in
    ``warnings``. ``source`` names the manifest in miss messages.
    """

    def __init__(self, manifest: Mapping[str, Any], *, source: str | None = None) -> None:
        findings = validate_manifest(manifest, schemas=False)
        errors = [f for f in findings if f.severity == "error"]
        #: what serves but is probably a mistake (see ``validate_manifest``)
        self.warnings = [f for f in findings if f.severity == "warning"]
        if errors:
            where = f"{source}: " if source else ""
            shown = "; ".join(f"{f.pointer or '/'}: {f.message}" for f in errors[:3])
            more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
            raise ManifestError(
                f"{where}{len(errors)} error(s) keep this manifest from being served: "
                f"{shown}{more}; run: cassette mock --validate MANIFEST"
            )
        self.manifest = manifest
        self.source = source
        self.misses: list[MissReport] = []
        self._tools = {t["name"]: t for t in manifest.get("tools", ())}
        self._resources = {r["uri"]: r for r in manifest.get("resources", ())}
        self._templates = list(manifest.get("resourceTemplates", ()))
        self._prompts = {p["name"]: p for p in manifest.get("prompts", ())}
        self._handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "initialize": self._initialize,
            "ping": lambda _params: {},
            "tools/list": lambda _params: {"tools": [_definition(t) for t in self._tools.values()]},
            "tools/call": lambda params: self._call(params, "tools/call", self._tools, "tool"),
            "resources/list": lambda _params: {
                "resources": [
                    _definition(r) for r in self._resources.values() if r.get("listed", True)
                ]
            },
            "resources/templates/list": lambda _params: {"resourceTemplates": self._templates},
            "resources/read": self._read,
            "prompts/list": lambda _params: {
                "prompts": [_definition(p) for p in self._prompts.values()]
            },
            "prompts/get": lambda params: self._call(
                params, "prompts/get", self._prompts, "prompt"
            ),
            "logging/setLevel": lambda _params: {},
            "completion/complete": lambda _params: {"completion": {"values": []}},
        }

    # -- the plain interface -----------------------------------------------------------

    def answer(self, message: Any) -> Any:
        """The answer to one decoded client message (a batch: a list of answers), or
        ``None`` when it needs none (a notification, a client's answer)."""
        messages = self.receive(message).messages
        return messages[0] if messages else None

    @property
    def capabilities(self) -> dict[str, Any]:
        """What ``initialize`` advertises: only what the manifest has."""
        caps: dict[str, Any] = {}
        if self._tools:
            caps["tools"] = {}
        if self._resources or self._templates:
            caps["resources"] = {}
        if self._prompts:
            caps["prompts"] = {}
        return caps

    # -- what the fronts drive (cassette.core.replay.sessions.Responder) ---------------------------

    def new(self) -> MockServer:
        """A session: the same server, since a mock keeps no session state."""
        return self

    def release(self, responder: Responder) -> None:
        """A session ended: a mock kept nothing for it (its misses are the server's)."""

    @property
    def recording(self) -> Recording:
        """How a network front serves a mock: as a legacy-era server recorded over stdio
        (sessions with ``Mcp-Session-Id`` over HTTP, ``/mcp``, ``/sse``)."""
        return _SERVED_AS

    @property
    def waiting(self) -> tuple[object, ...]:
        return ()  # a mock never asks the client anything

    def start(self) -> Reply:
        return Reply()

    def receive_frame(self, data: bytes | str) -> Reply:
        """Answer one frame exactly as the client sent it."""
        if not data.strip():
            return Reply()
        classified = classify(data)
        if classified.kind is Kind.NOT_JSON:
            return _reply(error_response(None, PARSE_ERROR, "Parse error"))
        return self.receive(classified.value)

    def receive(self, message: Any) -> Reply:
        """Answer one decoded client message (an object, or a batch list)."""
        kind = classify_value(message)
        if kind is Kind.BATCH:
            replies = [
                self._invalid_request(None) if isinstance(m, list) else self.receive(m)
                for m in message
            ]
            answers = [m for r in replies for m in r.messages]
            miss = next((r.miss for r in replies if r.miss is not None), None)
            return Reply((answers,), miss, (None,)) if answers else Reply()
        if kind is Kind.REQUEST:
            return self._request(message)
        if kind is Kind.INVALID:
            return self._invalid_request(message.get("id") if isinstance(message, dict) else None)
        return Reply()  # notifications and answers need nothing from a mock

    def _invalid_request(self, msg_id: object) -> Reply:
        return _reply(error_response(msg_id, INVALID_REQUEST, "Invalid Request"))

    def expire(self, server_id: object) -> Reply:
        return Reply()

    def undelivered(self, server_id: object) -> Reply:
        return Reply()

    def give_up(self, request_id: object) -> Reply:
        return Reply()  # a mock answers every request at once

    def describe(self, report: MissReport) -> str:
        return f"{self.source}: {report.summary}" if self.source else report.summary

    def summary(self) -> str:
        """Every miss so far, for a person ("" when there were none)."""
        if not self.misses:
            return ""
        lines = [f"{len(self.misses)} request(s) had no answer in the manifest:"]
        lines += [f"  - {self.describe(m)}" for m in self.misses]
        return "\n".join(lines)

    # -- requests ----------------------------------------------------------------------

    def _request(self, message: dict[str, Any]) -> Reply:
        msg_id = message["id"]
        handler = self._handlers.get(message["method"])
        if handler is None:
            return _reply(error_response(msg_id, METHOD_NOT_FOUND, "Method not found"))
        params = message.get("params", {})
        try:
            if not isinstance(params, dict):
                raise _Refused(_invalid("params must be an object"))
            result = handler(params)
        except _Refused as refused:
            reply = _reply({"jsonrpc": "2.0", "id": msg_id, "error": refused.error})
            if refused.warning is not None:
                reply = attrs.evolve(reply, warnings=(refused.warning,))
            return reply
        except _Miss as miss:
            self.misses.append(miss.report)
            text = f"cassette-mcp: {miss.report.summary}"
            report = miss.report
            return Reply(
                (error_response(msg_id, REPLAY_MISS, text, report.as_data()),),
                report,
                (None,),
                origin=msg_id,
                responded=True,
            )
        return _reply({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        manifest = self.manifest
        version = params.get("protocolVersion")
        if version not in LEGACY_VERSIONS:
            recorded = manifest.get("protocolVersion")
            version = recorded if recorded in LEGACY_VERSIONS else LATEST_LEGACY
        server = dict(manifest.get("server", {}))
        server.setdefault("name", "cassette-mock")
        server.setdefault("version", "0")
        result = {"protocolVersion": version, "capabilities": self.capabilities}
        result["serverInfo"] = server
        if manifest.get("instructions"):
            result["instructions"] = manifest["instructions"]
        return result

    def _call(
        self, params: dict[str, Any], method: str, entries: dict[str, Any], what: str
    ) -> dict[str, Any]:
        """``tools/call`` or ``prompts/get``: the named entry's answer to the arguments."""
        name, arguments = _name_and_arguments(params, method)
        entry = entries.get(name)
        label = f"{method} {json.dumps(name)}"
        if entry is None:
            raise _Miss(
                method,
                f"{label}: no such {what} in the manifest "
                f"(it has: {_listing(list(entries)) or f'no {what}s'})",
            )
        return _answer(entry, arguments, method, label, what)

    def _read(self, params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise _Refused(_invalid("resources/read needs a uri"))
        resource = self._resources.get(uri)
        label = f"resources/read {json.dumps(uri)}"
        if resource is None:
            raise _Miss(
                "resources/read",
                f"{label}: no such resource in the manifest "
                f"(it has: {_listing(list(self._resources)) or 'no resources'})",
            )
        if "error" in resource:
            raise _Refused(dict(resource["error"]))
        if "contents" not in resource:
            raise _Miss("resources/read", f"{label}: the manifest has no contents for it")
        return {"contents": resource["contents"]}


def _reply(message: dict[str, Any]) -> Reply:
    return Reply((message,), None, (None,), origin=message.get("id"), responded=True)


def _invalid(text: str) -> dict[str, Any]:
    return {"code": INVALID_PARAMS, "message": f"Invalid params: {text}"}


def _name_and_arguments(params: dict[str, Any], method: str) -> tuple[str, Any]:
    name = params.get("name")
    arguments = params.get("arguments", {})
    if not isinstance(name, str):
        raise _Refused(_invalid(f"{method} needs a name"))
    if not isinstance(arguments, dict):
        raise _Refused(_invalid("arguments must be an object"))
    return name, arguments


def _answer(
    owner: Mapping[str, Any], arguments: dict[str, Any], method: str, label: str, what: str
) -> dict[str, Any]:
    """The rendered result of the call entry that answers ``arguments`` (see the module
    docstring); its error is raised as ``_Refused``; no entry is a ``_Miss``."""
    calls = owner.get("calls", ())
    key = canonical(arguments)
    entry = next((c for c in calls if "arguments" in c and canonical(c["arguments"]) == key), None)
    if entry is None:
        entry = next((c for c in calls if "arguments" not in c), None)
    if entry is None:
        known = [canonical(c["arguments"]) for c in calls]
        has = f"it answers only {_listing(known)}" if known else f"it has no calls for this {what}"
        raise _Miss(
            method,
            f"{label} with arguments {canonical(arguments)}: no call in the manifest matches; "
            f'{has} (add a call with these arguments, or one without "arguments" to answer '
            "any call)",
        )
    try:
        if "error" in entry:
            raise _Refused(render(entry["error"], arguments))
        result: dict[str, Any] = render(entry["result"], arguments)
    except TemplateTooLarge as exc:
        why = (
            f"{label}: the manifest's answer {exc} with these arguments (its "
            "{{arguments...}} placeholders repeat them); it was not sent"
        )
        raise _Refused(_invalid(why), why) from exc
    return result
