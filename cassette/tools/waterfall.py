"""The waterfall at the top of ``show --html``: where a session's time went, and what failed.

One row per request (``cassette.core.tape.calls``), in the order sent; a bar from the moment
the request was recorded to the moment its answer was, on a time axis of the session's
own clock. Each session of the cassette (the person's own, then variants, then the
recorder's probes) gets a waterfall of its own, because each has its own clock: drawn on
one axis, a probe recorded a second later would squeeze the person's session into a
sliver.

Read without colour too: every bar has a text twin in its row (the duration, and
``tool error``, ``error CODE`` or ``no answer`` in words), a legend names the colours,
and each row links to its message in the sequence diagram below. Pure HTML and CSS (no
script, nothing fetched); bars are positioned in percent of the axis, with a minimum
width so an instant answer still shows. Hundreds of requests stay readable: rows are one
line high, the list scrolls inside a box of its own, and the axis stays on top of it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Final

from cassette.core.tape.calls import Call, Group
from cassette.core.wire.model import Event

__all__ = ["CSS", "outcome_words", "seconds_text", "waterfall"]

CSS: Final = """
.waterfall{margin:1em 0 1.5em;max-width:1100px}
.waterfall h2{font-size:1em;margin:.3em 0}
.legend{font-size:12px;color:#444;margin:.2em 0 .4em}
.key{display:inline-block;width:1.6em;height:.8em;margin:0 .3em 0 .8em;vertical-align:middle}
.wf{max-height:34em;overflow:auto;border:1px solid #ccd;font:12px/1.5 monospace}
.wf-row,.wf-axis{display:grid;grid-template-columns:18em 1fr 16em;align-items:center}
.wf-row:nth-child(even){background:#f6f7fb}
.wf-axis{position:sticky;top:0;background:#fff;border-bottom:1px solid #ccd;z-index:1}
.wf-name{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;padding:0 .4em}
.wf-name a{color:#36c;text-decoration:none}
.wf-track{position:relative;height:1.2em;border-left:1px solid #ccd;border-right:1px solid #ccd}
.wf-axis .wf-track{height:1.5em}
.tick{position:absolute;top:0;border-left:1px solid #99a;padding-left:2px;color:#555;
 font-size:11px;white-space:nowrap}
.bar{position:absolute;top:.2em;height:.8em;min-width:3px;border-radius:2px}
.bar.ok,.key.ok{background:#3b6fd1} .bar.server,.key.server{background:#d98200}
.bar.failed,.key.failed{background:#c62828} .bar.declined,.key.declined{background:#9aa}
.bar.unanswered,.key.unanswered{background:repeating-linear-gradient(45deg,#999 0 4px,#ddd 4px 8px)}
.wf-took{padding:0 .4em;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.wf-took .fail{color:#c62828;font-weight:bold}
.wf-took .none{color:#8a5a00;font-weight:bold} .wf-took .declined{color:#667}
"""


def seconds_text(seconds: float) -> str:
    """A duration as a person reads it: ``0.4ms``, ``12ms``, ``1.503s``."""
    if seconds < 0.001:
        return f"{seconds * 1000:.1f}ms"
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    return f"{seconds:.3f}s"


def outcome_words(call: Call) -> str:
    """How a call ended, in words ("" for a plain success)."""
    if call.outcome == "tool-error":
        return "tool error"
    if call.outcome == "error":
        return f"error {call.error_code}"
    if call.outcome == "unanswered":
        return "no answer"
    if call.outcome == "declined":
        return "declined"
    return ""


def _step(span: float) -> float:
    """A round tick interval (1, 2 or 5 times a power of ten) giving about six ticks."""
    rough = span / 6
    power = 10.0 ** math.floor(math.log10(rough))
    return next((m * power for m in (1, 2, 5) if m * power >= rough), 10 * power)


def _axis(span: float) -> str:
    step = _step(span)
    ticks = []
    for i in range(int(span / step) + 1):
        at = i * step
        label = "0" if i == 0 else (f"{at * 1000:.4g} ms" if at < 1 else f"{at:.4g} s")
        ticks.append(f'<span class="tick" style="left:{100 * at / span:.3f}%">{label}</span>')
    return (
        '<div class="wf-axis" aria-hidden="true"><div class="wf-name">request</div>'
        f'<div class="wf-track">{"".join(ticks)}</div><div class="wf-took">took</div></div>'
    )


def _bar_class(call: Call) -> str:
    if call.failed:
        return "failed"
    if call.outcome in ("unanswered", "declined"):
        return call.outcome
    return "server" if call.server_initiated else "ok"


def _row(call: Call, label: str, start: float, span: float, end: float) -> str:
    done = call.answer.t if call.answer is not None else end
    left = 100 * (call.request.t - start) / span
    width = 100 * max(0.0, done - call.request.t) / span
    words = outcome_words(call)
    took = seconds_text(call.duration) if call.duration is not None else ""
    mark = {"unanswered": "none", "declined": "declined"}.get(call.outcome, "fail")
    said = f' <b class="{mark}">{html.escape(words)}</b>' if words else ""
    who = "server asks: " if call.server_initiated else ""
    name = html.escape(f"{who}{label}")
    bar = _bar_class(call)
    title = html.escape(
        f"line {call.line}: {who}{label}, sent +{call.request.t:.3f}s, "
        + (f"answered +{done:.3f}s, took {took}" if took else "never answered")
        + (f", {words}" if words else "")
    )
    return (
        f'<div class="wf-row {bar}" data-line="{call.line}" data-outcome="{call.outcome}">'
        f'<div class="wf-name" title="{name}"><a href="#line-{call.line}">{call.line}</a> '
        f"{name}</div>"
        f'<div class="wf-track"><div class="bar {bar}" role="img" aria-label="{title}" '
        f'title="{title}" style="left:{left:.3f}%;width:{width:.3f}%"></div></div>'
        f'<div class="wf-took">{took}{said}</div></div>'
    )


#: each kind of bar, and what the legend says it is
_KEYS: Final = {
    "ok": "answered",
    "server": "the server asked, the client answered",
    "failed": "failed (tool error or JSON-RPC error)",
    "unanswered": "no answer",
    "declined": "declined: a dual-era client learning the server is a legacy one",
}


def _legend(calls: Sequence[Call]) -> str:
    """The legend, for the kinds of bar this waterfall draws."""
    drawn = {_bar_class(call) for call in calls}
    keys = "".join(
        f'<span class="key {kind}"></span>{html.escape(said)}'
        for kind, said in _KEYS.items()
        if kind in drawn
    )
    return f'<p class="legend">{keys}</p>'


def waterfall(
    group: Group, calls: Sequence[Call], events: Sequence[Event], labels: Mapping[int, str]
) -> str:
    """The waterfall of one session (``group``): its ``calls``, on the clock of its
    ``events``; ``labels`` names each request by its line (what the timeline calls it)."""
    if not calls:
        return ""
    start = min(call.request.t for call in calls)
    end = max([event.t for event in events] + [c.answer.t for c in calls if c.answer])
    span = max(end - start, 0.001)
    failed = sum(1 for call in calls if call.failed)
    head = (
        f"{group.label}: {len(calls)} request(s) over {seconds_text(end - start)}, {failed} failed"
    )
    rows = [_row(call, str(labels.get(call.line, "request")), start, span, end) for call in calls]
    return (
        f'<section class="waterfall" data-group="{html.escape(group.label)}">'
        f"<h2>{html.escape(head)}</h2>{_legend(calls)}"
        f'<div class="wf">{_axis(span)}{"".join(rows)}</div></section>'
    )
