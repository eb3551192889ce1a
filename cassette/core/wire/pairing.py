"""Pairing a cassette's requests with their answers, in both directions.

The toolbox (lint, diff, show, distill) and the client side (verify) read a recording as
requests and the answers that followed them, each with the line it sits on. Ids are scoped
by direction (both sides count on their own) and, over HTTP, by session and stream. Pure:
events in, pairs out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

from cassette.core.wire.jsonrpc import Kind, classify_value
from cassette.core.wire.meta import SESSION, STREAM
from cassette.core.wire.model import Event, MessageEvent

__all__ = ["Exchange", "cancellations", "exchanges", "kind_of", "same_json_id"]


@attrs.frozen(slots=True)
class Exchange:
    """A request, who sent it, and its answer (``None`` when it never came)."""

    request: MessageEvent
    response: MessageEvent | None

    @property
    def method(self) -> str:
        return str(self.request.message.get("method", ""))


def _meta(event: MessageEvent, name: str) -> Any:
    meta = event.meta
    return meta.get(name) if isinstance(meta, Mapping) else None


def kind_of(message: Any) -> Kind:
    return classify_value(message)


def _same_scope(a: MessageEvent, b: MessageEvent) -> bool:
    """Whether two requests share one id space: one stdio session, or one HTTP session."""
    if _meta(a, STREAM) is None and _meta(b, STREAM) is None:
        return True
    session = _meta(a, SESSION)
    return session is not None and session == _meta(b, SESSION)


def _answered(open_: list[list[Any]], answer: MessageEvent) -> list[Any] | None:
    """The open request an answer belongs to: same id from the other side, preferring the
    same HTTP stream (a POST carries its own answer), then the same session."""
    sender = "s2c" if answer.dir == "c2s" else "c2s"
    msg_id = answer.message.get("id")
    stream, session = _meta(answer, STREAM), _meta(answer, SESSION)
    if msg_id is None:  # an error to a request the server could not read: same stream only
        same = [e for e in open_ if e[0].dir == sender and stream is not None]
        return next((e for e in same if _meta(e[0], STREAM) == stream), None)
    candidates = [
        e for e in open_ if e[0].dir == sender and same_json_id(e[0].message.get("id"), msg_id)
    ]
    for test in (
        lambda e: stream is not None and _meta(e[0], STREAM) == stream,
        lambda e: session is not None and _meta(e[0], SESSION) == session,
        lambda e: True,
    ):
        found = next((e for e in candidates if test(e)), None)
        if found is not None:
            return found
    return None


def same_json_id(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def cancellations(events: Iterable[Any]) -> Iterator[tuple[MessageEvent, Any]]:
    """Each ``notifications/cancelled`` the client sent, and the request id it cancels
    (``None`` when it names none)."""
    for event in events:
        if not isinstance(event, MessageEvent) or event.dir != "c2s":
            continue
        if event.message.get("method") != "notifications/cancelled":
            continue
        params = event.message.get("params")
        yield event, params.get("requestId") if isinstance(params, dict) else None


def exchanges(events: tuple[Event, ...] | list[Event]) -> tuple[list[Exchange], list[Any]]:
    """Pair requests with the answers that follow them, in both directions.

    Returns the exchanges in request order and a list of problems found on the way:
    ``("duplicate", event)`` for a request whose id is already in flight in the same id
    space (both sides, and over HTTP every session, count on their own),
    ``("stray", event)`` for an answer to nothing.
    """
    found: list[list[Any]] = []
    open_: list[list[Any]] = []
    problems: list[Any] = []
    for event in events:
        if not isinstance(event, MessageEvent):
            continue
        kind = kind_of(event.message)
        if kind is Kind.REQUEST:
            msg_id = event.message.get("id")
            if any(
                e[0].dir == event.dir
                and same_json_id(e[0].message.get("id"), msg_id)
                and _same_scope(e[0], event)
                for e in open_
            ):
                problems.append(("duplicate", event))
            entry = [event, None]
            found.append(entry)
            open_.append(entry)
        elif kind in (Kind.RESPONSE, Kind.ERROR):
            entry_or_none = _answered(open_, event)
            if entry_or_none is None:
                if event.message.get("id") is not None:
                    problems.append(("stray", event))
            else:
                entry_or_none[1] = event
                open_.remove(entry_or_none)
    return [Exchange(req, resp) for req, resp in found], problems
