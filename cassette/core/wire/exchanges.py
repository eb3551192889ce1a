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
   except what a 2026-07-28 ``subscriptions/listen`` stream carries after its
   acknowledgement: that was caused by the client message just before it;
4. anything else goes to the most recent client message of the same client session
   (``meta.session``), or, where there are no sessions (stdio, modern HTTP), the most
   recent client message at all.

A request the server sent to the client (``roles: request``) is followed, where the
recording has it, by the client's answer (``answer``): an item that is never sent but marks
where the server waited. Ids of server requests are the server's own sequence, so they are
keyed by direction (and by client session), never confused with the client's.

An ``HttpEvent`` for a POST stream records the status the server gave that POST; it is
kept on the exchange so an HTTP front can answer with it. A status of 400 or more means
the server *rejected* the request before serving it (no session yet, a bad header): the
exchange is marked ``rejected``, and a replay offers it only to a request rejected the same
way (``cassette.core.replay.replayer``). What a rejected GET or DELETE carried (an error body)
belongs to no exchange: it answered that HTTP request, not a client message. A POST refused
for its credentials (401, or 403 for want of scope: ``_UNAUTHORIZED``) is no part of the
session at all: the client sent it again once authorized, and a replay needs no
credentials, so the exchange is left out (the recording proxy writes no body for it).

A client frame that is not one JSON-RPC message (a batch, an invalid message, a line that
is not JSON) is kept as a *raw exchange*: what the server said after it (an error with a
null id, a batch of answers, or nothing) belongs to it, never to the exchange before it, so
a replay answers the same frame the same way and another request never carries its
answers. A request the recording leaves unanswered is marked with why: the client
``cancelled`` it, or the server ``exited`` while it was open (a crash mid-call).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

import attrs

from cassette.core.wire.ids import id_key
from cassette.core.wire.jsonrpc import JSONObject, Kind, classify, classify_value
from cassette.core.wire.meta import LATE, SESSION, STREAM
from cassette.core.wire.model import ExitEvent, HttpEvent, MessageEvent, RawEvent

__all__ = ["Exchange", "Item", "Role", "cut", "raw_key"]

Role = Literal["response", "progress", "other", "request", "answer"]
_PROGRESS: Final = "notifications/progress"
_LISTEN: Final = "subscriptions/listen"
_ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
_REJECTED: Final = 400  # the lowest HTTP status that refuses a request
_UNAUTHORIZED: Final = frozenset({401, 403})  # refused for the credentials it carried
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
    raw: str | None = None  # a raw exchange's frame, as ``raw_key`` writes it
    cancelled: bool = False  # the client cancelled this request while recording
    exited: bool = False  # the server exited while this request was open

    @property
    def rejected(self) -> bool:
        """The server refused this request at the HTTP level (a status of 400 or more)."""
        return self.status is not None and self.status >= _REJECTED

    #: pointers of typed sentinels in ``message`` (wildcards when matching)
    redacted: tuple[str, ...] = ()

    @property
    def progress_token(self) -> object:
        return progress_token(self.message)

    @property
    def answered(self) -> bool:
        """Whether the recording holds the response to this client message."""
        for item in self.items:  # noqa: SIM110 (any() and its generator cost more, once a call)
            if item.role == "response":
                return True
        return False

    @property
    def stream(self) -> str | None:
        return _meta_str(self.meta, STREAM)


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
    return meta.get(SESSION) if meta else None


def _id_key(stream: object, value: object) -> object:
    return (stream, *id_key(value))


