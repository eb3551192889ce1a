"""``cassette mock --validate``: what is wrong with a manifest, each finding at a JSON Pointer.

Errors are what keeps the mock from answering as written (a missing name, a wrong type, a
call with both a result and an error, a duplicate tool) or what a client would refuse (an
invalid JSON Schema, a tool result without ``content``). Warnings are what serves but is
probably a mistake: an unknown key, an entry no request can ever reach, a template naming
an argument the tool does not declare, a tool name outside MCP's recommended characters.

``schemas=False`` skips everything about input and output schemas: serving needs only
the structure, and a recorded server's schema is served as it was recorded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal, TypeGuard, TypeVar

import attrs

from cassette.core.replay.matching import canonical
from cassette.core.wire.definitions import TOOL_NAME, schema_checker, schema_issues
from cassette.core.words.jsondiff import pointer
from cassette.mock.manifest import MANIFEST_FORMAT, json_type
from cassette.mock.template import references

__all__ = ["ManifestFinding", "validate_manifest"]

T = TypeVar("T")
Severity = Literal["error", "warning"]
Path = tuple[str | int, ...]

_TOP_KEYS = frozenset(
    {"manifest", "server", "protocolVersion", "instructions", "tools", "resources"}
    | {"resourceTemplates", "prompts"}
)
_CALL_KEYS = frozenset({"arguments", "result", "error"})


@attrs.frozen(slots=True)
class ManifestFinding:
    """One thing wrong with a manifest, at a JSON Pointer into it ("" is the whole)."""

    pointer: str
    code: str
    message: str
    severity: Severity = "error"

    def as_data(self) -> dict[str, Any]:
        return attrs.asdict(self)


def validate_manifest(manifest: Any, *, schemas: bool = True) -> list[ManifestFinding]:
    """Every finding in a manifest (as loaded by ``load_manifest``), in document order."""
    check = _Check(schema_checker() if schemas else None)
    if not isinstance(manifest, dict):
        check.error((), "type", "a manifest is a JSON object")
        return check.found
    if schemas and check.jsonschema is None:
        check.warn(
            (),
            "schema",
            "schemas not validated: jsonschema is not installed (pip install "
            "'cassette-mcp[tools]')",
        )
    check.top(manifest, schemas=schemas)
    return check.found


class _Check:
    def __init__(self, jsonschema: Any) -> None:
        self.jsonschema = jsonschema
        self.found: list[ManifestFinding] = []

    def error(self, at: Path, code: str, message: str) -> None:
        self.found.append(ManifestFinding(pointer(at), code, message))

    def warn(self, at: Path, code: str, message: str) -> None:
        self.found.append(ManifestFinding(pointer(at), code, message, "warning"))

    def typed(self, value: Any, kind: type[T], at: Path, *, required: bool = False) -> TypeGuard[T]:
        """Whether ``value`` (absent: ``None``) is a ``kind``; an error if it is not."""
        if value is None and not required:
            return False
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            return True
        wanted = {dict: "an object", list: "an array", str: "a string", int: "an integer"}
        got = "missing" if value is None else json_type(value)
        self.error(at, "type", f"must be {wanted.get(kind, kind.__name__)}, not {got}")
        return False

    def items(
        self, owner: dict[str, Any], key: str, at: Path = ()
    ) -> Iterable[tuple[Path, dict[str, Any]]]:
        """The objects of the array ``owner[key]`` with their paths (others are errors)."""
        if not self.typed(owner.get(key), list, (*at, key)):
            return
        for index, item in enumerate(owner[key]):
            if self.typed(item, dict, (*at, key, index), required=True):
                yield (*at, key, index), item

    def unknown_keys(self, at: Path, value: dict[str, Any], known: frozenset[str]) -> None:
        for key in value:
            if key not in known:
                self.warn((*at, key), "unknown-key", f"unknown key {json.dumps(key)}, ignored")

    def top(self, manifest: dict[str, Any], *, schemas: bool) -> None:
        version = manifest.get("manifest")
        if version is None:
            self.error(("manifest",), "format", f'missing: add "manifest": {MANIFEST_FORMAT}')
        elif self.typed(version, int, ("manifest",)) and not 1 <= version <= MANIFEST_FORMAT:
            self.error(
                ("manifest",),
                "format",
                f"format {version} is not one this cassette-mcp reads (1 to "
                f"{MANIFEST_FORMAT}): upgrade cassette-mcp",
            )
        self.unknown_keys((), manifest, _TOP_KEYS)
        if self.typed(manifest.get("server"), dict, ("server",)):
            for key in ("name", "version"):
                self.typed(manifest["server"].get(key), str, ("server", key))
        self.typed(manifest.get("protocolVersion"), str, ("protocolVersion",))
        self.typed(manifest.get("instructions"), str, ("instructions",))
        self.tools(manifest, schemas=schemas)
        self.resources(manifest)
        for at, template in self.items(manifest, "resourceTemplates"):
            self.typed(template.get("uriTemplate"), str, (*at, "uriTemplate"), required=True)
            self.typed(template.get("name"), str, (*at, "name"), required=True)
        self.prompts(manifest)

    def unique(
        self, at: Path, item: dict[str, Any], key: str, seen: dict[str, Path], what: str
    ) -> bool:
        """Whether ``item[key]`` is a string; an error if it is not, or if an earlier item
        (in ``seen``) has it too."""
        value = item.get(key)
        if not self.typed(value, str, (*at, key), required=True):
            return False
        if value in seen:
            self.error(
                (*at, key),
                "duplicate",
                f"duplicate {what} {json.dumps(value)} (first at {pointer(seen[value])})",
            )
        seen.setdefault(value, at)
        return True

    def tools(self, manifest: dict[str, Any], *, schemas: bool) -> None:
        seen: dict[str, Path] = {}
        for at, tool in self.items(manifest, "tools"):
            if self.unique(at, tool, "name", seen, "tool name") and not TOOL_NAME.match(
                tool["name"]
            ):
                self.warn(
                    (*at, "name"),
                    "name",
                    "MCP recommends tool names of 1-128 characters from A-Z a-z 0-9 _ . -",
                )
            if schemas:
                for key, required in (("inputSchema", True), ("outputSchema", False)):
                    for issue in schema_issues(
                        self.jsonschema, key, tool.get(key), required=required
                    ):
                        self.error((*at, key), "schema", issue.message)
            schema = tool.get("inputSchema")
            properties = schema.get("properties") if isinstance(schema, dict) else None
            declared = set(properties) if isinstance(properties, dict) else set()
            self.calls(at, tool, "content", declared, "the tool's inputSchema")

    def prompts(self, manifest: dict[str, Any]) -> None:
        seen: dict[str, Path] = {}
        for at, prompt in self.items(manifest, "prompts"):
            self.unique(at, prompt, "name", seen, "prompt name")
            declared: set[str] = set()
            for arg_at, argument in self.items(prompt, "arguments", at):
                if self.typed(argument.get("name"), str, (*arg_at, "name"), required=True):
                    declared.add(argument["name"])
            self.calls(at, prompt, "messages", declared, "the prompt's arguments")

    def calls(
        self, at: Path, owner: dict[str, Any], needs: str, declared: set[str], where: str
    ) -> None:
        """A tool's or prompt's calls: shape, reachability, templates."""
        first: dict[str, Path] = {}
        for here, call in self.items(owner, "calls", at):
            self.unknown_keys(here, call, _CALL_KEYS)
            key = canonical(call["arguments"]) if "arguments" in call else "*"
            if key in first:
                what = "the same arguments as" if key != "*" else "no arguments, like"
                self.warn(
                    here,
                    "unreachable",
                    f"never used: it has {what} {pointer(first[key])}, which answers first",
                )
            first.setdefault(key, here)
            self.call(here, call, needs)
            for path in references([call.get("result"), call.get("error")]):
                if path and path[0] not in declared:
                    has = f" (it has: {', '.join(sorted(declared))})" if declared else ""
                    self.warn(
                        here,
                        "template",
                        f"{{{{arguments.{'.'.join(path)}}}}} names {json.dumps(path[0])}, "
                        f"which {where} does not declare{has}",
                    )

    def call(self, at: Path, call: dict[str, Any], needs: str) -> None:
        """Arguments an object (of strings, for a prompt), and exactly one answer: a result
        with a ``needs`` array, or an error."""
        arguments = call.get("arguments")
        has_arguments = "arguments" in call
        if has_arguments and self.typed(arguments, dict, (*at, "arguments"), required=True):
            strings = all(isinstance(v, str) for v in arguments.values())
            if needs == "messages" and not strings:
                self.warn(
                    (*at, "arguments"),
                    "type",
                    "prompt arguments are strings in MCP; a client sends no other kind",
                )
        if ("result" in call) == ("error" in call):
            self.error(at, "answer", 'needs exactly one of "result" and "error"')
        result = call.get("result")
        if (
            "result" in call
            and self.typed(result, dict, (*at, "result"), required=True)
            and not isinstance(result.get(needs), list)
        ):
            self.error((*at, "result", needs), "answer", f"a result needs a {needs} array")
        if "error" in call:
            self.error_object((*at, "error"), call["error"])

    def error_object(self, at: Path, error: Any) -> None:
        if self.typed(error, dict, at, required=True):
            self.typed(error.get("code"), int, (*at, "code"), required=True)
            self.typed(error.get("message"), str, (*at, "message"), required=True)

    def resources(self, manifest: dict[str, Any]) -> None:
        seen: dict[str, Path] = {}
        for at, resource in self.items(manifest, "resources"):
            self.unique(at, resource, "uri", seen, "resource")
            listed = resource.get("listed", True)
            if not isinstance(listed, bool):
                self.error((*at, "listed"), "type", f"must be a boolean, not {json_type(listed)}")
            self.typed(resource.get("name"), str, (*at, "name"), required=listed is not False)
            if "contents" in resource and "error" in resource:
                self.error(at, "answer", 'has both "contents" and "error"; keep one')
            if "error" in resource:
                self.error_object((*at, "error"), resource["error"])
            for here, content in self.items(resource, "contents", at):
                self.typed(content.get("uri"), str, (*here, "uri"), required=True)
                if not any(isinstance(content.get(k), str) for k in ("text", "blob")):
                    self.error(here, "answer", 'a content needs a "text" or a "blob" string')
