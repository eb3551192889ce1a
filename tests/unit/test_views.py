"""Where time went and what failed, on hand-written cassettes: calls, their sessions,
durations and outcomes (``cassette.core.tape.calls``); ``show``'s text, JSON and waterfall;
and colour (``cassette.core.words.colour``), decided by the environment and painted only on
text already made printable."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any

import pytest

from cassette.client.report import COLOURS as VERIFY_COLOURS
from cassette.client.report import Verdict, render
from cassette.core.tape.calls import MAIN, Group, calls, group_of, grouped
from cassette.core.words.colour import Rule, on, paint, painted, wanted
from cassette.core.words.text import printable
from cassette.tools.diff import COLOURS as DIFF_COLOURS
from cassette.tools.diff import diff_cassettes
from cassette.tools.diff import render as render_diff
from cassette.tools.show import TEXT_COLOURS, render_html, render_text, timeline
from cassette.tools.waterfall import seconds_text
from tests.unit.test_tools_lint import INIT, INIT_OK, msg, tape

SGR = re.compile("\x1b\\[[0-9;]*m")


def tool(msg_id: int, name: str, t: float, **arguments: object) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return msg("c2s", t=t, id=msg_id, method="tools/call", params=params)


def answer(msg_id: int, t: float, *, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": "done"}]}
    if is_error:
        result["isError"] = True
    return msg("s2c", t=t, id=msg_id, result=result)


def stderr(text: str, t: float) -> dict[str, Any]:
    return {"kind": "stderr", "t": t, "text": text}


#: a session with a slow tool, a tool error, a JSON-RPC error, an unanswered call, the
#: server's stderr; then a variant and a probe, each a session of its own
SESSION = tape(
    {"era": "legacy"},
    stderr("server: starting", 0.0),
    {**INIT, "t": 0.01},  # line 3
    {**INIT_OK, "t": 0.02},
    tool(2, "slow_report", 0.10),  # line 5
    stderr("server: building the report", 0.11),
    stderr("server: 12 stations", 0.12),
    answer(2, 1.60),  # line 8: 1.5 s
    tool(3, "flaky_upload", 1.61),  # line 9
    answer(3, 1.62, is_error=True),
    tool(4, "archive", 1.63),  # line 11
    msg("s2c", t=1.64, id=4, error={"code": -32602, "message": "Unknown tool: archive"}),
    tool(5, "hang", 1.65),  # line 13: never answered
    {**INIT, "t": 0.0, "meta": {"variant": "claude-code"}},  # line 14
    {**INIT_OK, "t": 0.3, "meta": {"variant": "claude-code"}},
    {**INIT, "t": 0.0, "meta": {"probe": "legacy"}},  # line 16
    {**INIT_OK, "t": 0.05, "meta": {"probe": "legacy"}},
    {"kind": "exit", "t": 1.70, "code": 0},
)


def test_each_event_belongs_to_one_session_and_the_main_one_comes_first() -> None:
    events = SESSION.events
    assert group_of(events[1]) == MAIN
    assert group_of(events[12]) == Group("variant", "claude-code")
    assert group_of(events[14]) == Group("probe", "legacy")
    # the recorder's legacy probe, kept as a variant, is a probe too
    kept = {**msg("s2c", id=1, result={}), "meta": {"variant": "legacy-probe"}}
    assert group_of(tape({"era": "modern"}, kept).events[0]) == Group("probe", "legacy-probe")
    # the exit and stderr carry no meta: the main recording's
    assert group_of(events[-1]) == MAIN
    assert group_of(events[0]) == MAIN
    groups = grouped(events)
    assert [g.label for g in groups] == ["main", "variant claude-code", "probe legacy"]
    assert [len(members) for members in groups.values()] == [13, 2, 2]


def test_a_call_knows_how_long_it_took_and_how_it_ended() -> None:
    found = {(call.group.label, call.line): call for call in calls(SESSION.events)}
    assert [(key, call.duration, call.outcome) for key, call in found.items()] == [
        (("main", 3), 0.01, "ok"),
        (("main", 5), 1.5, "ok"),
        (("main", 9), 0.01, "tool-error"),
        (("main", 11), 0.01, "error"),
        (("main", 13), None, "unanswered"),
        (("variant claude-code", 14), 0.3, "ok"),  # its id 1 pairs in its own session
        (("probe legacy", 16), 0.05, "ok"),
    ]
    assert found[("main", 11)].error_code == -32602
    assert [call.failed for call in found.values()] == [False, False, True, True] + [False] * 3


def test_a_legacy_servers_refusal_of_server_discover_is_no_failure() -> None:
    discover = msg("c2s", t=0.0, id=1, method="server/discover", params={})
    refused = msg("s2c", t=0.001, id=1, error={"code": -32601, "message": "Method not found"})
    (call,) = calls(tape({"era": "legacy"}, discover, refused).events)
    assert (call.outcome, call.failed) == ("declined", False)


def test_durations_read_as_a_person_says_them() -> None:
    assert [seconds_text(s) for s in (0.0004, 0.012, 0.9994, 1.5, 61.25)] == [
        "0.4ms",
        "12ms",
        "999ms",
        "1.500s",
        "61.250s",
    ]


def test_the_timeline_says_how_long_each_request_took_and_marks_failures() -> None:
    text = render_text(SESSION, "t.jsonl", timeline(SESSION)).splitlines()
    rows = {int(line.split()[0]): line for line in text if line[:5].strip().isdigit()}
    assert rows[5].endswith("  took 1.500s")
    assert rows[9].endswith("  took 10ms FAILED (tool error)")
    assert rows[10].split()[3:5] == ["tool", "error"]  # the answer, in words
    assert rows[10].endswith("  FAILED")
    assert rows[11].endswith("  took 10ms FAILED (error -32602)")
    assert rows[12].endswith("  FAILED")
    assert rows[13].endswith("  no answer")
    assert not rows[8].endswith("FAILED")
    assert (
        "main: 5 request(s) over 1.690s, 2 failed (lines 9, 11); slowest tools/call "
        + ("slow_report, 1.500s (line 5)")
        in text
    )
    # each variant apart, under its own heading, after the main one's rows; the
    # recorder's probes are no part of the timeline (show says them in a line of their own)
    headings = [line for line in text if line.startswith("-- ")]
    assert headings == ["-- main --", "-- variant claude-code --"]
    assert text.index("-- variant claude-code --") > text.index(rows[13])
    assert "variant claude-code: 1 request(s) over 300ms, 0 failed" in "\n".join(text)


def test_json_rows_carry_the_session_duration_outcome_and_answer() -> None:
    data = {row.line: row.as_data() for row in timeline(SESSION)}
    assert json.loads(json.dumps(data[5])) == {
        "line": 5,
        "t": 0.1,
        "dir": "c2s",
        "role": "request",
        "what": "tools/call slow_report",
        "id": 2,
        "size": data[5]["size"],
        "group": "main",
        "took": 1.5,
        "outcome": "ok",
        "answer": 8,
    }
    assert (data[10]["what"], data[10]["outcome"], data[10]["took"]) == (
        "tool error",
        "tool-error",
        None,
    )
    assert (data[13]["outcome"], data[13]["answer"]) == ("unanswered", None)
    assert data[14]["group"] == "variant claude-code"
    assert data[2]["outcome"] is None  # stderr is no call


class _Page(HTMLParser):
    """Each element's tag and attributes, and the text inside each waterfall row."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def having(self, cls: str) -> list[dict[str, str | None]]:
        return [a for _, a in self.elements if cls in (a.get("class") or "").split()]


