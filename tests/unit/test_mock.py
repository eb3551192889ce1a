"""The mock's parts with plain values: templates, the validator, the sans-IO server, and the
manifest file (JSON and TOML)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from cassette.errors import CassetteExistsError, ManifestError, UsageError
from cassette.mock import (
    MockServer,
    dumps_manifest,
    load_manifest,
    loads_manifest,
    render,
    validate_manifest,
    write_manifest,
)
from cassette.mock.template import references

ECHO_SCHEMA = {
    "type": "object",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
}


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def manifest(**sections: Any) -> dict[str, Any]:
    return {"manifest": 1, "server": {"name": "demo", "version": "1.0"}, **sections}


ECHO = {
    "name": "echo",
    "description": "Echoes",
    "inputSchema": ECHO_SCHEMA,
    "calls": [
        {"arguments": {"message": "hi"}, "result": text("recorded hi")},
        {
            "arguments": {"message": "boom"},
            "error": {"code": -32000, "message": "no {{arguments.message}}"},
        },
        {"result": text("Echo: {{arguments.message}}")},
    ],
}
SUM = {
    "name": "sum",
    "inputSchema": {"type": "object", "properties": {"a": {}, "b": {}}},
    "calls": [
        {
            "arguments": {"a": 1, "b": 2},
            "result": {**text("3"), "structuredContent": "{{arguments}}"},
        }
    ],
}
FULL = manifest(
    protocolVersion="2025-06-18",
    instructions="Be nice.",
    tools=[ECHO, SUM],
    resources=[
        {"uri": "memo://a", "name": "a", "contents": [{"uri": "memo://a", "text": "A"}]},
        {"uri": "memo://b", "name": "b"},
        {"uri": "memo://gone", "name": "gone", "error": {"code": -32002, "message": "gone"}},
        {
            "uri": "memo://hidden/1",
            "listed": False,
            "contents": [{"uri": "memo://hidden/1", "blob": "AA=="}],
        },
    ],
    resourceTemplates=[{"uriTemplate": "memo://hidden/{id}", "name": "hidden"}],
    prompts=[
        {
            "name": "greet",
            "arguments": [{"name": "who", "required": True}],
            "calls": [
                {
                    "arguments": {"who": "Ada"},
                    "result": {
                        "messages": [
                            {
                                "role": "user",
                                "content": {"type": "text", "text": "Hi {{arguments.who}}"},
                            }
                        ]
                    },
                }
            ],
        }
    ],
)


# -- templates ---------------------------------------------------------------------------


def test_a_whole_placeholder_keeps_the_json_type_and_a_partial_one_is_text() -> None:
    arguments = {"n": 2, "flag": True, "obj": {"k": [1, "x"]}, "s": "str"}
    value = {
        "n": "{{arguments.n}}",
        "spaced": "{{ arguments.flag }}",
        "obj": "{{arguments.obj}}",
        "deep": "{{arguments.obj.k}}",
        "all": "{{arguments}}",
        "mixed": "n={{arguments.n}} obj={{arguments.obj}} s={{arguments.s}}",
        "missing": "[{{arguments.nope}}]",
        "missing_whole": "{{arguments.nope}}",
        "list": ["{{arguments.s}}", 3, None],
        "plain": "{{not a placeholder}}",
        "{{arguments.s}}": "keys are never rendered",
    }
    assert render(value, arguments) == {
        "n": 2,
        "spaced": True,
        "obj": {"k": [1, "x"]},
        "deep": [1, "x"],
        "all": arguments,
        "mixed": 'n=2 obj={"k":[1,"x"]} s=str',
        "missing": "[]",
        "missing_whole": "",
        "list": ["str", 3, None],
        "plain": "{{not a placeholder}}",
        "{{arguments.s}}": "keys are never rendered",
    }
    assert sorted(references(value)) == [
        (),
        ("flag",),
        ("n",),
        ("n",),
        ("nope",),
        ("nope",),
        ("obj",),
        ("obj",),
        ("obj", "k"),
        ("s",),
        ("s",),
    ]


# -- the validator -----------------------------------------------------------------------


def found(value: Any, **options: Any) -> list[tuple[str, str, str]]:
    return [(f.pointer, f.severity, f.code) for f in validate_manifest(value, **options)]


def test_a_good_manifest_has_no_findings() -> None:
    assert validate_manifest(FULL) == []


def test_each_finding_is_at_its_json_pointer() -> None:
    bad = {
        "manifest": 1,
        "tool": [],
        "server": {"name": 3},
        "tools": [
            {"name": "echo", "inputSchema": ECHO_SCHEMA},
            {"name": "echo", "inputSchema": ECHO_SCHEMA},
            {"name": "has space", "inputSchema": {"type": "string"}},
            {
                "name": "x",
                "inputSchema": ECHO_SCHEMA,
                "calls": [
                    {"arguments": [1], "result": text("a")},
                    {
                        "arguments": {},
                        "result": {"content": 0},
                        "error": {"code": 1, "message": ""},
                    },
                    {"result": text("{{arguments.mesage}}")},
                    {"result": text("again")},
                    {"arguments": {"message": "m"}, "error": {"code": "1"}, "extra": 1},
                    {"arguments": {"message": "m"}, "result": text("shadowed")},
                ],
            },
            "not an object",
        ],
        "resources": [
            {
                "uri": "a://1",
                "name": "one",
                "contents": [{"uri": "a://1"}],
                "error": {"code": 1, "message": "m"},
            },
            {"uri": "a://1"},
            {"uri": "a://2", "listed": "no"},
        ],
        "prompts": [
            {"name": "p", "arguments": [{}], "calls": [{"arguments": {"n": 1}, "result": {}}]}
        ],
    }
    assert found(bad) == [
        ("/tool", "warning", "unknown-key"),
        ("/server/name", "error", "type"),
        ("/tools/1/name", "error", "duplicate"),
        ("/tools/2/name", "warning", "name"),
        ("/tools/2/inputSchema", "error", "schema"),
        ("/tools/3/calls/0/arguments", "error", "type"),
        ("/tools/3/calls/1", "error", "answer"),
        ("/tools/3/calls/1/result/content", "error", "answer"),
        ("/tools/3/calls/2", "warning", "template"),
        ("/tools/3/calls/3", "warning", "unreachable"),
        ("/tools/3/calls/4/extra", "warning", "unknown-key"),
        ("/tools/3/calls/4/error/code", "error", "type"),
        ("/tools/3/calls/4/error/message", "error", "type"),
        ("/tools/3/calls/5", "warning", "unreachable"),
        ("/tools/4", "error", "type"),
        ("/resources/0", "error", "answer"),
        ("/resources/0/contents/0", "error", "answer"),
        ("/resources/1/uri", "error", "duplicate"),
        ("/resources/1/name", "error", "type"),
        ("/resources/2/listed", "error", "type"),
        ("/resources/2/name", "error", "type"),
        ("/prompts/0/arguments/0/name", "error", "type"),
        ("/prompts/0/calls/0/arguments", "warning", "type"),
        ("/prompts/0/calls/0/result/messages", "error", "answer"),
    ]
    messages = {f.pointer: f.message for f in validate_manifest(bad)}
    assert messages["/tools/1/name"] == 'duplicate tool name "echo" (first at /tools/0)'
    assert messages["/tools/3/calls/2"] == (
        '{{arguments.mesage}} names "mesage", which the tool\'s inputSchema does not declare '
        "(it has: message)"
    )
    assert messages["/tools/3/calls/3"] == (
        "never used: it has no arguments, like /tools/3/calls/2, which answers first"
    )


def test_the_format_version_and_the_shape_of_the_whole() -> None:
    assert found([]) == [("", "error", "type")]
    assert found({}) == [("/manifest", "error", "format")]
    assert found({"manifest": 2}) == [("/manifest", "error", "format")]
    assert found({"manifest": True}) == [("/manifest", "error", "type")]
    assert "upgrade cassette-mcp" in validate_manifest({"manifest": 2})[0].message


def test_schemas_are_validated_against_their_draft_unless_serving() -> None:
    broken = manifest(tools=[{"name": "t", "inputSchema": {"type": "object", "properties": 3}}])
    [finding] = validate_manifest(broken)
    assert (finding.pointer, finding.code) == ("/tools/0/inputSchema", "schema")
    assert "not a valid Draft202012Validator" in finding.message
    assert validate_manifest(broken, schemas=False) == []
    assert found(manifest(tools=[{"name": "t"}])) == [("/tools/0/inputSchema", "error", "schema")]


# -- the sans-IO server ------------------------------------------------------------------


def request(server: MockServer, method: str, params: Any = None, msg_id: int = 1) -> Any:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return server.answer(message)


def result_of(server: MockServer, method: str, params: Any = None) -> Any:
    reply = request(server, method, params)
    assert "result" in reply, reply
    return reply["result"]


def error_of(server: MockServer, method: str, params: Any = None) -> dict[str, Any]:
    reply = request(server, method, params)
    assert "error" in reply, reply
    return dict(reply["error"])


def test_initialize_negotiates_a_legacy_version_and_advertises_what_the_manifest_has() -> None:
    server = MockServer(FULL)
    init = result_of(server, "initialize", {"protocolVersion": "2025-03-26", "capabilities": {}})
    assert init == {
        "protocolVersion": "2025-03-26",
        "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
        "serverInfo": {"name": "demo", "version": "1.0"},
        "instructions": "Be nice.",
    }
    assert (
        result_of(server, "initialize", {"protocolVersion": "2026-07-28"})["protocolVersion"]
        == "2025-06-18"
    )
    bare = MockServer({"manifest": 1, "tools": [{"name": "t", "inputSchema": {"type": "object"}}]})
    init = result_of(bare, "initialize", {"protocolVersion": "9999-01-01"})
    assert init == {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "cassette-mock", "version": "0"},
    }
    assert error_of(server, "server/discover", {}) == {
        "code": -32601,
        "message": "Method not found",
    }


def test_lists_leave_out_what_only_the_mock_uses() -> None:
    server = MockServer(FULL)
    assert result_of(server, "tools/list") == {
        "tools": [
            {"name": "echo", "description": "Echoes", "inputSchema": ECHO_SCHEMA},
            {"name": "sum", "inputSchema": SUM["inputSchema"]},
        ]
    }
    assert result_of(server, "resources/list") == {
        "resources": [
            {"uri": "memo://a", "name": "a"},
            {"uri": "memo://b", "name": "b"},
            {"uri": "memo://gone", "name": "gone"},
        ]
    }
    assert result_of(server, "resources/templates/list") == {
        "resourceTemplates": [{"uriTemplate": "memo://hidden/{id}", "name": "hidden"}]
    }
    assert result_of(server, "prompts/list") == {
        "prompts": [{"name": "greet", "arguments": [{"name": "who", "required": True}]}]
    }


def test_calls_match_by_arguments_then_fall_back_to_an_entry_without_them() -> None:
    server = MockServer(FULL)
    assert result_of(
        server, "tools/call", {"name": "echo", "arguments": {"message": "hi"}}
    ) == text("recorded hi")
    assert result_of(
        server, "tools/call", {"name": "echo", "arguments": {"message": "new"}}
    ) == text("Echo: new")
    assert error_of(server, "tools/call", {"name": "echo", "arguments": {"message": "boom"}}) == {
        "code": -32000,
        "message": "no boom",
    }
    answer = result_of(server, "tools/call", {"name": "sum", "arguments": {"b": 2, "a": 1}})
    assert answer["structuredContent"] == {"a": 1, "b": 2}  # key order does not matter
    assert server.misses == []


def test_a_request_the_manifest_cannot_answer_is_a_miss_that_says_what_it_has() -> None:
    server = MockServer(FULL, source="m.json")
    error = error_of(server, "tools/call", {"name": "sum", "arguments": {"a": 1, "b": 2.0}})
    assert error["code"] == -32099
    assert error["message"] == (
        'cassette-mcp: tools/call "sum" with arguments {"a":1,"b":2.0}: no call in the '
        'manifest matches; it answers only {"a":1,"b":2} (add a call with these arguments, '
        'or one without "arguments" to answer any call)'
    )
    assert error["data"] == {"kind": "not-recorded", "method": "tools/call"}
    unknown = error_of(server, "tools/call", {"name": "nope"})["message"]
    assert (
        unknown
        == 'cassette-mcp: tools/call "nope": no such tool in the manifest (it has: echo, sum)'
    )
    assert "no such prompt" in error_of(server, "prompts/get", {"name": "nope"})["message"]
    assert len(server.misses) == 3
    assert server.summary().splitlines()[0] == "3 request(s) had no answer in the manifest:"
    assert server.describe(server.misses[1]) == (
        'm.json: tools/call "nope": no such tool in the manifest (it has: echo, sum)'
    )


def test_resources_and_prompts() -> None:
    server = MockServer(FULL)
    assert result_of(server, "resources/read", {"uri": "memo://a"}) == {
        "contents": [{"uri": "memo://a", "text": "A"}]
    }
    assert (
        result_of(server, "resources/read", {"uri": "memo://hidden/1"})["contents"][0]["blob"]
        == "AA=="
    )
    assert error_of(server, "resources/read", {"uri": "memo://gone"}) == {
        "code": -32002,
        "message": "gone",
    }
    assert (
        "has no contents for it"
        in error_of(server, "resources/read", {"uri": "memo://b"})["message"]
    )
    assert "no such resource" in error_of(server, "resources/read", {"uri": "memo://c"})["message"]
    prompt = result_of(server, "prompts/get", {"name": "greet", "arguments": {"who": "Ada"}})
    assert prompt["messages"][0]["content"]["text"] == "Hi Ada"
    assert len(server.misses) == 2


def test_the_rest_of_the_protocol() -> None:
    server = MockServer(FULL)
    assert result_of(server, "ping") == {}
    assert result_of(server, "logging/setLevel", {"level": "debug"}) == {}
    assert result_of(server, "completion/complete", {"ref": {}, "argument": {}}) == {
        "completion": {"values": []}
    }
    assert error_of(server, "resources/subscribe", {"uri": "memo://a"})["code"] == -32601
    assert error_of(server, "tools/call", {"arguments": {}})["code"] == -32602
    assert error_of(server, "tools/call", {"name": "echo", "arguments": [1]})["code"] == -32602
    assert error_of(server, "tools/list", [1])["code"] == -32602
    assert server.answer({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert server.answer({"jsonrpc": "2.0", "id": 9, "result": {}}) is None
    batch = server.answer(
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "method": "x"}, []]
    )
    assert batch == [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}},
    ]
    assert server.receive_frame(b"not json\n").messages[0]["error"]["code"] == -32700
    assert server.receive_frame(b"  \n").messages == ()
    assert server.answer({"jsonrpc": "2.0", "id": 3})["error"]["code"] == -32600
    assert server.misses == []


def test_a_manifest_with_errors_is_not_served() -> None:
    with pytest.raises(ManifestError) as info:
        MockServer(
            {"manifest": 1, "tools": [{"inputSchema": {}}, {"name": "x", "calls": [{}]}]},
            source="m.toml",
        )
    assert str(info.value) == (
        "m.toml: 2 error(s) keep this manifest from being served: /tools/0/name: must be a "
        'string, not missing; /tools/1/calls/0: needs exactly one of "result" and "error"; '
        "run: cassette mock --validate MANIFEST"
    )
    warned = MockServer(manifest(tools=[{"name": "a b", "inputSchema": {"type": "object"}}]))
    assert [w.code for w in warned.warnings] == ["name"]


# -- the file ----------------------------------------------------------------------------

NULLS = manifest(
    tools=[
        {
            "name": "t",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "x": {"default": None, "enum": [None, "a"], "anyOf": [{"type": "null"}]}
                },
            },
            "calls": [
                {
                    "arguments": {"x": None},
                    "result": {"content": [], "structuredContent": {"x": None}},
                }
            ],
        }
    ],
    instructions="line one\r\nline two\n",
)


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_a_manifest_round_trips_through_its_file_nulls_included(
    tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"m{suffix}"
    write_manifest(NULLS, path)
    assert load_manifest(path) == NULLS
    with pytest.raises(CassetteExistsError, match="refusing to overwrite"):
        write_manifest(NULLS, path)
    write_manifest(FULL, path, overwrite=True)
    assert load_manifest(path) == FULL


def test_toml_spells_null_as_a_table() -> None:
    toml = dumps_manifest({"manifest": 1, "a": None, "b": [None]}, "toml")
    assert toml == 'manifest = 1\nb = [\n    { "$null" = true },\n]\n\n[a]\n"$null" = true\n'
    assert loads_manifest(toml, "toml") == {"manifest": 1, "a": None, "b": [None]}
    with pytest.raises(ManifestError, match=r"/x: the object \{\"\$null\": true\} is how TOML"):
        dumps_manifest({"x": {"$null": True}}, "toml")
    assert json.loads(dumps_manifest({"x": {"$null": True}}, "json")) == {"x": {"$null": True}}


def test_writing_toml_without_tomli_w_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tomli_w", None)
    from cassette._install import install_command

    hint = re.escape(f"{install_command('toml')}, or write a .json")  # for this install
    with pytest.raises(UsageError, match=hint):
        dumps_manifest(FULL, "toml")


def test_an_unreadable_manifest_is_one_line_naming_the_file_and_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "manifest": 1,\n  "tools": [,]\n}\n')
    with pytest.raises(ManifestError) as info:
        load_manifest(broken)
    assert str(info.value) == f"{broken}:3: not valid JSON: Expecting value (column 13)"
    bad_toml = tmp_path / "broken.toml"
    bad_toml.write_text("manifest = 1\n[server\n")
    with pytest.raises(ManifestError, match=rf"^{bad_toml}:2: not valid TOML: "):
        load_manifest(bad_toml)
    dated = tmp_path / "dated.toml"
    dated.write_text("manifest = 1\n[server]\nreleased = 2026-01-02\n")
    with pytest.raises(
        ManifestError, match="/server/released: a TOML date or time has no JSON form"
    ):
        load_manifest(dated)
    with pytest.raises(ManifestError, match="no such manifest"):
        load_manifest(tmp_path / "missing.json")
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(
        ManifestError, match=r"list\.json:1: a manifest is a JSON object, not an array"
    ):
        load_manifest(tmp_path / "list.json")
    with pytest.raises(UsageError, match=r"ends in \.json or \.toml"):
        load_manifest(tmp_path / "m.yaml")
