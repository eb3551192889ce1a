"""Answer a live client from a recording: sans-IO, one client message in, messages out.

Theory of operation
-------------------
At construction the event log is cut into *exchanges* (see ``cassette.exchanges``): each
client message with the server messages it caused. Server messages before any client
message form the *preamble*, sent when a session starts.

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

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from cassette.errors import ReplayMiss
from cassette.exchanges import Exchange, Item, cut, progress_token
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
from cassette.model import Era, Header, Recording, era_of

__all__ = ["Exchange", "Replayer", "Reply"]


@attrs.frozen(slots=True)
class Reply:
    """What to send back, in order, and the miss that produced an error, if one did.

    ``metas`` runs parallel to ``messages``: the transport facts each message was recorded
    with (``None`` for messages the replay made up, such as a miss error), so a network
    front can route it to the stream it travelled on. ``exchange`` is the recording that
    answered, when one did; its ``meta`` and ``status`` tell a front how it was answered.
    """

    messages: tuple[Any, ...] = ()
    miss: MissReport | None = None
    metas: tuple[Mapping[str, Any] | None, ...] = ()
    exchange: Exchange | None = None


def _reply(messages: Sequence[Any], metas: Sequence[Mapping[str, Any] | None] = ()) -> Reply:
    return Reply(tuple(messages), None, tuple(metas) or (None,) * len(messages))


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
        self._preamble, self._exchanges = cut(recording.events)
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
        return _played(self._preamble)

    def receive_frame(self, data: bytes | str) -> Reply:
        """Answer one frame exactly as the client sent it (a stdio line, an HTTP body)."""
        if not data.strip():
            return Reply()  # a blank line carries no message; real servers skip it too
        classified = classify(data)
        if classified.kind is Kind.NOT_JSON:
            return _reply((error_response(None, PARSE_ERROR, "Parse error"),))
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
            return self._notification(value)
        if kind in (Kind.RESPONSE, Kind.ERROR):
            return self._on_client_answer(value)
        if kind is Kind.BATCH:
            return self._batch(value)
        msg_id = value.get("id") if isinstance(value, dict) else None
        return _reply((error_response(msg_id, INVALID_REQUEST, "Invalid Request"),))

    def _request(self, message: JSONObject) -> Reply:
        try:
            key = self.matcher.match(message)
        except ReplayMiss as miss:
            return self._unanswered(message, miss)
        return self._play(self._exchanges[key], message)

    def _notification(self, message: JSONObject) -> Reply:
        try:
            key = self._notes.match(message)
        except ReplayMiss:
            return Reply()
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
        return Reply(out, misses[0] if misses else None, (None,) * len(out))

    def _unanswered(self, message: JSONObject, miss: ReplayMiss) -> Reply:
        method = message.get("method")
        msg_id = message["id"]
        if method == "ping":
            return _reply(({"jsonrpc": "2.0", "id": msg_id, "result": {}},))
        if method == "server/discover" and self.era == "legacy":
            return _reply((error_response(msg_id, METHOD_NOT_FOUND, "Method not found"),))
        report = miss.report if isinstance(miss.report, MissReport) else None
        if report is None:
            report = MissReport("not-recorded", str(method), str(miss))
        self.misses.append(report)
        text = f"cassette-mcp: {_miss_line(report, self.source)}"
        error = error_response(msg_id, REPLAY_MISS, text, report.as_data())
        return Reply((error,), report, (None,))

    # -- output ------------------------------------------------------------------------

    def _play(self, exchange: Exchange, live: JSONObject) -> Reply:
        out: list[Any] = []
        metas: list[Mapping[str, Any] | None] = []
        live_id = live.get("id")
        live_token = progress_token(live)
        for item in exchange.items:
            msg = item.message
            if item.role == "response":
                msg = {**msg, "id": live_id}
            elif item.role == "progress":
                # A client that asked for no progress gets none; one that did gets its own
                # token, or its callback would never fire.
                if live_token is None:
                    continue
                msg = {**msg, "params": {**msg["params"], "progressToken": live_token}}
            out.append(msg)
            metas.append(item.meta)
        return Reply(tuple(out), None, tuple(metas), exchange)


def _played(items: Sequence[Item]) -> Reply:
    return Reply(tuple(i.message for i in items), None, tuple(i.meta for i in items))


def _miss_line(report: MissReport, source: str | None) -> str:
    line = report.closest_line
    if line is None:
        return report.summary
    where = f"{source}:{line}" if source else f"line {line}"
    return f"{report.summary} (closest recording: {where})"
