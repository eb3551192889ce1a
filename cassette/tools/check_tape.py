"""``cassette check TAPE``: the surface a cassette recorded, checked offline.

No server is started and nothing is connected to: the report is read from the recording,
with the rules ``check`` applies to a live server (``cassette.tools.check``), so a
cassette committed to a repository can be checked in CI without the server or its
credentials. What is read, from the main session (a variant is the same server seen by
another client):

* the opening: the recorded ``initialize`` result (legacy) or ``server/discover`` result
  (modern): the server's name, version, protocol and advertised capabilities;
* each advertised list (tools, resources, resource templates, prompts): the first listing
  the client recorded, page by page. A list the client never asked for was not recorded,
  which says nothing about the server: a note, not an error. A listing the server
  refused is an error, as live. A listing cut short (a ``nextCursor`` whose page the
  client never asked for) is checked as far as it goes, with a note;
* the tools' definitions, as ``check`` checks them live (names, descriptions, input and
  output schemas);
* what only a recording holds: each recorded ``tools/call`` answer of a tool with an
  ``outputSchema`` must carry ``structuredContent`` that conforms to it (the MCP
  specification's rule; an ``isError`` answer need not). Validated with ``jsonschema``
  (the ``tools`` extra); without it only its presence is checked, and the report says so.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import attrs

from cassette.client.opening import Opening, discovered, initialized, speaks_modern
from cassette.core.eras.variants import split
from cassette.core.wire.definitions import Issue
from cassette.errors import TransportError
from cassette.store.storage import Cassette
from cassette.tools._common import Exchange, exchanges
from cassette.tools._surface import SURFACES, CheckReport, schema_validator, tool_issues

__all__ = ["check_cassette"]


def check_cassette(tape: Cassette | str | os.PathLike[str]) -> CheckReport:
    """The report ``check`` gives of the server ``tape`` recorded (a path or a loaded
    ``Cassette``), from the recording alone."""
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    pairs, _problems = exchanges(split(cassette.events)[0])
    recorded = _Recorded.of(pairs)
    jsonschema, issues = schema_validator()
    opening = recorded.opening
    if opening is None:
        issues.append(Issue("error", "the recording holds no successful opening to read"))
        opening = initialized({})
    counts = {"tools": 0, "resources": 0, "prompts": 0, "templates": 0}
    for capability, method, key, counted in SURFACES:
        if capability not in opening.capabilities:
            continue
        items, found = recorded.listing(method, key)
        counts[counted] = len(items)
        issues += found
        if counted == "tools":
            issues += tool_issues(items, jsonschema)
            issues += _answer_issues(recorded.calls, items, jsonschema)
    if not opening.server.get("name"):
        issues.append(Issue("warning", opening.missing_name))
    source = cassette.source or "the cassette"
    return CheckReport(
        dict(opening.server), opening.protocol, cassette.era, counts, tuple(issues), source
    )


@attrs.define
class _Recorded:
    """What the main session's exchanges hold for ``check``: the opening, every list
    request (in order) and every tools/call answered, by line."""

    opening: Opening | None = None
    lists: dict[str, list[Exchange]] = attrs.field(factory=dict)
    calls: list[Exchange] = attrs.field(factory=list)

    @classmethod
    def of(cls, pairs: list[Exchange]) -> _Recorded:
        found = cls()
        for pair in pairs:
            if pair.request.dir != "c2s" or pair.response is None:
                continue
            method = str(pair.request.message.get("method"))
            result = pair.response.message.get("result")
            if found.opening is None and isinstance(result, dict):
                found.opening = _opening(method, pair.response.message)
            if method in _LIST_KEYS:
                found.lists.setdefault(method, []).append(pair)
            elif method == "tools/call" and isinstance(result, dict):
                found.calls.append(pair)
        return found

    def listing(self, method: str, key: str) -> tuple[list[Any], list[Issue]]:
        """The items of the first listing recorded of ``method``, and what is worth saying
        of it (never recorded, refused, cut short)."""
        pairs = self.lists.get(method, [])
        if not pairs:
            return [], [Issue("note", f"{method}: never recorded, not checked")]
        items: list[Any] = []
        pages = _first_listing(pairs)
        for number, pair in enumerate(pages, start=1):
            line = pair.request.seq + 1
            response = pair.response.message if pair.response is not None else {}
            error = response.get("error")
            if error is not None:
                shown = error if isinstance(error, dict) else {}
                said = f"{shown.get('code')} {shown.get('message', '')}".strip()
                return items, [Issue("error", f"{method} failed at line {line}: {said}")]
            result = response.get("result")
            page = result.get(key) if isinstance(result, dict) else None
            if not isinstance(page, list):
                return items, [Issue("error", f"{method} at line {line}: no {key!r} list")]
            items += page
            cursor = result.get("nextCursor") if isinstance(result, dict) else None
            if isinstance(cursor, str) and cursor and pair is pages[-1]:
                cut = f"{method}: only {number} page(s) recorded, the rest not checked"
                return items, [Issue("note", cut)]
        return items, []


#: the list methods, by the key of their items
_LIST_KEYS = {method: key for _, method, key, _ in SURFACES}


def _opening(method: str, response: Mapping[str, Any]) -> Opening | None:
    """The opening a recorded answer tells of, if it is one."""
    result = response.get("result")
    if not isinstance(result, dict):
        return None
    if method == "initialize":
        return initialized(result)
    if method == "server/discover":
        try:
            modern = speaks_modern(dict(response), "auto")
        except TransportError:
            return None
        return discovered(result) if modern else None
    return None


def _first_listing(pairs: list[Exchange]) -> list[Exchange]:
    """The pages of the first listing: the request without a cursor, then each page the
    one before it pointed to, while the recording has it (later listings, after a
    ``list_changed`` say, are left out: one listing is what a live check reads)."""
    out: list[Exchange] = []
    wanted: str | None = None
    for pair in pairs:
        params = pair.request.message.get("params")
        cursor = params.get("cursor") if isinstance(params, dict) else None
        if cursor != wanted and not (wanted is None and not cursor):
            continue
        out.append(pair)
        response = pair.response.message if pair.response is not None else {}
        result = response.get("result")
        following = result.get("nextCursor") if isinstance(result, dict) else None
        if not isinstance(following, str) or not following:
            break
        wanted = following
    return out


def _answer_issues(calls: list[Exchange], tools: list[Any], jsonschema: Any) -> list[Issue]:
    """Each recorded answer of a tool with an ``outputSchema``: ``structuredContent``
    there, and (with ``jsonschema``) conforming to the schema."""
    schemas = {
        tool["name"]: tool["outputSchema"]
        for tool in tools
        if isinstance(tool, dict)
        and isinstance(tool.get("name"), str)
        and isinstance(tool.get("outputSchema"), dict)
    }
    out: list[Issue] = []
    for pair in calls:
        params = pair.request.message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        schema = schemas.get(name) if isinstance(name, str) else None
        answer = pair.response
        result = answer.message.get("result") if answer is not None else None
        if schema is None or answer is None or not isinstance(result, dict):
            continue
        if result.get("isError") is True:
            continue  # a tool error need not be structured
        label = f"tool {json.dumps(name)}: the answer at line {answer.seq + 1}"
        if "structuredContent" not in result:
            out.append(Issue("error", f"{label} has no structuredContent (it has an outputSchema)"))
        elif jsonschema is not None:
            out += _conforms(jsonschema, label, schema, result["structuredContent"])
    return out


def _conforms(jsonschema: Any, label: str, schema: dict[str, Any], value: Any) -> list[Issue]:
    """The first way ``value`` breaks ``schema`` (one is enough to find it), if any. A
    schema that is itself invalid is reported by the definition check, not here."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        error = jsonschema.exceptions.best_match(cls(schema).iter_errors(value))
    except jsonschema.SchemaError:
        return []
    if error is None:
        return []
    path = "/" + "/".join(str(p) for p in error.path) if error.path else "/"
    return [
        Issue("error", f"{label} does not conform to its outputSchema at {path}: {error.message}")
    ]
