"""``cassette show``: a cassette as a timeline, and as an HTML page of waterfalls and a
sequence diagram.

The timeline is one row per event: file line, time offset, a direction arrow (``->``
client to server, ``<-`` server to client), what the message is (method; ``result``,
``tool error`` or ``error CODE``), its id, and its size. A request's row ends with how
long its answer took, and ``FAILED (...)`` in words when the call failed: a result with
``isError: true`` is a failure JSON-RPC calls a success, and a person scanning for a slow
or broken tool should not have to subtract timestamps or open answers to find it.
Server-initiated requests and notifications are marked, because they are what a
request/response view of MCP hides. Each session of the cassette (the person's own, then
variants, then the recorder's probes: ``cassette.core.tape.calls.group_of``) is listed apart,
with a line on its requests. On a terminal the marks are coloured, after the text is made
printable (``cassette.core.words.colour``), so the plain text is what it always was.

The HTML page is self-contained (inline CSS, no script, no network): first a waterfall
per session (``cassette.tools.waterfall``), then the sequence diagram: two lanes, client
and server, with an arrow per message across them; every message is a ``<details>``
element whose body is the pretty-printed JSON, and each run of server stderr is one
folded ``<details>`` (a chatty server would push the session off the screen). Collapsed,
a request shows a one-line preview of its arguments and an answer the method it
answers; an "expand all" checkbox opens every message (CSS only: ``::details-content``);
with ``--against``, each miss is shown under the recording closest to it
(``cassette.tools.against``). It is written whole or not at all.

Recorded text is shown, never obeyed: in the timeline, the JSON and the page alike,
control characters (a server's terminal escapes), bidirectional overrides and lone
surrogates appear as their escapes (``cassette.core.words.text``).
"""

from __future__ import annotations

import argparse
import html
import json
import os
from collections.abc import Mapping
from typing import Any, Final

import attrs

from cassette.core.eras.fits import sessions
from cassette.core.eras.variants import probe_of, split_all
from cassette.core.replay.starts import count_starts, split_starts
from cassette.core.tape.calls import calls, group_of, grouped
from cassette.core.wire.jsonrpc import Kind, pretty
from cassette.core.wire.meta import SSE
from cassette.core.wire.model import (
    Event,
    ExitEvent,
    HttpEvent,
    MessageEvent,
    RawEvent,
    StderrEvent,
)
from cassette.core.words.colour import Rule
from cassette.core.words.text import printable
from cassette.errors import UsageError
from cassette.store.files import write_atomic
from cassette.store.storage import Cassette
from cassette.tools._common import emit, kind_of, size_of
from cassette.tools.against import (
    Against,
    FaultHit,
    Miss,
    faults_preview,
    misses_against,
    session_of,
)
from cassette.tools.waterfall import CSS as WATERFALL_CSS
from cassette.tools.waterfall import outcome_words, seconds_text, waterfall

__all__ = [
    "TEXT_COLOURS",
    "Against",
    "FaultHit",
    "Miss",
    "Row",
    "faults_preview",
    "main",
    "misses_against",
    "render_html",
    "render_text",
    "timeline",
]

_ARROWS = {"c2s": "->", "s2c": "<-"}


@attrs.frozen(slots=True)
class Row:
    """One timeline row; ``role`` says what the event is in the session."""

    line: int
    t: float
    dir: str  # c2s, s2c or "" for events that are not messages
    role: str  # request, notification, response, error, server-request, ..., stderr, exit
    what: str
    id: Any
    size: int
    event: Event = attrs.field(eq=False, repr=False)
    group: str = "main"  # the session it belongs to (``cassette.core.tape.calls.Group.label``)
    took: float | None = None  # a request: seconds until its answer
    outcome: str = ""  # a call's request and answer: ok, tool-error, error, declined, unanswered
    answer: int | None = None  # a request: its answer's line
    failure: str = ""  # a request: how it ended, in words (``waterfall.outcome_words``)

    def as_data(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "t": self.t,
            "dir": self.dir,
            "role": self.role,
            "what": self.what,
            "id": self.id,
            "size": self.size,
            "group": self.group,
            "took": self.took,
            "outcome": self.outcome or None,
            "answer": self.answer,
        }


