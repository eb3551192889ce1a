"""Cut an event log into exchanges: each client message and the server messages it caused.

Theory of operation
-------------------
A cassette is an ordered log; replay needs causes. Each client message (request or
notification) opens an exchange, and every server message is attributed to exactly one
exchange, or to the *preamble* when the server spoke before the client said anything:

1. a response or error goes to the open request it answers. Ids are scoped by direction
   and, over HTTP, by the POST that carried them (``meta.stream``); clients may reuse ids
   once answered, so the most recent open request with that id wins;
2. a ``notifications/progress`` goes to the open request whose ``progressToken`` it
   carries;
3. a message that travelled on the HTTP response stream of a POST goes to the request(s)
   of that POST (the transport already told us the cause);
4. anything else goes to the most recent client message of the same client session
   (``meta.session``), or, where there are no sessions (stdio, modern HTTP), the most
   recent client message at all.

A request the server sent to the client (``roles: request``) is followed, where the
recording has it, by the client's answer (``answer``): an item that is never sent but marks
where the server waited. Ids of server requests are the server's own sequence, so they are
keyed by direction (and by client session), never confused with the client's.

An ``HttpEvent`` for a POST stream records the status the server gave that POST; it is
kept on the exchange so an HTTP front can answer with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

import attrs

from cassette.core.ids import id_key
from cassette.core.jsonrpc import JSONObject, Kind, classify_value
from cassette.core.model import HttpEvent, MessageEvent

__all__ = ["Exchange", "Item", "Role", "cut"]

Role = Literal["response", "progress", "other", "request", "answer"]
_PROGRESS: Final = "notifications/progress"
Meta = Mapping[str, Any] | None


@attrs.frozen(slots=True)
class Item:
    """One server message of an exchange, with the transport facts it was recorded with."""

    role: Role
    message: JSONObject
    meta: Meta = None
    t: float = 0.0


@attrs.define(slots=True)
class Exchange:
    """One recorded client message and the server messages it caused."""

    key: int
    message: JSONObject
    seq: int
    meta: Meta = None
    items: list[Item] = attrs.field(factory=list)
    status: int | None = None  # a recorded non-default HTTP status for this POST
    t: float = 0.0  # when the client message was recorded
    #: pointers of typed sentinels in ``message`` (wildcards when matching)
    redacted: tuple[str, ...] = ()

    @property
    def progress_token(self) -> object:
        return progress_token(self.message)

    @property
    def stream(self) -> str | None:
        return _meta_str(self.meta, "stream")


def progress_token(message: JSONObject) -> object:
    """``params._meta.progressToken`` of a request, or ``None``."""
    params = message.get("params")
    if isinstance(params, dict):
        meta = params.get("_meta")
        if isinstance(meta, dict):
            return meta.get("progressToken")
    return None


def _meta_str(meta: Meta, key: str) -> str | None:
    value = meta.get(key) if meta else None
    return value if isinstance(value, str) else None


def _session(meta: Meta) -> object:
    return meta.get("session") if meta else None


def _id_key(stream: object, value: object) -> object:
    return (stream, *id_key(value))


class _Cutter:
    def __init__(self) -> None:
        self.preamble: list[Item] = []
        self.exchanges: list[Exchange] = []
        self.open: dict[object, Exchange] = {}
        self.by_token: dict[object, Exchange] = {}
        self.by_stream: dict[str, Exchange] = {}
        self.last_by_session: dict[object, Exchange] = {}
        self.last: Exchange | None = None
        self.server_requests: dict[object, Exchange | None] = {}

    def client(self, event: MessageEvent, kind: Kind) -> None:
        meta, message = event.meta, event.message
        exchange = Exchange(
            len(self.exchanges), message, event.seq, meta, t=event.t, redacted=event.redacted or ()
        )
        self.exchanges.append(exchange)
        self.last = exchange
        self.last_by_session[_session(meta)] = exchange
        stream = _meta_str(meta, "stream")
        if stream is not None:
            self.by_stream[stream] = exchange
        if kind is Kind.REQUEST:
            self.open[_id_key(stream, message["id"])] = exchange
            token = progress_token(message)
            if token is not None:
                self.by_token[_id_key(None, token)] = exchange

    def server(self, event: MessageEvent, kind: Kind) -> None:
        owner, role = self._owner(event, kind)
        if kind is Kind.REQUEST:
            role = "request"
            key = _id_key(_session(event.meta), event.message["id"])
            self.server_requests[key] = owner
        self._append(owner, Item(role, event.message, event.meta, event.t))

    def answer(self, event: MessageEvent) -> None:
        """The client answered a server request: mark it on the exchange that sent it."""
        key = _id_key(_session(event.meta), event.message.get("id"))
        if key in self.server_requests:
            owner = self.server_requests.pop(key)
            self._append(owner, Item("answer", event.message, event.meta, event.t))

    def _append(self, owner: Exchange | None, item: Item) -> None:
        if owner is None:
            self.preamble.append(item)
        else:
            owner.items.append(item)

    def _owner(self, event: MessageEvent, kind: Kind) -> tuple[Exchange | None, Role]:
        msg = event.message
        stream = _meta_str(event.meta, "stream")
        if kind in (Kind.RESPONSE, Kind.ERROR):
            owner = self.open.pop(_id_key(stream, msg.get("id")), None)
            if owner is None and stream is not None:  # e.g. answered on another stream
                owner = self.open.pop(_id_key(None, msg.get("id")), None)
            if owner is None:  # legacy HTTP+SSE: every answer comes on the one GET stream
                owner = self._open_in_session(_session(event.meta), msg.get("id"))
            if owner is not None:
                self.by_token.pop(_id_key(None, owner.progress_token), None)
                return owner, "response"
        elif kind is Kind.NOTIFICATION and msg.get("method") == _PROGRESS:
            params = msg.get("params")
            token = params.get("progressToken") if isinstance(params, dict) else None
            owner = self.by_token.get(_id_key(None, token))
            if owner is not None:
                return owner, "progress"
        if stream is not None and stream in self.by_stream:
            return self.by_stream[stream], "other"
        session = _session(event.meta)
        if session is not None and session in self.last_by_session:
            return self.last_by_session[session], "other"
        return self.last, "other"

    def _open_in_session(self, session: object, msg_id: object) -> Exchange | None:
        """The most recent open request with ``msg_id`` from ``session``, on any stream."""
        wanted = id_key(msg_id)
        for key, exchange in reversed(list(self.open.items())):
            same_id = key[1:] == wanted  # type: ignore[index]
            if same_id and _session(exchange.meta) == session:
                return self.open.pop(key)
        return None

    def http(self, event: HttpEvent) -> None:
        exchange = self.by_stream.get(event.stream)
        if exchange is not None and event.method == "POST":
            exchange.status = event.status


def cut(events: Iterable[object]) -> tuple[list[Item], list[Exchange]]:
    """Split an event log into a preamble and exchanges (see the module docstring)."""
    cutter = _Cutter()
    client, answer, server = cutter.client, cutter.answer, cutter.server
    for event in events:
        if not isinstance(event, MessageEvent):
            if isinstance(event, HttpEvent):
                cutter.http(event)
            continue
        kind = classify_value(event.message)
        if event.dir == "c2s":
            if kind is Kind.REQUEST or kind is Kind.NOTIFICATION:
                client(event, kind)
            elif kind is Kind.RESPONSE or kind is Kind.ERROR:
                answer(event)
        else:
            server(event, kind)
    return cutter.preamble, cutter.exchanges
