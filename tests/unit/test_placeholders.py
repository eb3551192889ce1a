"""Numbered placeholders: the same session gives the same bytes, an appended session
numbers on after the cassette's placeholders, typed sentinels stay valid for their schema
and numbered, and ``cassette diff`` compares placeholders by rule (old random ones too)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cassette import Cassette
from cassette.core.recording.recorder import Recorder
from cassette.core.redaction.redacted import (
    canonical,
    check_header,
    has_placeholder,
    highest_numbers,
    is_placeholder,
    make_placeholder,
    numbered_placeholder,
)
from cassette.core.redaction.redactor import Redactor
from cassette.core.redaction.schemas import string_sentinel
from cassette.core.replay.wildcards import mask_like
from cassette.core.tape.codec import encode_line
from cassette.modes.episode import redactor_of
from cassette.store.gate import RedactOptions, joined, numbered_after, policy
from cassette.tools.diff import diff_cassettes
from cassette.tools.redact_cmd import redact_cassette

GH = ["ghp_" + c * 36 for c in "ABCDEFGH"]


def test_numbers_follow_first_appearance_per_rule_never_learning_order() -> None:
    # the environment's values are learnt first and mostly never appear: they take no number
    redactor = Redactor(literals=("never-shown-value-1", "shown-later-value-2"))
    session = redactor.session()
    assert session.text(f"a {GH[0]} b {GH[1]} c {GH[0]}") == (
        "a [REDACTED:github:1] b [REDACTED:github:2] c [REDACTED:github:1]"
    )
    assert session.text("password=hunter2hunter2") == "password=[REDACTED:assignment:1]"
    assert session.text("env shown-later-value-2") == "env [REDACTED:env:1]"


def test_an_appended_session_numbers_on_after_the_cassette() -> None:
    held = ["x [REDACTED:github:2] y", "[REDACTED:github:7]", "%5BREDACTED:url-credentials:3%5D"]
    held += ["old [REDACTED:github:3f9a0c1d2e4b]", "redacted-4@example.invalid", "+15550100009"]
    assert highest_numbers(held) == {"github": 7, "url-credentials": 3, "email": 4, "phone": 9}
    later = Redactor(pii=True).numbered_after(held).session()
    # the first token this session meets is not the cassette's github:1 or github:2
    assert later.text(GH[0]) == "[REDACTED:github:8]"
    assert later.text("ada@corp.example.com") == "redacted-5@example.invalid"
    assert later.text("call +47 912 34 567") == "call +15550100010"
    # a sentinel that names no rule counts as a key number
    assert highest_numbers([], ["tk_0000000000000012", "redacted-env-3@example.invalid"]) == {
        "key": 12,
        "env": 3,
    }


def _recorded(tmp_path: Path, texts: list[str]) -> Path:
    rec = Recorder(transport="stdio", started_at="x", redactor=Redactor())
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    ok = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18"}}
    records: list[Any] = []
    records += rec.observe("c2s", (json.dumps(init) + "\n").encode(), 0.0)
    records += rec.observe("s2c", (json.dumps(ok) + "\n").encode(), 0.0)
    for n, text in enumerate(texts, 2):
        call = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "t"}}
        answer = {
            "jsonrpc": "2.0",
            "id": n,
            "result": {"content": [{"type": "text", "text": text}]},
        }
        records += rec.observe("c2s", (json.dumps(call) + "\n").encode(), 0.1)
        records += rec.observe("s2c", (json.dumps(answer) + "\n").encode(), 0.2)
    records += rec.close()
    path = tmp_path / f"t{len(list(tmp_path.iterdir()))}.jsonl"
    path.write_bytes(b"".join(encode_line(r) for r in records))
    return path


def _cassette(tmp_path: Path, texts: list[str]) -> Cassette:
    return Cassette.load(_recorded(tmp_path, texts))


def test_every_joining_writer_numbers_after_the_cassette(tmp_path: Path) -> None:
    tape = _cassette(tmp_path, [f"signed in with {GH[0]}", f"and {GH[1]}"])
    assert "[REDACTED:github:2]" in json.dumps(list(tape.messages("s2c")))
    appended = redactor_of(tape, policy(settings={}))  # new_episodes, the extension
    assert appended is not None
    assert appended.session().text(GH[2]) == "[REDACTED:github:3]"
    header = tape.header
    verified = joined(policy(settings={}), header.redaction, events=(header, *tape.events))
    assert verified is not None
    assert verified.session().text(GH[5]) == "[REDACTED:github:3]"


def test_the_same_session_recorded_with_other_secrets_gives_the_same_bytes(
    tmp_path: Path,
) -> None:
    one = _cassette(tmp_path, [f"token {GH[0]} again {GH[0]}", f"then {GH[1]}"])
    two = _cassette(tmp_path, [f"token {GH[2]} again {GH[2]}", f"then {GH[3]}"])
    assert [e.message for e in one.events if e.kind == "message"] == [
        e.message for e in two.events if e.kind == "message"
    ]


def test_typed_sentinels_stay_valid_and_carry_the_key_number() -> None:
    holder = make_placeholder("key", 3)
    assert string_sentinel(holder, {"pattern": "^ak_[0-9a-f]{16}$"}) == "ak_0000000000000003"
    assert string_sentinel(holder, {"pattern": "^[A-Z]{3}$"}) == "AAA"  # no digits allowed
    assert string_sentinel(holder, {"format": "email"}) == "redacted-key-3@example.invalid"
    assert string_sentinel(holder, {"format": "uri"}) == "https://redacted-key-3.invalid/"
    assert string_sentinel(holder, {"format": "uuid"}) == "00000000-0000-0000-0000-000000000003"
    assert string_sentinel(holder, {"format": "date"}) == "1970-01-01"  # fixed: no room
    # a value of another rule repeats no key number: its sentinel stays the fixed example
    assert string_sentinel("[REDACTED:env:3]", {"pattern": "^ak_[0-9a-f]{16}$"}) == (
        "ak_0000000000000000"
    )
    email = make_placeholder("email", 2)
    assert string_sentinel(email, {"format": "email"}) == email  # an address already
    # an old random holder: the fixed sentinels of before
    assert string_sentinel("[REDACTED:key:3f9a0c1d2e4b]", {"format": "email"}) == (
        "redacted@example.invalid"
    )


def test_placeholders_of_every_form_are_recognised_and_match_any_live_value() -> None:
    for holder in ("[REDACTED:key:12]", "redacted-3@example.invalid", "+15550100003"):
        assert is_placeholder(holder)
        assert numbered_placeholder(holder) is not None
    assert is_placeholder("[REDACTED:key:3f9a0c1d2e4b]")  # old random ones still read
    assert not is_placeholder("+15550100003 ")
    assert not has_placeholder("ada@example.invalid and +4791234567")
    recorded = {"to": "redacted-1@example.invalid", "note": "call +15550100001 today"}
    live = {"to": "bob@corp.example.com", "note": "call +47 912 34 567 today"}
    assert mask_like(recorded, live) == recorded


def test_the_header_says_numbered_and_older_headers_still_read() -> None:
    assert Redactor().describe() == {"placeholders": "numbered"}
    assert Redactor(pii=True).describe() == {"placeholders": "numbered", "pii": True}
    assert check_header({"placeholders": "random"}) == []
    assert check_header({"placeholders": "numbered", "pii": True}) == []
    assert check_header({"placeholders": "hmac"}) != []
    assert check_header({"pii": "yes"}) == ["redaction.pii must be true or false"]


def test_a_cassette_recorded_with_pii_keeps_the_rules_for_what_joins_it() -> None:
    base = policy(settings={})
    assert base is not None
    assert not base.pii
    widened = joined(base, {"placeholders": "numbered", "pii": True})
    assert widened is not None
    assert widened.pii
    assert policy(RedactOptions(pii=True), settings={}).pii  # type: ignore[union-attr]
    assert policy(settings={"redact": {"pii": True}}).pii  # type: ignore[union-attr]
    assert numbered_after(None, []) is None


def test_canonical_reduces_every_placeholder_to_its_rule() -> None:
    assert canonical("a [REDACTED:key:3] b [REDACTED:key:3f9a0c1d2e4b]") == (
        "a [REDACTED:key] b [REDACTED:key]"
    )
    assert canonical("redacted-7@example.invalid") == "redacted@example.invalid"
    assert canonical("plain") == "plain"


def _old_random(path: Path) -> Path:
    """The same cassette as an older version wrote it: random placeholders, fixed sentinels."""
    text = path.read_text()
    for n, token in enumerate(["3f9a0c1d2e4b", "0a1b2c3d4e5f"], 1):
        text = text.replace(f":{n}]", f":{token}]")
    old = path.with_name("old.jsonl")
    old.write_text(text.replace('"placeholders":"numbered"', '"placeholders":"random"'))
    return old


def test_diff_never_reports_a_placeholder_change(tmp_path: Path) -> None:
    first = _recorded(tmp_path, [f"token {GH[0]}", f"then {GH[1]}"])
    # another recording met one more secret first: every later number moved on
    moved = _recorded(tmp_path, [f"token {GH[2]}", f"then {GH[3]}"])
    text = moved.read_text().replace("github:2", "github:9").replace("github:1", "github:4")
    moved.write_text(text)
    assert diff_cassettes(first, Cassette.load(moved)).same
    old = _old_random(first)
    assert "[REDACTED:github:3f9a0c1d2e4b]" in old.read_text()
    assert diff_cassettes(Cassette.load(old), first).same  # an old cassette against a new one
    # a secret that appears where a plain value was is a change
    other = _recorded(tmp_path, [f"token {GH[0]}", "then nothing"])
    found = diff_cassettes(first, other)
    assert not found.same
    assert [p for c in found.changed for p, _, _ in c.paths] == ["/result/content/0/text"]


def test_diff_treats_typed_sentinels_at_listed_positions_alike(tmp_path: Path) -> None:
    first = _recorded(tmp_path, ["x"])
    text = first.read_text().splitlines()
    answer = json.loads(text[-1])
    answer["message"]["result"]["structuredContent"] = {"token": "tk_0000000000000001"}
    answer["redacted"] = ["/result/structuredContent/token"]
    first.write_text("\n".join([*text[:-1], json.dumps(answer)]) + "\n")
    answer["message"]["result"]["structuredContent"] = {"token": "tk_0000000000000000"}
    second = tmp_path / "second.jsonl"
    second.write_text("\n".join([*text[:-1], json.dumps(answer)]) + "\n")
    assert diff_cassettes(first, second).same


def test_redact_o_keeps_placeholders_and_numbers_a_new_find_after_them(tmp_path: Path) -> None:
    path = _recorded(tmp_path, [f"token {GH[0]}", "then LEAK"])
    path.write_text(path.read_text().replace("LEAK", GH[1]))  # what an older version missed
    redacted, changed = redact_cassette(path)
    text = json.dumps(list(redacted.messages()))
    assert changed == 1
    assert "token [REDACTED:github:1]" in text
    assert "then [REDACTED:github:2]" in text
