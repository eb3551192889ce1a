"""check's findings on tool lists, and ``check TAPE``'s on small cassettes, given as plain
values."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from cassette.errors import TransportError
from cassette.tools._surface import tool_issues
from cassette.tools.check import CheckReport, Issue, speaks_modern
from cassette.tools.check_tape import check_cassette
from tests.unit.test_tools_lint import msg, tape

OBJ: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "number"}}}


def messages(tools: list[Any], checker: Any = jsonschema) -> list[str]:
    return [f"{i.severity}: {i.message}" for i in tool_issues(tools, checker)]


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


# -- check TAPE: the recorded surface, from plain values -------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {"sum": {"type": "number"}},
    "required": ["sum"],
}
OPENING = (
    msg("c2s", id=1, method="initialize", params={"protocolVersion": "2025-11-25"}),
    msg(
        "s2c",
        id=1,
        result={
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "prompts": {}},
            "serverInfo": {"name": "adder", "version": "3"},
        },
    ),
)
ADD = {"name": "add", "description": "Adds.", "inputSchema": OBJ, "outputSchema": SCHEMA}


def call(number: int, result: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    request = msg("c2s", id=number, method="tools/call", params={"name": "add", "arguments": {}})
    return request, msg("s2c", id=number, result=result)


def test_check_tape_reads_the_opening_and_the_lists_as_recorded() -> None:
    report = check_cassette(
        tape(
            {"era": "legacy"},
            *OPENING,
            msg("c2s", id=2, method="tools/list"),
            msg("s2c", id=2, result={"tools": [ADD], "nextCursor": "p2"}),
            msg("c2s", id=3, method="tools/list", params={"cursor": "p2"}),
            msg("s2c", id=3, result={"tools": [{"name": "quiet", "inputSchema": OBJ}]}),
            msg("c2s", id=4, method="tools/list"),  # listed again: the first listing counts
            msg("s2c", id=4, result={"tools": [ADD]}),
        )
    )
    assert report.text().splitlines() == [
        "cassette: t.jsonl (as recorded)",
        "server: adder 3",
        "protocol: 2025-11-25 (legacy era)",
        "surface: 2 tools, 0 resources, 0 prompts, 0 resource templates",
        'warning: tool "quiet": no description',
        "note: prompts/list: never recorded, not checked",
        "result: PASS (0 errors, 1 warnings)",
    ]
    assert report.as_data()["cassette"] == "t.jsonl"


def test_check_tape_holds_recorded_answers_to_their_output_schema() -> None:
    report = check_cassette(
        tape(
            {"era": "legacy"},
            *OPENING,
            msg("c2s", id=2, method="tools/list"),
            msg("s2c", id=2, result={"tools": [ADD], "nextCursor": "p2"}),  # page 2 never asked
            *call(3, {"content": [], "structuredContent": {"sum": 42}}),
            *call(4, {"content": [{"type": "text", "text": "42"}]}),
            *call(5, {"content": [], "structuredContent": {"sum": "forty-two"}}),
            *call(6, {"content": [{"type": "text", "text": "boom"}], "isError": True}),
        )
    )
    assert [f"{i.severity}: {i.message}" for i in report.issues] == [
        "note: tools/list: only 1 page(s) recorded, the rest not checked",
        'error: tool "add": the answer at line 9 has no structuredContent (it has an outputSchema)',
        'error: tool "add": the answer at line 11 does not conform to its outputSchema at /sum: '
        "'forty-two' is not of type 'number'",
        "note: prompts/list: never recorded, not checked",
    ]
    assert not report.passed


def test_check_tape_reports_a_list_the_server_refused() -> None:
    report = check_cassette(
        tape(
            {"era": "legacy"},
            *OPENING,
            msg("c2s", id=2, method="prompts/list"),
            msg("s2c", id=2, error={"code": -32603, "message": "database down"}),
        )
    )
    messages_ = [f"{i.severity}: {i.message}" for i in report.issues]
    assert "error: prompts/list failed at line 4: -32603 database down" in messages_
    assert "note: tools/list: never recorded, not checked" in messages_
    assert not report.passed
