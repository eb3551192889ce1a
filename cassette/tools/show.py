"""``cassette show``: a cassette as a timeline, and as an HTML sequence diagram.

The timeline is one row per event: file line, time offset, a direction arrow (``->``
client to server, ``<-`` server to client), what the message is (method; ``result`` or
``error CODE``), its id, and its size. Server-initiated requests and notifications are
marked, because they are what a request/response view of MCP hides.

The HTML page is self-contained (inline CSS, no script, no network): two lanes, client
and server, with an arrow per message across them; every message is a ``<details>``
element whose body is the pretty-printed JSON. Collapsed, a request shows a one-line
preview of its arguments and an answer the method it answers; an "expand all" checkbox
opens every message (CSS only: ``::details-content``); with ``--against``, each miss is
shown under the recording closest to it. It is written whole or not at all.

Recorded text is shown, never obeyed: in the timeline, the JSON and the page alike,
control characters (a server's terminal escapes), bidirectional overrides and lone
surrogates appear as their escapes (``cassette.core.text``).

``--against OTHER [--strategy S]`` answers "would this cassette serve that session?":
OTHER's client messages (another recording of the same test, say after a code change)
are fed in order to a ``Replayer`` of TAPE under strategy S, exactly as a replay would
see them, one replayer per HTTP session. Every miss is listed with OTHER's line, the
matcher's diagnosis and the closest recording in TAPE; every request of TAPE that no
message of OTHER used is marked ``unplayed`` in the timeline. Misses fail the command;
unplayed recordings do not (a test may exercise a subset of its cassette).
"""

from __future__ import annotations

import argparse
import html
import json
import os
from collections.abc import Mapping
from typing import Any

import attrs

from cassette.core.faults import FaultPlan, preview
from cassette.core.fits import sessions
from cassette.core.jsonrpc import Kind, pretty
from cassette.core.matching import FingerprintMatcher, get_strategy
from cassette.core.model import Event, ExitEvent, HttpEvent, MessageEvent, RawEvent, StderrEvent
from cassette.core.prepared import Prepared
from cassette.core.replayer import Replayer
from cassette.core.start_responder import start_note
from cassette.core.starts import count_starts, split_starts, start_of
from cassette.core.text import printable
from cassette.core.variants import probe_of, split_all
from cassette.errors import UsageError
from cassette.store.files import write_atomic
from cassette.store.storage import Cassette
from cassette.tools._common import emit, kind_of, size_of
from cassette.tools.diff import label as request_label

