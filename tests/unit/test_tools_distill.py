"""distill on small hand-written cassettes (plain values), and the golden manifests of
the committed example cassette."""

from __future__ import annotations

import json
from typing import Any

from cassette.mock import MockServer, dumps_manifest, load_manifest, validate_manifest
from cassette.store.storage import Cassette
from cassette.tools.distill import distill_cassette
from tests.helpers.support import ROOT
from tests.unit.test_tools_lint import INIT, msg, tape

EXAMPLES = ROOT / "examples"
SCHEMA = {"type": "object", "properties": {"message": {"type": "string"}}}


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def call(
    msg_id: int, name: str, arguments: Any = None, method: str = "tools/call"
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return msg("c2s", id=msg_id, method=method, params=params)


LEGACY = tape(
    {"era": "legacy", "protocol_version": "2025-06-18"},
    msg("c2s", id=0, method="server/discover", params={}),
    msg("s2c", id=0, error={"code": -32601, "message": "Method not found"}),
    INIT,
    msg(
        "s2c",
        id=1,
        result={
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "demo", "version": "2.0"},
            "instructions": "Use echo.",
        },
    ),
    msg("c2s", method="notifications/initialized"),
    msg("c2s", id=2, method="tools/list"),
    msg(
        "s2c",
        id=2,
        result={
            "tools": [{"description": "Echoes", "name": "echo", "inputSchema": SCHEMA}],
            "nextCursor": "p2",
        },
    ),
    msg("c2s", id=3, method="tools/list", params={"cursor": "p2"}),
    msg("s2c", id=3, result={"tools": [{"name": "fail", "inputSchema": {"type": "object"}}]}),
    call(4, "echo", {"message": "hi"}),
    msg("s2c", id=4, result=text("Echo: hi")),
    call(5, "echo", {"message": "hi"}),
    msg("s2c", id=5, result=text("Echo: hi")),
    call(6, "echo", {"message": "yo"}),
    msg("s2c", id=6, result=text("Echo: yo")),
    call(7, "echo", {"message": "yo"}),
    msg("s2c", id=7, result=text("Echo: yo!")),
    call(8, "fail"),
    msg("s2c", id=8, error={"code": -32000, "message": "always fails"}),
    call(9, "unlisted", {"x": 1}),
    msg("s2c", id=9, result=text("surprise")),
    msg("s2c", id=0, method="roots/list"),  # a server request: not the mock's business
    msg("c2s", id=0, result={"roots": []}),
    msg("c2s", id=10, method="resources/list"),
    msg(
        "s2c",
        id=10,
        result={"resources": [{"name": "a", "uri": "memo://a"}, {"name": "b", "uri": "memo://b"}]},
    ),
    msg("c2s", id=11, method="resources/templates/list"),
    msg(
        "s2c", id=11, result={"resourceTemplates": [{"name": "n", "uriTemplate": "memo://n/{id}"}]}
    ),
    msg("c2s", id=12, method="resources/read", params={"uri": "memo://a"}),
    msg("s2c", id=12, result={"contents": [{"uri": "memo://a", "text": "A"}]}),
    msg("c2s", id=13, method="resources/read", params={"uri": "memo://n/7"}),
    msg("s2c", id=13, result={"contents": [{"uri": "memo://n/7", "text": "seven"}]}),
    msg("c2s", id=14, method="resources/read", params={"uri": "memo://b"}),
    msg("s2c", id=14, error={"code": -32002, "message": "Resource not found"}),
    msg("c2s", id=15, method="prompts/list"),
    msg("s2c", id=15, result={"prompts": [{"name": "greet", "arguments": [{"name": "who"}]}]}),
    call(16, "greet", {"who": "Ada"}, "prompts/get"),
    msg(
        "s2c",
        id=16,
        result={"messages": [{"role": "user", "content": {"type": "text", "text": "Hi Ada"}}]},
    ),
    call(17, "echo", {"message": "lost"}),
)


