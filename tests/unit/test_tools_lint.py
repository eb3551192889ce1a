"""lint, redact --scan and diff on small hand-written cassettes (plain values, no I/O)."""

from __future__ import annotations

import json
from typing import Any

from cassette import Cassette
from cassette.tools.diff import diff_cassettes, normalize
from cassette.tools.lint import lint_cassette
from cassette.tools.redact_cmd import redact_cassette, scan_cassette


def tape(header: dict[str, Any], *events: dict[str, Any]) -> Cassette:
    base = {
        "kind": "header",
        "format": 1,
        "transport": "stdio",
        "recorder": {"name": "cassette-mcp", "version": "0"},
        "started_at": "2026-11-29T00:00:00Z",
    }
    lines = [json.dumps({**base, **header})]
    lines += [json.dumps(e) for e in events]
    return Cassette.loads("\n".join(lines) + "\n", "t.jsonl")


def msg(direction: str, t: float = 0.0, **message: Any) -> dict[str, Any]:
    return {"kind": "message", "t": t, "dir": direction, "message": {"jsonrpc": "2.0", **message}}


INIT = msg("c2s", id=1, method="initialize", params={"protocolVersion": "2025-11-25"})
INIT_OK = msg("s2c", id=1, result={"protocolVersion": "2025-11-25"})


def codes(cassette: Cassette) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_cassette(cassette)]


def test_a_consistent_legacy_session_has_no_findings() -> None:
    good = tape(
        {"era": "legacy"},
        INIT,
        INIT_OK,
        msg("c2s", method="notifications/initialized"),
        msg("c2s", id=2, method="tools/list"),
        msg("s2c", id=0, method="roots/list"),
        msg("c2s", id=0, result={"roots": []}),
        msg("s2c", id=2, result={"tools": []}),
        {"kind": "exit", "t": 1.0, "code": 0},
    )
    assert lint_cassette(good) == []


def test_era_rules() -> None:
    modern = tape(
        {"era": "modern", "transport": "streamable-http"},
        INIT,
        INIT_OK,
        {"kind": "http", "t": 0.1, "method": "GET", "stream": "get-1", "status": 200},
    )
    assert codes(modern) == [(2, "era"), (4, "era")]
    legacy = tape(
        {"era": "legacy"}, msg("c2s", id=1, method="tools/list"), msg("s2c", id=1, result={})
    )
    [finding] = lint_cassette(legacy)
    assert (finding.line, finding.code, finding.severity) == (2, "era", "warning")


def test_transport_rules() -> None:
    http = tape(
        {"era": "legacy", "transport": "streamable-http"},
        INIT,
        INIT_OK,
        {"kind": "stderr", "t": 0.2, "text": "log"},
        {"kind": "exit", "t": 0.3, "code": 0},
    )
    assert codes(http) == [(4, "transport"), (5, "transport")]
    stdio = tape(
        {"era": "legacy"},
        INIT,
        INIT_OK,
        {"kind": "http", "t": 0.1, "method": "DELETE", "stream": "delete-1", "status": 200},
    )
    assert codes(stdio) == [(4, "transport")]


def test_pairing_rules() -> None:
    bad = tape(
        {"era": "legacy"},
        INIT,
        INIT_OK,
        msg("c2s", id=2, method="tools/list"),
        msg("c2s", id=2, method="prompts/list"),
        msg("s2c", id=7, method="sampling/createMessage"),
        msg("s2c", id=2, result={}),
        msg("s2c", id=9, result={}),
    )
    found = lint_cassette(bad)
    assert [(f.line, f.code) for f in found] == [
        (5, "duplicate-id"),
        (5, "unanswered"),
        (6, "unanswered"),
        (8, "stray-answer"),
    ]
    assert "request prompts/list (id 2) has no server answer" in found[1].message
    assert "server request sampling/createMessage (id 7) has no client answer" in found[2].message


def test_secrets_are_found_by_the_recorders_rules() -> None:
    leaky = tape(
        {"era": "legacy", "target": {"command": ["server", "--token", "abc"]}},
        INIT,
        INIT_OK,
        msg(
            "c2s",
            id=2,
            method="tools/call",
            params={
                "name": "x",
                "arguments": {"note": "Bearer abcdefghijklmnop", "apiKey": "plain", "maxTokens": 5},
            },
        ),
        msg("s2c", id=2, result={"progressToken": "p1", "text": "AKIAABCDEFGHIJKLMNOP"}),
    )
    found = scan_cassette(leaky)
    messages = [(f.line, f.message) for f in found]
    assert messages == [
        (1, "unredacted secret (argument) in header target /command"),
        (4, "unredacted secret (bearer) in message /params/arguments/note"),
        (4, "unredacted secret (key) in message /params/arguments/apiKey"),
        (5, "unredacted secret (aws-key) in message /result/text"),
    ]
    clean, changed = redact_cassette(leaky)
    assert changed == 3
    assert scan_cassette(clean) == []
    assert clean.header.redaction == {"placeholders": "numbered"}
    assert b"abcdefghijklmnop" not in clean.dumps()