def raw_key(frame: bytes | str) -> str:
    """How a raw client frame is recognised: its JSON in canonical form when it is JSON (key
    order and spacing aside), else its text without surrounding whitespace."""
    text = frame.decode("utf-8", "replace") if isinstance(frame, bytes) else frame
    classified = classify(text)
    if classified.kind is Kind.NOT_JSON:
        return text.strip()
    return json.dumps(classified.value, sort_keys=True, separators=(",", ":"))


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
        self.refused_streams: set[str] = set()  # GETs and DELETEs the server refused
        self.unauthorized: set[int] = set()  # keys of POSTs refused for their credentials

    def client(self, event: MessageEvent, kind: Kind) -> None:
        meta, message = event.meta, event.message
        exchange = Exchange(
            len(self.exchanges), message, event.seq, meta, t=event.t, redacted=event.redacted or ()
        )
        self.exchanges.append(exchange)
        self.last = exchange
        self.last_by_session[_session(meta)] = exchange
        stream = _meta_str(meta, STREAM)
        if stream is not None:
            self.by_stream[stream] = exchange
        if kind is Kind.REQUEST:
            self.open[_id_key(stream, message["id"])] = exchange
            token = progress_token(message)
            if token is not None:
                self.by_token[_id_key(None, token)] = exchange

    def raw_client(self, event: RawEvent) -> None:
        """A client frame that is not one message: an exchange of its own (see above)."""
        if event.text is None:
            return
        meta = event.meta
        exchange = Exchange(len(self.exchanges), {}, event.seq, meta, t=event.t)
        exchange.raw = raw_key(event.text)
        self.exchanges.append(exchange)
        self.last = exchange
        self.last_by_session[_session(meta)] = exchange
        stream = _meta_str(meta, STREAM)
        if stream is not None:
            self.by_stream[stream] = exchange

    def raw_server(self, event: RawEvent) -> None:
        """A server frame that is JSON but not one message (a batch of answers) answers the
        raw exchange before it; anything else raw is the server's chatter, not replayed."""
        classified = classify(event.text or "")
        if classified.kind is not Kind.BATCH or self.last is None or self.last.raw is None:
            return
        self.last.items.append(Item("response", classified.value, event.meta, event.t))

    def cancelled(self, message: JSONObject, meta: Meta) -> None:
        """The client cancelled a request it sent: mark it, if it is still open."""
        params = message.get("params")
        request_id = params.get("requestId") if isinstance(params, dict) else None
        wanted = id_key(request_id)
        for key, exchange in self.open.items():
            same = key[1:] == wanted  # type: ignore[index]
            if same and _session(exchange.meta) == _session(meta):
                exchange.cancelled = True

    def exited(self) -> None:
        """The server process ended: every request still open never got its answer (one
        the client cancelled needed none: the exit did not cut it short)."""
        for exchange in self.open.values():
            exchange.exited = not exchange.cancelled

    def server(self, event: MessageEvent, kind: Kind) -> None:
        if self.refused_streams and _meta_str(event.meta, STREAM) in self.refused_streams:
            return  # the body of a refused GET or DELETE: it answered no client message
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
        stream = _meta_str(event.meta, STREAM)
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
            carrier = self.by_stream[stream]
            if kind is Kind.ERROR and msg.get("id") is None and self._close(stream, carrier):
                return carrier, "response"  # refused before its id was read: its answer
            cause = self._cause_on_listen(carrier, msg)
            return (cause or carrier), "other"
        session = _session(event.meta)
        if session is not None and session in self.last_by_session:
            return self.last_by_session[session], "other"
        return self.last, "other"

    def _cause_on_listen(self, carrier: Exchange, msg: JSONObject) -> Exchange | None:
        """A 2026-07-28 listen stream carries what other requests caused (a tool call that
        changed the tool list): such a notification belongs to the client message just
        before it, so a replay sends it when that is replayed, not when the listen opens.
        The stream's own acknowledgement stays with the listen."""
        if carrier.message.get("method") != _LISTEN or msg.get("method") == _ACKNOWLEDGED:
            return None
        last = self.last_by_session.get(_session(carrier.meta), self.last)
        return last if last is not None and last is not carrier else None

    def _close(self, stream: str, exchange: Exchange) -> bool:
        """Take ``exchange`` off the open requests if it is open on ``stream``."""
        key = _id_key(stream, exchange.message.get("id"))
        if "id" not in exchange.message or self.open.get(key) is not exchange:
            return False
        del self.open[key]
        self.by_token.pop(_id_key(None, exchange.progress_token), None)
        return True

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
            if event.status in _UNAUTHORIZED and not exchange.items:
                self.unauthorized.add(exchange.key)
                for key, open_exchange in list(self.open.items()):
                    if open_exchange is exchange:
                        del self.open[key]
        elif event.method != "POST" and event.status >= _REJECTED:
            self.refused_streams.add(event.stream)


def cut(events: Iterable[object]) -> tuple[list[Item], list[Exchange]]:
    """Split an event log into a preamble and exchanges (see the module docstring)."""
    cutter = _Cutter()
    client, answer, server = cutter.client, cutter.answer, cutter.server
    for event in events:
        if not isinstance(event, MessageEvent):
            _other(cutter, event)
            continue
        kind = classify_value(event.message)
        if event.dir == "c2s":
            if kind is Kind.REQUEST or kind is Kind.NOTIFICATION:
                if event.message.get("method") == "notifications/cancelled":
                    cutter.cancelled(event.message, event.meta)
                client(event, kind)
            elif kind is Kind.RESPONSE or kind is Kind.ERROR:
                answer(event)
        else:
            server(event, kind)
    if cutter.unauthorized:
        return cutter.preamble, _authorized(cutter.exchanges, cutter.unauthorized)
    return cutter.preamble, cutter.exchanges


def _authorized(exchanges: list[Exchange], refused: set[int]) -> list[Exchange]:
    """The exchanges without those refused for their credentials, keys renumbered (a key
    is an exchange's index)."""
    kept = [x for x in exchanges if x.key not in refused]
    for index, exchange in enumerate(kept):
        exchange.key = index
    return kept


def _other(cutter: _Cutter, event: object) -> None:
    """An event that is not a message: an HTTP status, a raw frame, the server's exit."""
    if isinstance(event, HttpEvent):
        cutter.http(event)
    elif isinstance(event, RawEvent) and not (event.meta and event.meta.get(LATE)):
        if event.dir == "c2s":
            cutter.raw_client(event)
        else:
            cutter.raw_server(event)
    elif isinstance(event, ExitEvent):
        cutter.exited()
