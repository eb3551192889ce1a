"""show's timeline rows and HTML page on a hand-written cassette."""

from __future__ import annotations

from html.parser import HTMLParser

from cassette.tools.show import render_html, render_text, timeline
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
    text = render_text(TAPE, "t.jsonl", rows).splitlines()
    assert text[5].split()[:5] == [
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
