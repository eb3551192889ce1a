"""check's findings on tool lists given as plain values."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from cassette.errors import TransportError
from cassette.tools.check import CheckReport, Issue, _tool_issues, speaks_modern

OBJ: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "number"}}}


def messages(tools: list[Any], checker: Any = jsonschema) -> list[str]:
    return [f"{i.severity}: {i.message}" for i in _tool_issues(tools, checker)]


def test_a_good_tool_has_no_findings() -> None:
    assert messages([{"name": "add", "description": "Adds.", "inputSchema": OBJ}]) == []


def test_each_rule() -> None:
    tools = [
        {"name": "add", "description": "x", "inputSchema": OBJ},
        {"name": "add", "description": "x", "inputSchema": OBJ},
        {"name": "bad name!", "description": "x", "inputSchema": OBJ},
        {"name": "quiet", "inputSchema": OBJ},
        {"name": "noschema", "description": "x"},
        {"name": "wrongtype", "description": "x", "inputSchema": {"type": "string"}},
        {
            "name": "invalid",
            "description": "x",
            "inputSchema": {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"a": {"type": "nonsense"}},
            },
            "outputSchema": {"type": "object", "required": "a"},
        },
        {"description": "nameless"},
    ]
    found = messages(tools)
    assert found[:5] == [
        'error: tool "add": duplicate tool name',
        'error: tool "bad name!": name must be 1-128 of A-Z a-z 0-9 _ . -',
        'warning: tool "quiet": no description',
        'error: tool "noschema" inputSchema is missing',
        'error: tool "wrongtype" inputSchema must have "type": "object"',
    ]
    assert found[5].startswith('error: tool "invalid" inputSchema is not a valid Draft7Validator')
    assert found[6].startswith(
        'error: tool "invalid" outputSchema is not a valid Draft202012Validator'
    )
    assert found[7] == "error: tool #7 has no name"
    assert len(found) == 8


def test_without_jsonschema_only_structure_is_checked() -> None:
    bad = {"name": "t", "description": "x", "inputSchema": {"type": "object", "required": 1}}
    assert messages([bad], checker=None) == []


def test_report_text_and_verdict() -> None:
    report = CheckReport(
        {"name": "srv", "version": "1.0"},
        "2025-11-25",
        "legacy",
        {"tools": 2, "resources": 0, "prompts": 1, "templates": 0},
        (Issue("warning", 'tool "x": no description'),),
    )
    assert report.text().splitlines() == [
        "server: srv 1.0",
        "protocol: 2025-11-25 (legacy era)",
        "surface: 2 tools, 0 resources, 1 prompts, 0 resource templates",
        'warning: tool "x": no description',
        "result: PASS (0 errors, 1 warnings)",
    ]
    assert report.as_data()["result"] == "PASS"


def test_which_discover_replies_open_a_modern_session() -> None:
    def reply(**fields: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 1, **fields}

    modern = reply(result={"supportedVersions": ["2026-07-28"], "capabilities": {}})
    assert speaks_modern(modern, "auto")
    assert speaks_modern(modern, "modern")
    legacy_only = reply(result={"supportedVersions": ["2025-11-25"]})
    assert not speaks_modern(legacy_only, "auto")
    not_found = reply(error={"code": -32601, "message": "Method not found"})
    assert not speaks_modern(not_found, "auto")
    with pytest.raises(TransportError, match="refused server/discover"):
        speaks_modern(not_found, "modern")
    with pytest.raises(TransportError, match=r"lists no protocol version cassette speaks"):
        speaks_modern(legacy_only, "modern")
    # -32022 naming legacy revisions too: fall back; naming only other modern ones: give up
    mixed = {"supported": ["2025-11-25", "2027-01-01"], "requested": "2026-07-28"}
    assert not speaks_modern(reply(error={"code": -32022, "message": "v", "data": mixed}), "auto")
    future = {"supported": ["2027-01-01"], "requested": "2026-07-28"}
    with pytest.raises(TransportError, match="-32022"):
        speaks_modern(reply(error={"code": -32022, "message": "v", "data": future}), "auto")
