"""Answer a live client from a recording: sans-IO, one client message in, messages out.

Theory of operation
-------------------
At construction the event log is cut into *exchanges*. Each client message (request or
notification) opens one, and every server message is attributed to the exchange that
caused it:

* a response or error goes to the request whose id it answers (the most recent open one
  with that id: ids are scoped by direction, and clients may reuse them);
* a ``notifications/progress`` goes to the open request whose ``progressToken`` it carries;
* anything else the server said goes to the most recent client message before it, which
  is the only cause the log can show. Server messages before any client message form the
  *preamble*, sent when a session starts.

Replaying an exchange emits its server messages in recorded order, so a notification
recorded before a response reaches the client before that response (progress callbacks
fire), and one recorded after it follows it. The response takes the live request's id and
each progress notification takes the live request's progress token. Raw lines, stderr and
exit events are kept in the cassette for people and for lint, but a replay's output is
JSON-RPC only.

Serving the era the header names: under a legacy cassette an unrecorded
``server/discover`` gets ``Method not found``, exactly what a legacy server says to a
dual-era client's probe, so the client falls back to ``initialize`` as it did live.

Server-to-client requests are replayed in place with their recorded ids; waiting for the
client's answer before continuing is the seam ``_on_client_answer`` leaves for later.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, Literal

import attrs

from cassette.errors import ReplayMiss
from cassette.jsonrpc import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REPLAY_MISS,
    JSONObject,
    Kind,
    classify,
    classify_value,
    error_response,
)
from cassette.matching import Candidate, FingerprintMatcher, Matcher, MissReport, Strategy
from cassette.model import Era, Header, MessageEvent, Recording, era_of

__all__ = ["Exchange", "Replayer", "Reply"]

Role = Literal["response", "progress", "other"]
_PROGRESS: Final = "notifications/progress"


@attrs.frozen(slots=True)
class Reply:
    """What to send back, in order, and the miss that produced an error, if one did."""

    messages: tuple[Any, ...] = ()
    miss: MissReport | None = None


@attrs.define(slots=True)
class Exchange:
    """One recorded client message and the server messages it caused."""

    key: int
    message: JSONObject
    seq: int
    items: list[tuple[Role, JSONObject]] = attrs.field(factory=list)

    @property
    def progress_token(self) -> object:
        return _progress_token(self.message)


def _progress_token(message: JSONObject) -> object:
    params = message.get("params")
    if isinstance(params, dict):
        meta = params.get("_meta")
        if isinstance(meta, dict):
            return meta.get("progressToken")
    return None


def _cut(events: Iterable[object]) -> tuple[list[JSONObject], list[Exchange]]:
    """Split an event log into a preamble and exchanges (see the module docstring)."""
    preamble: list[JSONObject] = []
    exchanges: list[Exchange] = []
    open_by_id: dict[object, Exchange] = {}
    by_token: dict[object, Exchange] = {}
    cause: Exchange | None = None
    for event in events:
        if not isinstance(event, MessageEvent):
            continue
        msg = event.message
        kind = classify_value(msg)
        if event.dir == "c2s":
            if kind in (Kind.REQUEST, Kind.NOTIFICATION):
                cause = Exchange(len(exchanges), msg, event.seq)
                exchanges.append(cause)
                if kind is Kind.REQUEST:
                    open_by_id[_id_key(msg["id"])] = cause
                    token = cause.progress_token
                    if token is not None:
                        by_token[_id_key(token)] = cause
            continue
        owner, role = _attribute(msg, kind, cause, open_by_id, by_token)
        if owner is None:
            preamble.append(msg)
        else:
            owner.items.append((role, msg))
    return preamble, exchanges


def _attribute(
    msg: JSONObject,
    kind: Kind,
    cause: Exchange | None,
    open_by_id: dict[object, Exchange],
    by_token: dict[object, Exchange],
) -> tuple[Exchange | None, Role]:
    if kind in (Kind.RESPONSE, Kind.ERROR):
        owner = open_by_id.pop(_id_key(msg.get("id")), None)
        if owner is not None:
            by_token.pop(_id_key(owner.progress_token), None)
            return owner, "response"
    elif kind is Kind.NOTIFICATION and msg.get("method") == _PROGRESS:
        params = msg.get("params")
        token = params.get("progressToken") if isinstance(params, dict) else None
        owner = by_token.get(_id_key(token))
        if owner is not None:
            return owner, "progress"
    return cause, "other"


def _id_key(value: object) -> object:
    # 1 and "1" are different JSON-RPC ids; True is not an id at all.
    return (type(value).__name__, value)


class Replayer:
    """Sans-IO replay of one session: feed client messages, send back what it returns."""

    def __init__(
        self,
        recording: Recording,
        strategy: str | Strategy = "default",
        *,
        matcher_factory: Callable[[Sequence[Candidate], str | Strategy], Matcher] | None = None,
    ) -> None:
        self.header: Header = recording.header
        self.era: Era = era_of(recording.header)
        self._preamble, self._exchanges = _cut(recording.events)
        factory = matcher_factory or FingerprintMatcher
        requests = [
            Candidate(x.key, x.message, x.seq) for x in self._exchanges if "id" in x.message
        ]
        notes = [
            Candidate(x.key, x.message, x.seq) for x in self._exchanges if "id" not in x.message
        ]
        self.matcher: Matcher = factory(requests, strategy)
        # Notifications are matched strictly and silently: a client may send any it likes.
        self._notes = FingerprintMatcher(notes, "strict")
        self.misses: list[MissReport] = []
        source = getattr(recording, "source", None)
        self.source: str | None = str(source) if source is not None else None

    # -- public API --------------------------------------------------------------------

    def start(self) -> Reply:
        """What the server said before the client said anything (usually nothing)."""
        return Reply(tuple(self._preamble))

    def receive_frame(self, data: bytes | str) -> Reply:
        """Answer one frame exactly as the client sent it (a stdio line, an HTTP body)."""
        if not data.strip():
            return Reply()  # a blank line carries no message; real servers skip it too
        classified = classify(data)
        if classified.kind is Kind.NOT_JSON:
            return Reply((error_response(None, PARSE_ERROR, "Parse error"),))
        return self._dispatch(classified.kind, classified.value)

    def receive(self, message: Any) -> Reply:
        """Answer one decoded client message (an object, or a batch list)."""
        return self._dispatch(classify_value(message), message)

    def describe(self, report: MissReport) -> str:
        """One line for a person: the miss and where its closest recording is."""
        return _miss_line(report, self.source)

    def summary(self) -> str:
        """A one-line-per-miss account for the end of a session ("" when none)."""
        if not self.misses:
            return ""
        lines = [f"{len(self.misses)} request(s) had no recording:"]
        lines += [f"  - {_miss_line(m, self.source)}" for m in self.misses]
        return "\n".join(lines)

    # -- dispatch ----------------------------------------------------------------------

    def _dispatch(self, kind: Kind, value: Any) -> Reply:
        if kind is Kind.REQUEST:
            return self._request(value)
        if kind is Kind.NOTIFICATION:
            return Reply(tuple(self._notification(value)))
        if kind in (Kind.RESPONSE, Kind.ERROR):
            return self._on_client_answer(value)
        if kind is Kind.BATCH:
            return self._batch(value)
        msg_id = value.get("id") if isinstance(value, dict) else None
        return Reply((error_response(msg_id, INVALID_REQUEST, "Invalid Request"),))

    def _request(self, message: JSONObject) -> Reply:
        try:
            key = self.matcher.match(message)
        except ReplayMiss as miss:
            return self._unanswered(message, miss)
        return Reply(tuple(self._play(self._exchanges[key], message)))

    def _notification(self, message: JSONObject) -> list[Any]:
        try:
            key = self._notes.match(message)
        except ReplayMiss:
            return []
        return self._play(self._exchanges[key], message)

    def _on_client_answer(self, _message: JSONObject) -> Reply:
        # The client answered a server-to-client request. Nothing to send yet; replaying
        # what the recording shows the server waiting for belongs here.
        return Reply()

    def _batch(self, batch: list[Any]) -> Reply:
        before: list[Any] = []
        answers: list[Any] = []
        misses: list[MissReport] = []
        for element in batch:
            kind = classify_value(element)
            if kind is Kind.BATCH:
                answers.append(error_response(None, INVALID_REQUEST, "Invalid Request"))
                continue
            reply = self._dispatch(kind, element)
            if reply.miss is not None:
                misses.append(reply.miss)
            for msg in reply.messages:
                is_answer = isinstance(msg, dict) and "method" not in msg
                if is_answer and (kind is not Kind.REQUEST or msg.get("id") == element.get("id")):
                    answers.append(msg)
                else:
                    before.append(msg)
        out = (*before, answers) if answers else tuple(before)
        return Reply(out, misses[0] if misses else None)

    def _unanswered(self, message: JSONObject, miss: ReplayMiss) -> Reply:
        method = message.get("method")
        msg_id = message["id"]
        if method == "ping":
            return Reply(({"jsonrpc": "2.0", "id": msg_id, "result": {}},))
        if method == "server/discover" and self.era == "legacy":
            return Reply((error_response(msg_id, METHOD_NOT_FOUND, "Method not found"),))
        report = miss.report if isinstance(miss.report, MissReport) else None
        if report is None:
            report = MissReport("not-recorded", str(method), str(miss))
        self.misses.append(report)
        text = f"cassette-mcp: {_miss_line(report, self.source)}"
        return Reply((error_response(msg_id, REPLAY_MISS, text, report.as_data()),), report)

    # -- output ------------------------------------------------------------------------

    def _play(self, exchange: Exchange, live: JSONObject) -> list[Any]:
        out: list[Any] = []
        live_id = live.get("id")
        live_token = _progress_token(live)
        for role, msg in exchange.items:
            if role == "response":
                out.append({**msg, "id": live_id})
            elif role == "progress":
                # A client that asked for no progress gets none; one that did gets its own
                # token, or its callback would never fire.
                if live_token is not None:
                    out.append({**msg, "params": {**msg["params"], "progressToken": live_token}})
            else:
                out.append(msg)
        return out


def _miss_line(report: MissReport, source: str | None) -> str:
    line = report.closest_line
    if line is None:
        return report.summary
    where = f"{source}:{line}" if source else f"line {line}"
    return f"{report.summary} (closest recording: {where})"