def test_rewriting_an_old_cassette_drops_its_salt_and_keeps_its_placeholders() -> None:
    old = tape(
        {"era": "legacy", "redaction": {"salt": "ab" * 16, "patterns": ["acct-[0-9]+"]}},
        INIT,
        INIT_OK,
        msg(
            "c2s",
            id=2,
            method="tools/call",
            params={
                "name": "x",
                "arguments": {"token": "[REDACTED:key:0123456789ab]", "note": "ghp_" + "Q" * 36},
            },
        ),
    )
    clean, changed = redact_cassette(old)
    assert changed == 1
    assert clean.header.redaction == {"patterns": ["acct-[0-9]+"], "placeholders": "numbered"}
    text = clean.dumps()
    assert b"[REDACTED:key:0123456789ab]" in text  # an old placeholder stays as it was
    assert b"ghp_" not in text


def test_normalize_masks_volatile_values() -> None:
    value = {
        "_meta": {"x": 1},
        "at": "2026-01-02T03:04:05.6Z",
        "id": "123e4567-e89b-12d3-a456-426614174000",
        "ttlMs": 60000,
        "cacheScope": "session",
    }
    assert normalize(value) == {"at": "<time>", "id": "<uuid>"}


def test_diff_pairs_by_fingerprint_and_reports_paths() -> None:
    call = msg("c2s", id=2, method="tools/call", params={"name": "add", "arguments": {"a": 1}})
    old = tape(
        {"era": "legacy", "protocol_version": "2025-06-18"},
        INIT,
        INIT_OK,
        call,
        msg("s2c", id=2, result={"v": 1, "_meta": {"t": 1}}),
        msg("c2s", id=3, method="prompts/list"),
        msg("s2c", id=3, result={"prompts": []}),
    )
    new = tape(
        {"era": "legacy", "protocol_version": "2025-11-25"},
        INIT,
        INIT_OK,
        msg("c2s", id=2, method="resources/list"),
        msg("s2c", id=2, result={"resources": []}),
        {**call, "message": {**call["message"], "id": 3}},
        msg("s2c", id=3, result={"v": 2, "_meta": {"t": 2}}),
    )
    result = diff_cassettes(old, new)
    assert result.header == (("protocol_version", "2025-06-18", "2025-11-25"),)
    assert result.removed == (("prompts/list", 6),)
    assert result.added == (("resources/list", 4),)
    [change] = result.changed
    assert (change.request, change.line_a, change.line_b) == ('tools/call add {"a":1}', 4, 6)
    assert change.paths == (("/result/v", 1, 2),)
    assert diff_cassettes(old, new, ignore=["/result"]).changed == ()
    assert diff_cassettes(old, old).same


def test_http_sessions_have_their_own_ids_and_answers_follow_their_stream() -> None:
    def on(event: dict[str, Any], stream: str, session: int | None = None) -> dict[str, Any]:
        meta: dict[str, Any] = {"stream": stream}
        if session is not None:
            meta["session"] = session
        return {**event, "meta": meta}

    http = tape(
        {"era": "legacy", "transport": "streamable-http"},
        on(INIT, "post-1"),  # the session is minted by the answer: the request has none
        on(INIT, "post-2"),  # a second client, same id, concurrently
        on(INIT_OK, "post-2", 2),
        on(INIT_OK, "post-1", 1),
        on(msg("c2s", id=2, method="tools/list"), "post-3", 1),
        on(msg("c2s", id=2, method="tools/list"), "post-4", 2),
        on(msg("s2c", id=None, error={"code": -32000, "message": "bad"}), "post-4", 2),
        on(msg("s2c", id=2, result={"tools": []}), "post-3", 1),
    )
    assert lint_cassette(http) == []


def test_a_cut_off_last_line_is_a_warning_saying_how_much_is_readable() -> None:
    base = {
        "kind": "header",
        "format": 1,
        "transport": "stdio",
        "recorder": {"name": "cassette-mcp", "version": "0"},
        "started_at": "2026-11-29T00:00:00Z",
    }
    whole = "\n".join(json.dumps(e) for e in (base, INIT, INIT_OK)) + "\n"
    cut = json.dumps(msg("c2s", id=2, method="tools/list"))[:25]  # no newline: a kill
    findings = lint_cassette(Cassette.loads(whole + cut, "t.jsonl"))
    assert [(f.line, f.code, f.severity) for f in findings] == [(4, "cut-off", "warning")]
    assert "the 2 frame(s) before it are readable" in findings[0].message