def test_a_legacy_cassette_distills_to_one_entry_per_distinct_thing() -> None:
    notes: list[str] = []
    manifest = distill_cassette(LEGACY, notes=notes)
    assert manifest == {
        "manifest": 1,
        "server": {"name": "demo", "version": "2.0"},
        "protocolVersion": "2025-06-18",
        "instructions": "Use echo.",
        "tools": [
            {
                "name": "echo",
                "description": "Echoes",
                "inputSchema": SCHEMA,
                "calls": [
                    {"arguments": {"message": "hi"}, "result": text("Echo: hi")},
                    {"arguments": {"message": "yo"}, "result": text("Echo: yo")},
                ],
            },
            {
                "name": "fail",
                "inputSchema": {"type": "object"},
                "calls": [{"arguments": {}, "error": {"code": -32000, "message": "always fails"}}],
            },
            {
                "name": "unlisted",
                "inputSchema": {"type": "object"},
                "calls": [{"arguments": {"x": 1}, "result": text("surprise")}],
            },
        ],
        "resources": [
            {"uri": "memo://a", "name": "a", "contents": [{"uri": "memo://a", "text": "A"}]},
            {
                "uri": "memo://b",
                "name": "b",
                "error": {"code": -32002, "message": "Resource not found"},
            },
            {
                "uri": "memo://n/7",
                "listed": False,
                "contents": [{"uri": "memo://n/7", "text": "seven"}],
            },
        ],
        "resourceTemplates": [{"name": "n", "uriTemplate": "memo://n/{id}"}],
        "prompts": [
            {
                "name": "greet",
                "arguments": [{"name": "who"}],
                "calls": [
                    {
                        "arguments": {"who": "Ada"},
                        "result": {
                            "messages": [
                                {"role": "user", "content": {"type": "text", "text": "Hi Ada"}}
                            ]
                        },
                    }
                ],
            }
        ],
    }
    assert notes == [
        "2 repeated request(s) collapsed into the entry of their first recording",
        'line 17: tools/call "echo" {"message":"yo"} answered differently than at line 15; '
        "the first answer is kept",
        'line 39: tools/call "echo" {"message":"lost"} has no answer',
        'tool "unlisted" was called but never listed; its inputSchema is a placeholder '
        '{"type": "object"}',
    ]
    assert validate_manifest(manifest) == []


def test_the_mock_of_a_distilled_cassette_answers_as_recorded() -> None:
    server = MockServer(distill_cassette(LEGACY))
    answers = {
        e.message["id"]: e.message
        for e in LEGACY.events
        if getattr(e, "dir", "") == "s2c" and "id" in e.message
    }
    answers[7] = answers[6]  # of two recordings of one call, the first is kept
    for event in LEGACY.events:
        message = getattr(event, "message", {})
        if message.get("method") in ("tools/call", "resources/read", "prompts/get"):
            if message["id"] == 17:
                continue  # recorded without an answer: not in the manifest
            expected = {**answers[message["id"]], "id": message["id"]}
            assert server.answer(message) == expected
    assert server.misses == []


META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "3"}}


def test_a_modern_cassette_loses_the_modern_envelope() -> None:
    modern = tape(
        {"era": "modern", "protocol_version": "2026-07-28"},
        msg("c2s", id=1, method="server/discover", params={"_meta": META}),
        msg(
            "s2c",
            id=1,
            result={
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "instructions": "Modern.",
                "resultType": "complete",
                "cacheScope": "private",
                "ttlMs": 0,
                "_meta": SERVER_INFO,
            },
        ),
        msg(
            "c2s",
            id=2,
            method="tools/call",
            params={"name": "greet", "arguments": {}, "_meta": META},
        ),
        msg("s2c", id=2, result={"resultType": "input_required", "inputRequests": {}}),
        msg(
            "c2s",
            id=3,
            method="tools/call",
            params={"name": "greet", "arguments": {}, "inputResponses": {}},
        ),
        msg(
            "s2c",
            id=3,
            result={
                **text("Hello!"),
                "resultType": "complete",
                "_meta": {**SERVER_INFO, "mine": 1},
            },
        ),
    )
    notes: list[str] = []
    assert distill_cassette(modern, notes=notes) == {
        "manifest": 1,
        "server": {"name": "modern", "version": "3"},
        "protocolVersion": "2026-07-28",
        "instructions": "Modern.",
        "tools": [
            {
                "name": "greet",
                "inputSchema": {"type": "object"},
                "calls": [{"arguments": {}, "result": {**text("Hello!"), "_meta": {"mine": 1}}}],
            }
        ],
    }
    assert notes[0] == (
        'line 4: tools/call "greet" {} asked the client for input (input_required); only '
        "complete answers are kept"
    )


def test_a_cassette_with_no_handshake_gets_a_server_named_after_it() -> None:
    manifest = distill_cassette(
        Cassette.loads(LEGACY.dumps().splitlines()[0] + b"\n", "dir/my.tape.jsonl")
    )
    assert manifest == {"manifest": 1, "server": {"name": "my.tape", "version": "0"}}


def test_the_committed_example_distills_to_the_golden_manifests() -> None:
    manifest = distill_cassette(EXAMPLES / "everything.jsonl")
    golden = EXAMPLES / "everything.mock.json"
    assert dumps_manifest(manifest, "json") == golden.read_text(encoding="utf-8")
    toml = EXAMPLES / "everything.mock.toml"
    assert dumps_manifest(manifest, "toml") == toml.read_text(encoding="utf-8")
    assert load_manifest(toml) == load_manifest(golden) == manifest
    assert validate_manifest(manifest) == []
    assert json.loads(golden.read_text())["tools"][0]["calls"] == [
        {
            "arguments": {"message": "hello from a cassette"},
            "result": text("Echo: hello from a cassette"),
        }
    ]


def test_golden_files_are_named_in_the_docs() -> None:
    docs = (ROOT / "docs" / "mock.md").read_text(encoding="utf-8")
    assert "examples/everything.mock.json" in docs
    assert "examples/everything.mock.toml" in docs