def _width(style: str | None) -> float:
    found = re.search(r"width:([\d.]+)%", style or "")
    assert found is not None
    return float(found.group(1))


def test_the_page_draws_a_waterfall_per_session_with_failures_marked() -> None:
    page = render_html(SESSION, "t.jsonl")
    parsed = _Page()
    parsed.feed(page)
    sections = parsed.having("waterfall")
    assert [s["data-group"] for s in sections] == ["main", "variant claude-code", "probe legacy"]
    rows = parsed.having("wf-row")
    assert [(r["data-line"], r["data-outcome"]) for r in rows[:5]] == [
        ("3", "ok"),
        ("5", "ok"),
        ("9", "tool-error"),
        ("11", "error"),
        ("13", "unanswered"),
    ]
    bars = [a for a in parsed.having("bar")]
    assert [b["class"] for b in bars[:5]] == [
        "bar ok",
        "bar ok",
        "bar failed",
        "bar failed",
        "bar unanswered",
    ]
    # on the main session's axis (3 ms to 1.70 s), the slow call takes most of it
    assert 85 < _width(bars[1]["style"]) < 92
    assert _width(bars[2]["style"]) < 1
    # words beside every bar, not colour alone
    assert '10ms <b class="fail">tool error</b>' in page
    assert '<b class="fail">error -32602</b>' in page
    assert '<b class="none">no answer</b>' in page
    assert all(b["aria-label"] for b in bars)
    # each row links to its message in the sequence diagram
    assert 'href="#line-9"' in page
    assert 'id="line-9"' in page


def test_the_page_folds_each_run_of_stderr_and_keeps_sessions_apart() -> None:
    page = render_html(SESSION, "t.jsonl")
    parsed = _Page()
    parsed.feed(page)
    folds = parsed.having("stderr")
    assert [(f["data-line"], f["data-lines"]) for f in folds] == [("2", "1"), ("6", "2")]
    assert all("open" not in fold for fold in folds)
    assert "server stderr: 2 lines" in page
    assert "server: 12 stations" in page  # the whole line, inside the fold
    # the sequence diagram: main and the variant (the probes are no part of the timeline)
    assert [a["class"] for t, a in parsed.elements if t == "h2" and a] == ["group"] * 2
    assert "probe legacy: 1 request(s) over 50ms" in page  # its own waterfall, apart
    assert [a["class"] for a in parsed.having("msg") if "tool-error" in (a["class"] or "")] == [
        "msg s2c response tool-error"
    ]
    assert not any(tag in ("script", "link", "img") for tag, _ in parsed.elements)