__all__ = ["Against", "Miss", "Row", "main", "misses_against", "render_html", "timeline"]

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

    def as_data(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "t": self.t,
            "dir": self.dir,
            "role": self.role,
            "what": self.what,
            "id": self.id,
            "size": self.size,
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
            sse = isinstance(event.meta, Mapping) and event.meta.get("sse")
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


@attrs.frozen(slots=True)
class Miss:
    """A client message of the other session that TAPE would not answer."""

    line: int  # in the other cassette
    request: str
    kind: str  # MissReport.kind: not-recorded, already-played, answer-differs, no-answer
    summary: str  # the replay's own one-line diagnosis
    closest_line: int | None  # in TAPE

    def as_data(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class Against:
    """What replaying another session's client messages against TAPE would do."""

    source: str
    strategy: str
    misses: tuple[Miss, ...]
    unplayed: frozenset[int]  # lines of TAPE's requests nothing used
    requests: int  # requests recorded in TAPE

    def as_data(self) -> dict[str, Any]:
        return {
            "cassette": self.source,
            "strategy": self.strategy,
            "misses": [m.as_data() for m in self.misses],
            "unplayed": sorted(self.unplayed),
        }

    def text(self, tape: str) -> str:
        lines = [
            f"against {self.source} (strategy {self.strategy}): {len(self.misses)} miss(es), "
            f"{len(self.unplayed)} of {self.requests} recorded request(s) of {tape} unplayed"
        ]
        lines += [f"  {self.source}:{m.line}: {m.summary}" for m in self.misses]
        return "\n".join(lines)


def _session_of(event: MessageEvent) -> Any:
    """Over HTTP each session replays on its own, as the fronts do; stdio is one session
    per server start (``cassette.core.starts``)."""
    session = event.meta.get("session") if isinstance(event.meta, Mapping) else None
    return (session, start_of(event) or 1)


def _replayer_for(cassette: Cassette, key: Any, chosen: str, prepared: Prepared) -> Replayer:
    """The replay a session of the other cassette meets: of ``tape``'s start of the same
    number when ``tape`` holds several (the last, past its end), else of all of it."""
    starts = split_starts(cassette)
    if len(starts) == 1:
        return Replayer(cassette, chosen, prepared=prepared)
    chosen_start = starts[min(key[1], len(starts)) - 1]
    note = start_note(chosen_start.number, chosen_start.of)
    return Replayer(chosen_start, chosen, start_note=note)


def misses_against(
    tape: Cassette | str | os.PathLike[str],
    other: Cassette | str | os.PathLike[str],
    strategy: str = "default",
) -> Against:
    """Feed ``other``'s client messages to a replay of ``tape`` under ``strategy``; collect
    the misses and the recordings of ``tape`` that nothing played."""
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    session = other if isinstance(other, Cassette) else Cassette.load(other)
    chosen = get_strategy(strategy).name
    prepared = Prepared.of(cassette)
    replayers: dict[Any, Replayer] = {}
    misses: list[Miss] = []
    for event in session.events:
        if not isinstance(event, MessageEvent) or event.dir != "c2s" or probe_of(event):
            continue  # the other recorder's probes are no client's
        key = _session_of(event)
        if key not in replayers:
            replayers[key] = _replayer_for(cassette, key, chosen, prepared)
        replayer = replayers[key]
        seen = len(replayer.misses)
        replayer.receive(event.message)
        for report in replayer.misses[seen:]:
            message = event.message
            what = request_label(message) if "method" in message else f"answer to {report.method}"
            line = event.seq + 1
            misses.append(
                Miss(line, what, report.kind, replayer.describe(report), report.closest_line)
            )
    every = {c.seq + 1 for c in prepared.requests.candidates}
    unplayed = set(every)
    for replayer in replayers.values():
        if isinstance(replayer.main_matcher, FingerprintMatcher):
            unplayed &= {c.seq + 1 for c in replayer.main_matcher.unconsumed()}
    source = session.source or "other"
    return Against(source, chosen, tuple(misses), frozenset(unplayed), len(every))


@attrs.frozen
class FaultHit:
    """A recorded request a fault plan would fault, for a client making the recorded calls."""

    line: int
    what: str
    rule: int  # 1-based, as a person counts the plan's [[fault]] entries
    fault: str

    def as_data(self) -> dict[str, Any]:
        return {"line": self.line, "request": self.what, "rule": self.rule, "fault": self.fault}


def faults_preview(tape: Cassette | str | os.PathLike[str], plan: FaultPlan) -> list[FaultHit]:
    """A dry run of ``plan`` over ``tape``: each recorded client request (in each session,
    in recorded order) the plan would fault, and how. The cassette is only read."""
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    sessions: dict[Any, list[tuple[int, dict[str, Any]]]] = {}
    for event in cassette.events:
        if not isinstance(event, MessageEvent) or event.dir != "c2s":
            continue
        if "method" in event.message and "id" in event.message:
            sessions.setdefault(_session_of(event), []).append((event.seq + 1, event.message))
    labels = {line: request_label(m) for requests in sessions.values() for line, m in requests}
    hits = [
        FaultHit(line, labels[line], index + 1, plan.rules[index].describe())
        for requests in sessions.values()
        for line, index in preview(plan, requests)
    ]
    return sorted(hits, key=lambda hit: hit.line)


def timeline(tape: Cassette | str | os.PathLike[str]) -> list[Row]:
    """The cassette's events as timeline rows, in file order; the recorder's probes are
    no part of it (``probes``)."""
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    return [_row(event) for event in cassette.events if probe_of(event) is None]


def probes(tape: Cassette) -> dict[str, list[int]]:
    """The recorder's probes (``cassette.core.surface``): each one's lines, by name."""
    return {name: [e.seq + 1 for e in events] for name, events in split_all(tape.events)[2].items()}


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB"


def _title(cassette: Cassette, source: str) -> list[str]:
    """The cassette in a line (what it recorded, which clients it serves), then one line
    per session: the clients it fits (``cassette.core.fits``)."""
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
    lines = _title(cassette, source)
    unplayed = against.unplayed if against is not None else frozenset()
    for row in rows:
        arrow = _ARROWS.get(row.dir, " !" if row.role == "stderr" else "  ")
        mark = " (server-initiated)" if row.role.startswith("server-") else ""
        mark += " [unplayed]" if row.line in unplayed else ""
        ident = f"id={json.dumps(row.id)}" if row.id is not None else ""
        size = _size(row.size) if row.size else ""
        label = row.what + mark
        offset = f"+{row.t:.3f}s"
        lines.append(
            f"{row.line:>5}  {offset:>10}  {arrow}  {label:<52} {ident:<7} {size:>9}".rstrip()
        )
    if against is not None:
        lines.append(against.text(source))
    return "\n".join(lines)


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
        key = (_session_of(row.event), row.dir, json.dumps(row.id))
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
    return " ".join(parts)


def render_html(
    tape: Cassette | str | os.PathLike[str],
    source: str | os.PathLike[str] | None = None,
    against: Against | None = None,
) -> str:
    """One self-contained HTML page drawing the session as a sequence diagram (with
    ``against``, unplayed recordings marked and the other session's misses listed)."""
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    name = os.fspath(source) if source is not None else cassette.source or "cassette"
    unplayed = against.unplayed if against is not None else frozenset()
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(name)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(name)}</h1>",
        *(
            f'<div class="meta">{html.escape(line.strip())}</div>'
            for line in _title(cassette, name)
        ),
        '<input type="checkbox" id="expand-all">'
        '<label for="expand-all" class="tools">expand all</label>',
        '<div class="diagram">',
        '<div class="lane">client</div><div></div><div class="lane">server</div>',
    ]
    rows = timeline(cassette)
    methods = _asked(rows)
    missed: dict[int, list[Miss]] = {}
    for miss in against.misses if against is not None else ():
        if miss.closest_line is not None:
            missed.setdefault(miss.closest_line, []).append(miss)
    for row in rows:
        left = f"{row.line} +{row.t:.3f}s"
        if isinstance(row.event, MessageEvent | RawEvent):
            body = (
                pretty(row.event.message, ensure_ascii=False)
                if isinstance(row.event, MessageEvent)
                else (row.event.text or row.event.b64 or "")
            )
            shown = html.escape(printable(body, lines=True), quote=False)
            extra = " unplayed" if row.line in unplayed else ""
            cell = (
                f'<details class="msg {row.dir} {row.role}{extra}" data-line="{row.line}">'
                f"<summary>{_summary(row, bool(extra), methods.get(row.line))}</summary>"
                f"<pre>{shown}</pre></details>"
            )
        else:
            cell = f'<div class="note {row.role}">{html.escape(row.what)}</div>'
        out.append(
            f'<div class="row"><div class="side">{html.escape(left)}</div>{cell}'
            '<div class="side"></div></div>'
        )
        for miss in missed.get(row.line, ()):
            assert against is not None
            text = printable(f"miss: {against.source}:{miss.line}: {miss.summary}")
            out.append(
                f'<div class="row"><div class="side"></div><div class="miss" '
                f'data-line="{miss.line}" data-closest="{row.line}">{html.escape(text)}</div>'
                '<div class="side"></div></div>'
            )
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
        emit(render_text(cassette, args.tape, rows, against))
        if args.html:
            emit(f"wrote {args.html}")
    return 1 if against is not None and against.misses else 0


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
