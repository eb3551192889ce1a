"""Where time went and what failed: each recorded request as a call, with the session
it belongs to, how long its answer took, and how it ended.

A cassette's file holds more than the person's own session: the recorder's probes (a
second connection it opened to learn how the server answers another client: ``meta.probe``,
or the legacy probe kept as the variant ``legacy-probe``) and variant sessions recorded
for other clients (``meta.variant``). Each is a session of its own, with its own clock
and its own ids, so the views draw each apart, the person's first. ``group_of`` is the
one rule that says which session an event belongs to; ``show``'s timeline, its JSON and
its HTML waterfall all read it, so a new kind of side session is taught to every view
here. Events that carry no ``meta`` (stderr, the exit, HTTP statuses) are the main
recording's, as ``cassette.core.eras.variants`` says.

A call is a request (either side's: a server asks the client too) and its answer, paired
within its session by ``cassette.core.wire.pairing``. Its duration runs from the request's
event time to its answer's; its outcome is ``ok``, ``tool-error`` (a result with
``isError: true``: the tool ran and failed, which JSON-RPC calls a success), ``error``
(a JSON-RPC error), ``declined`` or ``unanswered``. ``declined`` is a dual-era client's
``server/discover`` answered Method not found: how such a client learns that the server
is a legacy one before it falls back to ``initialize`` (every session of the 2.x Python
SDK against a legacy server opens so), an error on the wire and no failure of the
session's, so the views do not count it among the failures. Pure: events in, values out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

import attrs

from cassette.core.eras.variants import PROBE_VARIANT, variant_of
from cassette.core.wire.jsonrpc import METHOD_NOT_FOUND
from cassette.core.wire.meta import PROBE
from cassette.core.wire.model import Event, MessageEvent
from cassette.core.wire.pairing import exchanges
from cassette.core.words.text import printable

__all__ = ["MAIN", "Call", "Group", "Outcome", "calls", "group_of", "grouped"]


Outcome = Literal["ok", "tool-error", "error", "declined", "unanswered"]
_ORDER: Final = {"main": 0, "variant": 1, "probe": 2}


@attrs.frozen(slots=True)
class Group:
    """A session of the cassette: the main recording, a variant or a probe, by name."""

    kind: Literal["main", "variant", "probe"]
    name: str

    @property
    def label(self) -> str:
        """How a view names it: ``main``, ``variant NAME``, ``probe NAME`` (the name as
        recorded, made safe to print: ``cassette.core.words.text``)."""
        return "main" if self.kind == "main" else printable(f"{self.kind} {self.name}")


MAIN: Final = Group("main", "main")


def group_of(event: Any) -> Group:
    """The session ``event`` belongs to (see the module docstring)."""
    meta = getattr(event, "meta", None)
    probe = meta.get(PROBE) if isinstance(meta, Mapping) else None
    if isinstance(probe, str) and probe:
        return Group("probe", probe)
    variant = variant_of(event)
    if variant is None:
        return MAIN
    return Group("probe" if variant == PROBE_VARIANT else "variant", variant)


def grouped(events: Sequence[Event]) -> dict[Group, list[Event]]:
    """Each session's events in file order; the main recording first (even when empty),
    then variants, then probes, each in order of first appearance."""
    found: dict[Group, list[Event]] = {MAIN: []}
    for event in events:
        found.setdefault(group_of(event), []).append(event)
    order = sorted(found, key=lambda g: _ORDER[g.kind])  # stable: first appearance kept
    return {group: found[group] for group in order}


def _outcome(request: MessageEvent, answer: MessageEvent | None) -> Outcome:
    if answer is None:
        return "unanswered"
    error = answer.message.get("error")
    if error is not None:
        discover = request.message.get("method") == "server/discover"
        code = error.get("code") if isinstance(error, dict) else None
        return "declined" if discover and code == METHOD_NOT_FOUND else "error"
    result = answer.message.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        return "tool-error"
    return "ok"


@attrs.frozen(slots=True)
class Call:
    """One request, its answer (``None``: never answered) and its session."""

    request: MessageEvent
    answer: MessageEvent | None
    group: Group

    @property
    def line(self) -> int:
        """The request's line in the file (the header is line 1)."""
        return self.request.seq + 1

    @property
    def answer_line(self) -> int | None:
        return None if self.answer is None else self.answer.seq + 1

    @property
    def duration(self) -> float | None:
        """Seconds from the request to its answer (``None``: no answer)."""
        if self.answer is None:
            return None
        return round(max(0.0, self.answer.t - self.request.t), 6)

    @property
    def outcome(self) -> Outcome:
        return _outcome(self.request, self.answer)

    @property
    def failed(self) -> bool:
        return self.outcome in ("tool-error", "error")

    @property
    def server_initiated(self) -> bool:
        return self.request.dir == "s2c"

    @property
    def error_code(self) -> Any:
        """A JSON-RPC error's code (``None`` for any other outcome)."""
        error = self.answer.message.get("error") if self.answer is not None else None
        return error.get("code") if isinstance(error, dict) else None


def calls(events: Sequence[Event]) -> list[Call]:
    """Every request of ``events`` as a call, session by session (``grouped``), each
    session's in request order: ids are paired within their own session only."""
    out: list[Call] = []
    for group, members in grouped(events).items():
        pairs, _ = exchanges(members)
        out += [Call(pair.request, pair.response, group) for pair in pairs]
    return out
