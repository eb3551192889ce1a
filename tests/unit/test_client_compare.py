"""How verify compares a live answer with the recorded one: volatile keys at any depth,
JSON inside text compared as JSON, ignored pointers, and the report text."""

from __future__ import annotations

import json

import pytest

from cassette.client.compare import Ignores, classify, normalize
from cassette.client.report import Verdict, VerifyReport, render
from cassette.core.words.jsondiff import MISSING


def result(value: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "result": value}


def text_result(payload: object) -> dict[str, object]:
    return result({"content": [{"type": "text", "text": json.dumps(payload)}]})


def test_json_in_text_is_compared_as_json_and_reported_inside_the_text() -> None:
    recorded = text_result({"city": "Oslo", "temp": 4, "tags": ["cold"]})
    reordered = result(
        {"content": [{"type": "text", "text": '{"tags": ["cold"], "temp": 4, "city": "Oslo"}'}]}
    )
    assert classify(recorded, reordered)[0] == "MATCH"

    status, paths, _ = classify(recorded, text_result({"city": "Oslo", "temp": 5, "tags": []}))
    assert status == "CHANGED"
    assert paths == (
        ("/result/content/0/text#/tags/0", "cold", MISSING),
        ("/result/content/0/text#/temp", 4, 5),
    )


def test_a_text_that_stops_being_json_is_one_changed_text_shown_as_text() -> None:
    recorded = text_result({"a": 1})
    live = result({"content": [{"type": "text", "text": "not json any more"}]})
    status, paths, _ = classify(recorded, live)
    assert status == "CHANGED"
    assert paths == (("/result/content/0/text", '{"a":1}', "not json any more"),)


def test_ignored_keys_go_at_any_depth_inside_json_text_too() -> None:
    recorded = result(
        {
            "generatedAt": 1.5,
            "content": [{"type": "text", "text": json.dumps({"generatedAt": 1, "n": 2})}],
            "nested": {"deep": [{"generatedAt": "x"}]},
        }
    )
    live = result(
        {
            "generatedAt": 9.5,
            "content": [{"type": "text", "text": json.dumps({"generatedAt": 7, "n": 2})}],
            "nested": {"deep": [{"generatedAt": "y"}]},
        }
    )
    assert classify(recorded, live)[0] == "CHANGED"
    assert classify(recorded, live, Ignores(keys=["generatedAt"])) == ("MATCH", (), "")


def test_an_ignored_pointer_covers_the_json_inside_a_text() -> None:
    recorded, live = text_result({"n": 1}), text_result({"n": 2})
    assert classify(recorded, live, Ignores(["/result/content/0/text"]))[0] == "MATCH"
    assert classify(recorded, live, Ignores(["/result/content/0/text#/n"]))[0] == "MATCH"
    assert classify(recorded, live, Ignores(["/result/content/0/tex"]))[0] == "CHANGED"


def test_timestamps_uuids_and_meta_are_normalized_as_before() -> None:
    value = {
        "_meta": {"x": 1},
        "at": "2026-01-02T03:04:05Z",
        "id": "0b3c8a4e-8a77-4c2e-9f7c-1d2e3f405162",
    }
    assert normalize(value) == {"at": "<time>", "id": "<uuid>"}


def test_ignores_merge_project_and_command_line() -> None:
    merged = Ignores(["/a"], ["k"]).merged(["/b", "/a"], ["j"])
    assert merged == Ignores(["/a", "/b"], ["k", "j"])


def test_the_report_fails_with_the_diff_and_an_update_accepts_it() -> None:
    changed = Verdict(6, 'tools/call greet {"who":"Ada"}', "CHANGED", (("/result/x", 1, 2),))
    report = VerifyReport("t.jsonl", (Verdict(4, "tools/list", "MATCH"), changed))
    assert not report.ok
    assert report.failures == (changed,)
    with pytest.raises(AssertionError) as raised:
        report.assert_ok()
    assert "/result/x: 1 -> 2" in str(raised.value)
    assert report.text().splitlines()[-1] == "t.jsonl: 1 CHANGED, 1 MATCH"

    updated = VerifyReport("t.jsonl", report.verdicts, updated=True)
    assert updated.ok
    updated.assert_ok()
    assert updated.text().splitlines()[-1] == "t.jsonl: updated: 1 change(s) written"

    kept = VerifyReport("t.jsonl", report.verdicts, updated=True, kept=("line 6: no answer",))
    assert not kept.ok
    assert kept.text().splitlines()[-1] == "t.jsonl: not updated: line 6: no answer"


def test_render_is_the_verify_report_format() -> None:
    text = render("d.jsonl", [Verdict(8, "tools/call fail", "ERROR-SHAPE-CHANGED", (), "why")])
    assert text.splitlines() == [
        "ERROR-SHAPE-CHANGED tools/call fail  (d.jsonl:8)",
        "    why",
        "d.jsonl: 1 ERROR-SHAPE-CHANGED",
    ]
