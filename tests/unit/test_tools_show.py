"""show's timeline rows and HTML page on a hand-written cassette."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

from cassette import Cassette
from cassette.tools.show import misses_against, render_html, render_text, timeline
from cassette.tools.verify import progress_bar, terminal_progress
from tests.unit.test_tools_lint import INIT, INIT_OK, msg, tape

TAPE = tape(
    {"era": "legacy", "transport": "streamable-http"},
    {"kind": "http", "t": 0.01, "method": "GET", "stream": "get-1", "status": 200},
    INIT,
    {"kind": "raw", "t": 0.02, "dir": "s2c", "text": "", "meta": {"stream": "post-1", "sse": True}},
    INIT_OK,
    msg("s2c", t=0.5, id=0, method="sampling/createMessage", params={"x": "<script>"}),
    msg("c2s", t=0.6, id=0, error={"code": -1, "message": "declined"}),
)


def rows_of(text: str) -> list[str]:
    """The timeline's rows and closing lines: the title and its per-session lines
    (``  session ...``, which clients each session fits) left out."""
    lines = text.splitlines()
    return [line for line in lines[1:] if not line.startswith("  session ")]


def test_rows_name_what_each_event_is() -> None:
    rows = timeline(TAPE)
    assert [(r.line, r.dir, r.role, r.what) for r in rows] == [
        (2, "", "http", "HTTP GET get-1 200"),
        (3, "c2s", "request", "initialize"),
        (4, "s2c", "raw", "(SSE event with no data)"),
        (5, "s2c", "response", "result"),
        (6, "s2c", "server-request", "sampling/createMessage"),
        (7, "c2s", "error", "error -1 declined"),
    ]
    text = rows_of(render_text(TAPE, "t.jsonl", rows))
    assert text[4].split()[:5] == [
        "6",
        "+0.500s",
        "<-",
        "sampling/createMessage",
        "(server-initiated)",
    ]


def test_html_escapes_message_content() -> None:
    page = render_html(TAPE, "t.jsonl")
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    tags: list[str] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            tags.append(tag)

    Tags().feed(page)
    assert tags.count("details") == 5  # four messages and the raw SSE event
    assert "script" not in tags


def call(direction: str, msg_id: int, tool: str, **arguments: object) -> dict[str, object]:
    return msg(
        direction, id=msg_id, method="tools/call", params={"name": tool, "arguments": arguments}
    )


RECORDED = tape(
    {"era": "legacy"},
    INIT,
    INIT_OK,
    call("c2s", 2, "echo", message="a"),
    msg("s2c", id=2, result={"content": []}),
    call("c2s", 3, "echo", message="a"),
    msg("s2c", id=3, result={"content": []}),
    call("c2s", 4, "add", a=1),
    msg("s2c", id=4, result={"content": []}),
)


def session(*calls: dict[str, object]) -> Cassette:
    return tape({"era": "legacy"}, INIT, INIT_OK, *calls)


def test_against_a_session_that_replays_cleanly_marks_what_it_left_unplayed() -> None:
    result = misses_against(RECORDED, session(call("c2s", 2, "echo", message="a")))
    assert result.misses == ()
    assert result.unplayed == {6, 8}  # the second echo and the add
    rows = timeline(RECORDED)
    text = ["", *rows_of(render_text(RECORDED, "t.jsonl", rows, result))]
    assert text[3].split()[3:6] == ["tools/call", "echo", "id=2"]  # played: no mark
    assert text[5].split()[3:6] == ["tools/call", "echo", "[unplayed]"]
    assert text[-1] == "against t.jsonl (strategy default): 0 miss(es), 2 of 4 recorded " + (
        "request(s) of t.jsonl unplayed"
    )
    page = render_html(RECORDED, "t.jsonl", result)
    assert page.count('<span class="tag">unplayed</span>') == 2


def test_misses_depend_on_the_strategy() -> None:
    other = session(
        call("c2s", 2, "echo", message="a"),
        call("c2s", 3, "echo", message="a"),
        call("c2s", 4, "echo", message="a"),  # a third time: recorded twice only
        call("c2s", 5, "add", a=2),  # other arguments
    )
    strict = misses_against(RECORDED, other, "strict")
    assert [(m.line, m.kind, m.closest_line) for m in strict.misses] == [
        (6, "already-played", 6),
        (7, "not-recorded", 8),
    ]
    assert strict.misses[1].request == 'tools/call add {"a":2}'
    assert "arguments differ at /a: recorded 1, received 2" in strict.misses[1].summary
    assert strict.as_data()["misses"][0]["summary"].startswith('tools/call "echo" with these')
    loose = misses_against(RECORDED, other, "loose")
    assert [m.line for m in loose.misses] == [6]  # the add falls back to the recorded add
    assert loose.unplayed == frozenset()
    page = render_html(RECORDED, "t.jsonl", strict)
    assert page.count("<li data-line=") == 2


def test_progress_bar_is_a_pure_rendering() -> None:
    assert progress_bar(0, 40) == "verify [....................] 0/40"
    assert progress_bar(12, 40) == "verify [######..............] 12/40"
    assert progress_bar(40, 40) == "verify [####################] 40/40"
    assert progress_bar(0, 0) == "verify [####################] 0/0"
    assert progress_bar(3, 4, width=4) == "verify [###.] 3/4"


def test_progress_draws_in_place_on_a_terminal_and_nothing_elsewhere() -> None:
    import io

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert terminal_progress(io.StringIO()) is None
    screen = Terminal()
    draw = terminal_progress(screen)
    assert draw is not None
    draw(1, 2)
    draw(2, 2)
    assert screen.getvalue() == (
        "\rverify [##########..........] 1/2\rverify [####################] 2/2\n"
    )


def test_modern_requests_carry_their_routing_headers_over_http() -> None:
    pytest.importorskip("httpx")  # the http extra
    from cassette.transports.http.streamable_http import modern_headers

    envelope = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "é", **envelope}}
    ).encode()
    assert modern_headers(body) == {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "=?base64?w6k=?=",
    }
    read = {"jsonrpc": "2.0", "id": 2, "method": "resources/read"}
    read["params"] = {"uri": "memo://x", **envelope}
    assert modern_headers(json.dumps(read).encode())["mcp-name"] == "memo://x"
    legacy = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}
    assert modern_headers(json.dumps(legacy).encode()) == {}
    assert modern_headers(b"not json") == {}