@pytest.mark.parametrize(
    ("choice", "environ", "tty", "windows", "expected"),
    [
        ("auto", {}, True, False, True),
        ("auto", {}, False, False, False),
        ("auto", {"NO_COLOR": "1"}, True, False, False),
        ("auto", {"NO_COLOR": ""}, True, False, True),  # empty: not set, as no-color.org says
        ("auto", {"FORCE_COLOR": "1"}, False, False, True),
        ("auto", {"FORCE_COLOR": "1", "NO_COLOR": "1"}, True, False, False),
        ("auto", {"TERM": "dumb"}, True, False, False),
        ("always", {"NO_COLOR": "1"}, False, False, True),  # the command line wins
        ("never", {"FORCE_COLOR": "1"}, True, False, False),
        ("auto", {}, True, True, False),  # the classic Windows console
        ("auto", {"WT_SESSION": "x"}, True, True, True),  # Windows Terminal
    ],
)
def test_colour_is_wanted_as_the_conventions_say(
    choice: str, environ: dict[str, str], tty: bool, windows: bool, expected: bool
) -> None:
    assert wanted(choice, environ, tty, windows=windows) is expected


def test_a_stream_that_cannot_say_is_no_terminal() -> None:
    class Closed:
        def isatty(self) -> bool:
            raise ValueError("I/O operation on closed file")

    assert on(Closed(), {}) is False
    assert on(object(), {}) is False
    assert on(object(), {"FORCE_COLOR": "1"}) is True


def test_only_our_escapes_reach_the_terminal() -> None:
    recorded = "tool \x1b[2J\x1b]0;owned\x07 FAILED (tool error)"
    shown = painted(printable(recorded), (Rule.of(r"(FAILED \([^)]*\))$", "red"),))
    assert shown == "tool \\u001b[2J\\u001b]0;owned\\u0007 \x1b[31mFAILED (tool error)\x1b[0m"
    assert SGR.sub("", shown) == printable(recorded)  # colour adds, never changes
    assert paint("", "red") == ""
    # overlapping rules: the first wins
    both = painted("abc", (Rule.of("(ab)", "red"), Rule.of("(bc)", "green")))
    assert both == "\x1b[31mab\x1b[0mc"


def test_show_text_paints_failures_red_and_nothing_else_changes() -> None:
    text = printable(render_text(SESSION, "t.jsonl", timeline(SESSION)), lines=True)
    shown = painted(text, TEXT_COLOURS)
    assert SGR.sub("", shown) == text
    red = re.findall("\x1b\\[31m(.*?)\x1b\\[0m", shown)
    assert red == [
        "FAILED (tool error)",
        "FAILED",
        "FAILED (error -32602)",
        "FAILED",
        "2 failed",
    ]
    assert re.findall("\x1b\\[33m(.*?)\x1b\\[0m", shown) == ["no answer"]


def test_verify_and_diff_reports_are_painted_by_their_own_grammar() -> None:
    verdicts = [
        Verdict(3, "tools/call a", "MATCH"),
        Verdict(5, "tools/call b", "CHANGED", (("/result/x", 1, 2),)),
        Verdict(7, "tools/call c", "ERROR-SHAPE-CHANGED"),
    ]
    report = render("t.jsonl", verdicts)
    shown = painted(report, VERIFY_COLOURS)
    assert SGR.sub("", shown) == report
    assert re.findall("\x1b\\[31m(.*?)\x1b\\[0m", shown) == [
        "CHANGED",
        "ERROR-SHAPE-CHANGED",
        "1 CHANGED",
        "1 ERROR-SHAPE-CHANGED",
    ]
    assert re.findall("\x1b\\[32m(.*?)\x1b\\[0m", shown) == ["MATCH", "1 MATCH"]
    old = tape({"era": "legacy"}, INIT, INIT_OK, tool(2, "a", 0.1), answer(2, 0.2))
    new = tape({"era": "legacy"}, INIT, INIT_OK, tool(2, "b", 0.1), answer(2, 0.2))
    text = render_diff("a.jsonl", "b.jsonl", diff_cassettes(old, new), "text")
    shown = painted(text, DIFF_COLOURS)
    assert re.findall("\x1b\\[31m(.*?)\x1b\\[0m", shown) == ["- tools/call a  (a.jsonl:4)"]
    assert re.findall("\x1b\\[32m(.*?)\x1b\\[0m", shown) == ["+ tools/call b  (b.jsonl:4)"]