def _message_row(event: MessageEvent) -> Row:
    message = event.message
    kind = kind_of(message)
    server = event.dir == "s2c"
    if kind is Kind.REQUEST:
        role, what = ("server-request" if server else "request"), str(message["method"])
    elif kind is Kind.NOTIFICATION:
        role = "server-notification" if server else "notification"
        what = str(message["method"])
    elif kind is Kind.ERROR:
        error = message.get("error") or {}
        role, what = "error", f"error {error.get('code')} {error.get('message', '')}".strip()
    elif kind is Kind.RESPONSE:
        role, what = "response", "result"
    else:
        role, what = "invalid", "not JSON-RPC"
    if what == "tools/call" and isinstance(message.get("params"), dict):
        what += f" {message['params'].get('name')}"
    return Row(
        event.seq + 1,
        event.t,
        event.dir,
        role,
        printable(what),
        message.get("id"),
        size_of(event),
        event,
    )


def _row(event: Event) -> Row:
    if isinstance(event, MessageEvent):
        return _message_row(event)
    if isinstance(event, RawEvent):
        if event.text is None:
            text = "(binary)"
        elif not event.text.strip():
            sse = isinstance(event.meta, Mapping) and event.meta.get(SSE)
            text = "(SSE event with no data)" if sse else "(empty line)"
        else:
            text = event.text.strip()
        what = _cut(printable(text))
        return Row(event.seq + 1, event.t, event.dir, "raw", what, None, size_of(event), event)
    if isinstance(event, StderrEvent):
        what = _cut(printable(event.text))
        return Row(event.seq + 1, event.t, "", "stderr", what, None, size_of(event), event)
    if isinstance(event, ExitEvent):
        return Row(event.seq + 1, event.t, "", "exit", f"exit {event.code}", None, 0, event)
    assert isinstance(event, HttpEvent)
    what = printable(f"HTTP {event.method} {event.stream} {event.status}")
    return Row(event.seq + 1, event.t, "", "http", what, None, 0, event)


