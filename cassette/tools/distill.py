"""``cassette distill TAPE --as-mock -o MANIFEST``: a cassette made into an editable mock.

The manifest (docs/mock.md) has one entry per distinct tool, resource, resource template
and prompt. Definitions are lifted from the recorded lists (``tools/list`` and the rest,
every page and session, the first definition of a name kept); each answered
``tools/call`` and ``prompts/get`` becomes a call entry of its tool or prompt, and each
``resources/read`` the contents of its resource. Calls with the same name and arguments
collapse into one entry, **the first recording kept**; a later one with a different answer
is noted. Recorded errors are kept as ``error`` entries, so the mock reproduces them.

Server name, version and instructions come from the recorded ``initialize`` result (a
legacy cassette) or ``server/discover`` (a modern one, where the server info travels in
``_meta``). A modern cassette's answers lose the modern envelope (``resultType``,
``cacheScope``, ``ttlMs``, ``io.modelcontextprotocol/`` keys of ``_meta``), since the mock
serves the legacy era, and answers that asked for input (``input_required``) are left out.
Server-initiated requests and notifications (progress, logging) are not part of a mock.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from cassette.core.eras.variants import split
from cassette.core.replay.matching import canonical
from cassette.core.wire.jsonrpc import find_literal, pretty
from cassette.core.wire.mcp import META_PREFIX
from cassette.core.words.jsondiff import same_json
from cassette.errors import ManifestError
from cassette.store.storage import Cassette
from cassette.tools._common import emit, exchanges

__all__ = ["counts", "distill_cassette", "main"]

_ENVELOPE: Final = frozenset({"resultType", "cacheScope", "ttlMs"})
_MODERN_META: Final = META_PREFIX
_SERVER_INFO: Final = _MODERN_META + "serverInfo"
_LISTS: Final = {
    "tools/list": ("tools", "tools", "name"),
    "resources/list": ("resources", "resources", "uri"),
    "resources/templates/list": ("templates", "resourceTemplates", "uriTemplate"),
    "prompts/list": ("prompts", "prompts", "name"),
}
_CALLS: Final = {"tools/call": "tools", "prompts/get": "prompts"}


def distill_cassette(
    tape: Cassette | str | os.PathLike[str], *, notes: list[str] | None = None
) -> dict[str, Any]:
    """The mock manifest of a cassette (a path or a loaded ``Cassette``).

    ``notes``, when given, receives a line for each thing a person should know: calls
    collapsed, a duplicate whose answer differed, requests left out and why.
    """
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    distiller = _Distiller(cassette.era == "modern", cassette.source)
    pairs, _problems = exchanges(split(cassette.events)[0])  # variants: other clients
    for pair in pairs:
        if pair.request.dir != "c2s":
            continue  # the server's own requests (sampling, roots) are not the mock's
        line = pair.request.seq + 1
        if pair.response is None:
            distiller.notes.append(f"line {line}: {_label(pair.request.message)} has no answer")
            continue
        distiller.add(pair.request.message, pair.response.message, line)
    if cassette.era == "modern" and cassette.header.protocol_version:
        distiller.protocol = distiller.protocol or cassette.header.protocol_version
    manifest = distiller.manifest()
    if notes is not None:
        notes += distiller.notes
    return manifest


def _params(message: Mapping[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def _label(request: Mapping[str, Any]) -> str:
    """A request for a person: the method, and what it names (with a call's arguments)."""
    method, params = str(request.get("method")), _params(request)
    if method in _CALLS and isinstance(params.get("name"), str):
        return f"{method} {json.dumps(params['name'])} {canonical(params.get('arguments') or {})}"
    if method == "resources/read" and isinstance(params.get("uri"), str):
        return f"{method} {json.dumps(params['uri'])}"
    return method


class _Distiller:
    def __init__(self, modern: bool, source: str | None) -> None:
        self.modern = modern
        self.name = Path(source).stem if source else "mock"
        self.server: dict[str, Any] | None = None
        self.protocol: str | None = None
        self.instructions: str | None = None
        # definitions, by kind and then by name (uri, uriTemplate), in first-listed order
        self.defs: dict[str, dict[str, dict[str, Any]]] = {k: {} for k, _, _ in _LISTS.values()}
        # answers: tool and prompt calls by name then canonical arguments; reads by uri
        self.calls: dict[str, dict[str, dict[str, Any]]] = {"tools": {}, "prompts": {}}
        self.reads: dict[str, dict[str, Any]] = {}
        self.lines: dict[str, int] = {}  # where each kept answer was recorded, by label
        self.collapsed = 0
        self.notes: list[str] = []

    def clean(self, result: dict[str, Any]) -> dict[str, Any]:
        """A modern result without the modern envelope (see the module docstring)."""
        if not self.modern:
            return result
        meta = result.get("_meta")
        out = {k: v for k, v in result.items() if k not in _ENVELOPE and k != "_meta"}
        if isinstance(meta, dict):
            if self.server is None and isinstance(meta.get(_SERVER_INFO), dict):
                self.server = meta[_SERVER_INFO]
            kept = {k: v for k, v in meta.items() if not k.startswith(_MODERN_META)}
            if kept:
                out["_meta"] = kept
        return out

    def add(self, request: dict[str, Any], response: dict[str, Any], line: int) -> None:
        method = str(request.get("method"))
        result = response.get("result")
        if "error" not in response and not isinstance(result, dict):
            return
        if isinstance(result, dict):
            if result.get("resultType") == "input_required":
                self.notes.append(
                    f"line {line}: {_label(request)} asked the client for input "
                    "(input_required); only complete answers are kept"
                )
                return
            result = self.clean(result)
        params = _params(request)
        answer = {"error": response["error"]} if "error" in response else {"result": result}
        if method in ("initialize", "server/discover") and result is not None:
            self.opening(method, result)
        elif method in _LISTS and result is not None:
            kind, key, name_key = _LISTS[method]
            for item in result.get(key) or ():
                if isinstance(item, dict) and isinstance(item.get(name_key), str):
                    self.defs[kind].setdefault(item[name_key], item)
        elif method in _CALLS and isinstance(params.get("name"), str):
            arguments = params.get("arguments") or {}
            if not isinstance(arguments, dict):
                return  # a malformed request no client would send again
            calls = self.calls[_CALLS[method]].setdefault(params["name"], {})
            entry = {"arguments": arguments, **answer}
            self.keep(calls, canonical(arguments), entry, _label(request), line)
        elif method == "resources/read" and isinstance(params.get("uri"), str):
            if result is not None:
                answer = {"contents": result.get("contents", [])}
            self.keep(self.reads, params["uri"], answer, _label(request), line)

    def opening(self, method: str, result: dict[str, Any]) -> None:
        if isinstance(result.get("serverInfo"), dict):
            self.server = self.server or result["serverInfo"]
        if method == "initialize" and isinstance(result.get("protocolVersion"), str):
            self.protocol = self.protocol or result["protocolVersion"]
        if isinstance(result.get("instructions"), str):
            self.instructions = self.instructions or result["instructions"]

    def keep(
        self,
        into: dict[str, dict[str, Any]],
        key: str,
        entry: dict[str, Any],
        label: str,
        line: int,
    ) -> None:
        """The first recording of ``key`` is kept; a later one is counted, and noted when
        its answer differs."""
        first = into.get(key)
        if first is None:
            into[key] = entry
            self.lines[label] = line
            return
        self.collapsed += 1
        if not same_json(first, entry):
            self.notes.append(
                f"line {line}: {label} answered differently than at line "
                f"{self.lines[label]}; the first answer is kept"
            )

    def entries(self, kind: str, name_key: str) -> list[dict[str, Any]]:
        """Definitions with their calls, listed ones first, then ones only called."""
        defs, calls = self.defs[kind], self.calls[kind]
        out = []
        for name in [*defs, *(n for n in calls if n not in defs)]:
            entry = {name_key: name, **defs.get(name, {})}  # the name first, for people
            if name not in defs:
                what = "tool" if kind == "tools" else "prompt"
                note = f"{what} {json.dumps(name)} was called but never listed"
                if kind == "tools":
                    entry["inputSchema"] = {"type": "object"}
                    note += '; its inputSchema is a placeholder {"type": "object"}'
                self.notes.append(note)
            if name in calls:
                entry["calls"] = list(calls[name].values())
            out.append(entry)
        return out

    def resources(self) -> list[dict[str, Any]]:
        listed = self.defs["resources"]
        out = []
        for uri in [*listed, *(u for u in self.reads if u not in listed)]:
            entry = {"uri": uri, **listed.get(uri, {"listed": False})}
            entry.update(self.reads.get(uri, {}))
            out.append(entry)
        return out

    def manifest(self) -> dict[str, Any]:
        manifest: dict[str, Any] = {"manifest": 1}
        manifest["server"] = self.server or {"name": self.name, "version": "0"}
        if self.protocol:
            manifest["protocolVersion"] = self.protocol
        if self.instructions:
            manifest["instructions"] = self.instructions
        sections = {
            "tools": self.entries("tools", "name"),
            "resources": self.resources(),
            "resourceTemplates": list(self.defs["templates"].values()),
            "prompts": self.entries("prompts", "name"),
        }
        manifest.update({key: items for key, items in sections.items() if items})
        if self.collapsed:
            self.notes.insert(
                0,
                f"{self.collapsed} repeated request(s) collapsed into the entry of their "
                "first recording",
            )
        return manifest


def counts(manifest: Mapping[str, Any]) -> dict[str, int]:
    """How much a manifest holds, for a report."""

    def calls(key: str) -> int:
        return sum(len(entry.get("calls", ())) for entry in manifest.get(key, ()))

    return {
        "tools": len(manifest.get("tools", ())),
        "toolCalls": calls("tools"),
        "resources": len(manifest.get("resources", ())),
        "resourceTemplates": len(manifest.get("resourceTemplates", ())),
        "prompts": len(manifest.get("prompts", ())),
        "promptCalls": calls("prompts"),
    }


def refuse_literals(manifest: Mapping[str, Any], output: str) -> None:
    """A manifest holds numbers as JSON or TOML readers hold them (a double), so a number
    recorded past that (``1e400``, ``NaN``, a 5000-digit integer) cannot be kept in one
    exactly: refuse, rather than write a manifest ``mock`` reads as something else."""
    found = find_literal(manifest)
    if found is not None:
        where, literal = found
        raise ManifestError(
            f"{output}: the recording holds the number {literal} (at {where or '/'}), which "
            "a manifest cannot hold exactly; replay the cassette itself instead"
        )


def main(args: argparse.Namespace) -> int:
    from cassette.mock.manifest import manifest_kind, write_manifest

    manifest_kind(args.output)  # a wrong suffix is a usage error before anything is read
    notes: list[str] = []
    manifest = distill_cassette(args.tape, notes=notes)
    refuse_literals(manifest, args.output)
    write_manifest(manifest, args.output, overwrite=args.overwrite, notes=notes)
    found = counts(manifest)
    if args.format == "json":
        data = {"cassette": args.tape, "manifest": args.output, "counts": found, "notes": notes}
        emit(pretty(data))
        return 0
    lines = [
        f"{args.output}: written from {args.tape}: {found['tools']} tools "
        f"({found['toolCalls']} calls), {found['resources']} resources, "
        f"{found['resourceTemplates']} resource templates, {found['prompts']} prompts "
        f"({found['promptCalls']} calls)"
    ]
    emit("\n".join(lines + [f"note: {note}" for note in notes]))
    return 0