def _cut(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def timeline(tape: Cassette | str | os.PathLike[str]) -> list[Row]:
    """The cassette's events as timeline rows, in file order: each with its session, a
    request with how long its answer took and how the call ended, and an answer with
    that ending too (a result with ``isError: true`` reads ``tool error``). The
    recorder's probes are no part of it (``probes``)."""
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    kept = [event for event in cassette.events if probe_of(event) is None]
    rows = {event.seq: _row(event) for event in kept}
    for seq, row in rows.items():
        rows[seq] = attrs.evolve(row, group=group_of(row.event).label)
    for call in calls(kept):
        request = rows[call.request.seq]
        rows[call.request.seq] = attrs.evolve(
            request,
            took=call.duration,
            outcome=call.outcome,
            answer=call.answer_line,
            failure=outcome_words(call),
        )
        if call.answer is not None:
            answer = rows[call.answer.seq]
            what = "tool error" if call.outcome == "tool-error" else answer.what
            rows[call.answer.seq] = attrs.evolve(answer, outcome=call.outcome, what=what)
    return list(rows.values())


def probes(tape: Cassette) -> dict[str, list[int]]:
    """The recorder's probes (``cassette.core.eras.surface``): each one's lines, by name."""
    return {name: [e.seq + 1 for e in events] for name, events in split_all(tape.events)[2].items()}


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB"


def _title(cassette: Cassette, source: str) -> list[str]:
    """The cassette in a line (what it recorded, which clients it serves), then one line
    per session: the clients it fits (``cassette.core.eras.fits``)."""
    h = cassette.header
    clients, per_session = sessions(cassette.era, cassette.events)
    title = (
        f"{source}: {h.transport} recording, {cassette.era} era, "
        f"{h.protocol_version or 'unknown protocol'}, started {h.started_at}; {clients}"
    )
    starts = split_starts(cassette)
    if len(starts) > 1:
        lines = ", ".join(str(s.events[0].seq + 1) for s in starts if s.events)
        per_session = [
            *per_session,
            f"{len(starts)} server starts (the client started the server again after its "
            f"first session; replays serve them in order), from lines {lines}",
        ]
    return [printable(title), *(printable(f"  {line}") for line in per_session)]


def render_text(
    cassette: Cassette, source: str, rows: list[Row], against: Against | None = None
) -> str:
    """The title, then each session's rows (the main recording's first, each other
    session under a heading of its own) and a line on its requests: how many, over how
    long, which failed, and the slowest."""
    lines = _title(cassette, source)
    unplayed = against.unplayed if against is not None else frozenset()
    groups = _row_groups(cassette, rows)
    for group, members in groups.items():
        if len(groups) > 1:
            lines.append(f"-- {group} --")
        lines += [_text_row(row, row.line in unplayed) for row in members]
        summary = _requests_line(group, members)
        if summary:
            lines.append(summary)
    if against is not None:
        lines.append(against.text(source))
    return "\n".join(lines)


def _row_groups(cassette: Cassette, rows: list[Row]) -> dict[str, list[Row]]:
    """``rows`` by session, in the order ``cassette.core.tape.calls.grouped`` gives them."""
    out: dict[str, list[Row]] = {g.label: [] for g in grouped(cassette.events)}
    for row in rows:
        out.setdefault(row.group, []).append(row)
    return {label: members for label, members in out.items() if members}


def _text_row(row: Row, unplayed: bool) -> str:
    arrow = _ARROWS.get(row.dir, " !" if row.role == "stderr" else "  ")
    mark = " (server-initiated)" if row.role.startswith("server-") else ""
    mark += " [unplayed]" if unplayed else ""
    ident = f"id={json.dumps(row.id)}" if row.id is not None else ""
    size = _size(row.size) if row.size else ""
    label = row.what + mark
    offset = f"+{row.t:.3f}s"
    text = f"{row.line:>5}  {offset:>10}  {arrow}  {label:<52} {ident:<7} {size:>9}"
    return f"{text}  {_took(row)}".rstrip()


def _took(row: Row) -> str:
    """How a call ended, at the end of its rows: a request's ``took 1.503s``, with
    ``FAILED (...)`` when the call failed, or ``no answer``; a failed answer's ``FAILED``.
    Every failing row ends with the word, so the eye (and ``grep``) finds them all."""
    if row.role in ("response", "error"):
        return "FAILED" if row.outcome in _FAILED else ""
    if row.outcome == "unanswered":
        return "no answer"
    if row.took is None:
        return ""
    if row.outcome in _FAILED:
        return f"took {seconds_text(row.took)} FAILED ({row.failure})"
    ending = ", declined (legacy server)" if row.outcome == "declined" else ""
    return f"took {seconds_text(row.took)}{ending}"


#: the outcomes that are failures (``cassette.core.tape.calls``)
_FAILED: Final = ("tool-error", "error")


def _requests_line(group: str, rows: list[Row]) -> str:
    """One line on a session's requests ("" when it has none)."""
    requests = [row for row in rows if row.outcome]
    requests = [row for row in requests if row.role in ("request", "server-request")]
    if not requests:
        return ""
    failed = [str(row.line) for row in requests if row.outcome in _FAILED]
    span = max(row.t for row in rows) - min(row.t for row in requests)
    text = f"{group}: {len(requests)} request(s) over {seconds_text(max(span, 0.0))}, "
    text += f"{len(failed)} failed"
    if failed:
        text += f" (line{'s' if len(failed) > 1 else ''} {', '.join(failed)})"
    timed = [row for row in requests if row.took is not None]
    if timed:
        slowest = max(timed, key=lambda row: row.took or 0.0)
        text += f"; slowest {slowest.what}, {seconds_text(slowest.took or 0.0)}"
        text += f" (line {slowest.line})"
    return text


#: the text report's marks, painted on a terminal (``cassette.core.words.colour``)
TEXT_COLOURS: Final = (
    Rule.of(r"(FAILED(?: \([^)\n]*\))?)$", "red"),
    Rule.of(r"(no answer)$", "yellow"),
    Rule.of(r"^(?:main|variant .+?|probe .+?): \d+ request\(s\) .*?, ([1-9]\d* failed)", "red"),
    Rule.of(r"^against .*?: ([1-9]\d* miss\(es\))", "red"),
    Rule.of(r"(\[unplayed\])", "yellow"),
    Rule.of(r"^(-- .* --)$", "bold"),
)


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.1em} .meta{color:#555;margin-bottom:1em}
.diagram{display:grid;grid-template-columns:9em 1fr 9em;row-gap:2px;max-width:1100px}
.lane{font-weight:bold;text-align:center;padding:.4em;background:#eef;border:1px solid #99c}
.row{display:contents}
.side{border-left:2px solid #99c;border-right:2px solid #99c;min-height:1.6em;
 font:12px monospace;color:#777;padding:0 .3em}
.msg{position:relative;padding:.15em .5em}
.msg summary{cursor:pointer;list-style:none;padding:.15em .4em;border-radius:3px}
.msg summary::-webkit-details-marker{display:none}
.c2s summary{background:#e3f2e3;border-bottom:2px solid #3a3;text-align:left}
.c2s summary::after{content:" \\25B6";color:#3a3}
.s2c summary{background:#e7eefb;border-bottom:2px solid #36c;text-align:right}
.s2c summary::before{content:"\\25C0 ";color:#36c}
.server-request summary,.server-notification summary{background:#fdebd3;border-color:#d80}
.error summary{background:#fbe3e3;border-color:#c33}
.note{color:#666;font:12px monospace;text-align:center;padding:.1em}
pre{white-space:pre-wrap;word-break:break-all;background:#f7f7f7;border:1px solid #ddd;
 padding:.5em;margin:.3em 0;font-size:12px;max-height:30em;overflow:auto}
.tag{font-size:11px;color:#a60;margin:0 .4em}
.unplayed summary{opacity:.6;border-style:dashed}
.misses{margin-top:1.5em} .misses li{font:12px monospace;margin:.2em 0}
.method{color:#36c;font-weight:bold;margin-left:.3em}
.preview{font:12px monospace;color:#555;margin:0 .4em;white-space:nowrap}
.msg[open] .preview{display:none}
.miss{grid-column:2;font:12px monospace;color:#a00;background:#fff0f0;
 border-left:3px solid #c33;padding:.2em .5em;margin:0 .5em}
.tools{margin:.5em 0 1em}
#expand-all:checked ~ .diagram details.msg::details-content{content-visibility:visible;
 display:block}
#expand-all:checked ~ .diagram .preview{display:none}
.tool-error summary{background:#fbe3e3;border-color:#c33}
.declined summary{background:#eef0f0;border-color:#9aa}
.took{font:12px monospace;color:#555;margin-left:.4em} .took.fail{color:#c62828;font-weight:bold}
.group{grid-column:1/-1;font-size:1em;margin:1em 0 .3em;padding:.2em .4em;background:#eef}
details.stderr{grid-column:2;font:12px monospace;color:#666;padding:.1em .5em}
details.stderr summary{cursor:pointer;text-align:center}
"""


#: how much of a request's arguments the collapsed row shows
_PREVIEW = 80


def _preview(row: Row) -> str:
    """A request's arguments (``tools/call``) or params, compact on one line, cut to fit
    the collapsed row: what the call was, without opening it."""
    if not isinstance(row.event, MessageEvent) or row.role not in ("request", "server-request"):
        return ""
    params = row.event.message.get("params")
    if isinstance(params, dict) and "arguments" in params:
        params = params["arguments"]
    elif isinstance(params, dict):
        params = {k: v for k, v in params.items() if k != "_meta"}
    if not params:
        return ""
    text = printable(json.dumps(params, separators=(",", ":"), ensure_ascii=False))
    text = text if len(text) <= _PREVIEW else text[: _PREVIEW - 3] + "..."
    return f'<code class="preview">{html.escape(text)}</code>'


def _asked(rows: list[Row]) -> dict[int, str]:
    """For each answer's line, the method of the request it answers (same session, the
    other direction, the same id): what a result row is the result of."""
    pending: dict[tuple[Any, str, str], str] = {}
    answered: dict[int, str] = {}
    for row in rows:
        if not isinstance(row.event, MessageEvent) or row.id is None:
            continue
        key = (session_of(row.event), row.dir, json.dumps(row.id))
        if row.role in ("request", "server-request"):
            pending[key] = row.what
        elif row.role in ("response", "error"):
            other = "s2c" if row.dir == "c2s" else "c2s"
            method = pending.pop((key[0], other, key[2]), None)
            if method is not None:
                answered[row.line] = method
    return answered


def _summary(row: Row, unplayed: bool = False, method: str | None = None) -> str:
    parts = [f"<b>{html.escape(row.what)}</b>"]
    if method is not None:
        parts.append(f'<span class="method">{html.escape(method)}</span>')
    preview = _preview(row)
    if preview:
        parts.append(preview)
    if row.id is not None:
        parts.append(f"id {html.escape(json.dumps(row.id))}")
    if row.role.startswith("server-"):
        parts.append('<span class="tag">server-initiated</span>')
    if unplayed:
        parts.append('<span class="tag">unplayed</span>')
    parts.append(f"<small>{_size(row.size)}</small>")
    took = _took(row)
    if took:
        failed = row.outcome in (*_FAILED, "unanswered")
        parts.append(f'<span class="took{" fail" if failed else ""}">{html.escape(took)}</span>')
    return " ".join(parts)


def render_html(
    tape: Cassette | str | os.PathLike[str],
    source: str | os.PathLike[str] | None = None,
    against: Against | None = None,
) -> str:
    """One self-contained HTML page: each session's waterfall (``cassette.tools.waterfall``),
    then the sequence diagram, each session under a heading of its own and each run of
    server stderr folded (with ``against``, unplayed recordings marked and the other
    session's misses listed)."""
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    name = os.fspath(source) if source is not None else cassette.source or "cassette"
    rows = timeline(cassette)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(name)}</title><style>{_CSS}{WATERFALL_CSS}</style></head><body>",
        f"<h1>{html.escape(name)}</h1>",
        *(
            f'<div class="meta">{html.escape(line.strip())}</div>'
            for line in _title(cassette, name)
        ),
        *_waterfalls(cassette, rows),
        '<input type="checkbox" id="expand-all">'
        '<label for="expand-all" class="tools">expand all</label>',
        '<div class="diagram">',
        '<div class="lane">client</div><div></div><div class="lane">server</div>',
    ]
    diagram = _Diagram(_asked(rows), against)
    groups = _row_groups(cassette, rows)
    for group, members in groups.items():
        if len(groups) > 1:
            out.append(f'<h2 class="group">{html.escape(group)}</h2>')
        out += diagram.rows(members)
    out.append("</div>")
    if against is not None:
        out.append(f'<div class="misses"><p>{html.escape(against.text(name).splitlines()[0])}</p>')
        out.append("<ul>")
        for m in against.misses:
            text = html.escape(printable(f"{against.source}:{m.line}: {m.summary}"))
            out.append(f'<li data-line="{m.line}">{text}</li>')
        out.append("</ul></div>")
    out += ["</body></html>", ""]
    return "\n".join(out)


def _waterfalls(cassette: Cassette, rows: list[Row]) -> list[str]:
    """A waterfall per session that made requests, the main recording's first; the
    recorder's probes (its own sessions, not the client's) folded under one closed
    heading after them, so the page opens on the client's own session."""
    found = calls(cassette.events)
    labels = {row.line: row.what for row in rows}
    shown: list[str] = []
    probes: list[str] = []
    for group, events in grouped(cassette.events).items():
        page = waterfall(group, [c for c in found if c.group == group], events, labels)
        if page:
            (probes if group.kind == "probe" else shown).append(page)
    if probes:
        count = f"{len(probes)} session" + ("" if len(probes) == 1 else "s")
        summary = f"probed surface: {count} of the recorder's own, not the client's"
        shown.append(f'<details class="probes"><summary>{summary}</summary>')
        shown += [*probes, "</details>"]
    return shown


class _Diagram:
    """The sequence diagram's rows: a message each, a fold per run of stderr lines, and
    under a recording the misses of ``against`` closest to it."""

    def __init__(self, methods: dict[int, str], against: Against | None) -> None:
        self.methods = methods
        self.against = against
        self.unplayed = against.unplayed if against is not None else frozenset()
        self.missed: dict[int, list[Miss]] = {}
        for miss in against.misses if against is not None else ():
            if miss.closest_line is not None:
                self.missed.setdefault(miss.closest_line, []).append(miss)

    def rows(self, rows: list[Row]) -> list[str]:
        out: list[str] = []
        run: list[Row] = []
        for row in rows:
            if row.role == "stderr":
                run.append(row)
                continue
            if run:
                out.append(_stderr_fold(run))
                run = []
            out.append(self._row(row))
            out += self._misses(row)
        if run:
            out.append(_stderr_fold(run))
        return out

    def _row(self, row: Row) -> str:
        left = f"{row.line} +{row.t:.3f}s"
        if isinstance(row.event, MessageEvent | RawEvent):
            body = (
                pretty(row.event.message, ensure_ascii=False)
                if isinstance(row.event, MessageEvent)
                else (row.event.text or row.event.b64 or "")
            )
            shown = html.escape(printable(body, lines=True), quote=False)
            extra = " unplayed" if row.line in self.unplayed else ""
            if row.role in ("response", "error") and row.outcome in ("tool-error", "declined"):
                extra += f" {row.outcome}"
            summary = _summary(row, row.line in self.unplayed, self.methods.get(row.line))
            cell = (
                f'<details class="msg {row.dir} {row.role}{extra}" id="line-{row.line}" '
                f'data-line="{row.line}"><summary>{summary}</summary><pre>{shown}</pre></details>'
            )
        else:
            cell = f'<div class="note {row.role}">{html.escape(row.what)}</div>'
        return (
            f'<div class="row"><div class="side">{html.escape(left)}</div>{cell}'
            '<div class="side"></div></div>'
        )

    def _misses(self, row: Row) -> list[str]:
        out = []
        for miss in self.missed.get(row.line, ()):
            assert self.against is not None
            text = printable(f"miss: {self.against.source}:{miss.line}: {miss.summary}")
            out.append(
                f'<div class="row"><div class="side"></div><div class="miss" '
                f'data-line="{miss.line}" data-closest="{row.line}">{html.escape(text)}</div>'
                '<div class="side"></div></div>'
            )
        return out


def _stderr_fold(run: list[Row]) -> str:
    """A run of server stderr lines as one folded row: what a chatty server says would
    otherwise push the session off the screen."""
    first = run[0]
    text = "\n".join(
        f"{row.line:>5} +{row.t:.3f}s  {printable(getattr(row.event, 'text', ''))}" for row in run
    )
    count = f"{len(run)} line" + ("s" if len(run) > 1 else "")
    return (
        f'<div class="row"><div class="side">{html.escape(f"{first.line} +{first.t:.3f}s")}'
        f'</div><details class="stderr" data-line="{first.line}" data-lines="{len(run)}">'
        f"<summary>server stderr: {count}</summary><pre>{html.escape(text, quote=False)}</pre>"
        '</details><div class="side"></div></div>'
    )


def main(args: argparse.Namespace) -> int:
    other, strategy = getattr(args, "against", None), getattr(args, "strategy", None)
    if strategy is not None and other is None:
        raise UsageError("--strategy needs --against OTHER (the session to match against TAPE)")
    cassette = Cassette.load(args.tape)
    if getattr(args, "faults", None) is not None:
        return _show_faults(cassette, args)
    against = misses_against(cassette, other, strategy or "default") if other else None
    rows = timeline(cassette)
    if args.html:
        page = render_html(cassette, args.tape, against)
        write_atomic(args.html, page.encode("utf-8"))
    if args.format == "json":
        data: dict[str, Any] = {
            "cassette": args.tape,
            "html": args.html,
            "starts": count_starts(cassette.events),
            "events": [r.as_data() for r in rows],
            "probes": probes(cassette),
        }
        if against is not None:
            data["against"] = against.as_data()
        emit(pretty(data))
    else:
        emit(render_text(cassette, args.tape, rows, against), TEXT_COLOURS, _colour(args))
        if args.html:
            emit(f"wrote {args.html}")
    return 1 if against is not None and against.misses else 0


def _colour(args: argparse.Namespace) -> str:
    """``--color``'s value (``auto`` for a namespace built without it)."""
    return str(getattr(args, "color", None) or "auto")


def _show_faults(cassette: Cassette, args: argparse.Namespace) -> int:
    """``show TAPE --faults PLAN``: the dry run, as text or JSON; exit 0."""
    from cassette.store.faults import load_fault_plan

    hits = faults_preview(cassette, load_fault_plan(args.faults))
    if args.format == "json":
        data = {"cassette": args.tape, "faults": args.faults, "hits": [h.as_data() for h in hits]}
        emit(pretty(data))
        return 0
    lines = [f"{args.tape}: {len(hits)} recorded request(s) the plan {args.faults} would fault"]
    lines += [f"  line {h.line}: {h.what}: {h.fault} (fault {h.rule})" for h in hits]
    emit("\n".join(lines))
    return 0
