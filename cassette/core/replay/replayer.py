"""Answer a live client from a recording: sans-IO, one client message in, messages out.

Theory of operation
-------------------
At construction the event log is cut into *exchanges* (``cassette.core.wire.exchanges``): each
client message with the server messages it caused; server messages before any client
message form the *preamble*, sent when a session starts.

A client request is answered in four steps (``_request``): **before**, **match**, **play**,
**after**. The first and the last are the era machine's (``cassette.core.replay.negotiation``):
before matching it learns who the client is, chooses the group of the cassette that
answers it (the main recording or a variant session, ``cassette.core.replay.groups``) and answers
what the era rules answer; after playing it decides what the client is sent (warnings, and
for a legacy client of a modern recording its shape, status and input rounds). In between
the replayer matches the request in the group (``cassette.core.replay.matching``) and plays the
exchange (``cassette.core.replay.playback``): its server messages in recorded order (a
notification recorded before the response reaches the client before it), the response
under the live id, progress under the live token, server requests under this session's
own ids, stopping where the recording shows the client answering until the live answer
comes (``Reply.awaiting``; one that differs is a warning, under ``strict`` a miss). A
server request for a capability the client did not declare is left out, with a warning (a
miss under ``strict``). Raw lines, stderr and exit events are kept for people and for lint;
a replay's output is JSON-RPC only.

Nothing is left to hang: a request whose recording has no answer, and a server request the
client never answers, end at the runtime's deadlines (``cassette.core.replay.waits``). A request
nothing recorded is answered as the recording makes certain
(``cassette.core.replay.era_answers.unrecorded``), else it is a miss; a frame that is not one
JSON-RPC message is answered as the recording answered the same frame (a raw exchange),
or ignored if it was, and only a frame never recorded gets the standard error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cassette.core.eras.listen import unrecorded_listen
from cassette.core.redaction.redacted import ENVELOPE
from cassette.core.replay.era_answers import unrecorded
from cassette.core.replay.groups import Groups, MatcherFactory
from cassette.core.replay.matching import FingerprintMatcher, Matcher, Strategy, get_strategy
from cassette.core.replay.negotiation import Negotiation
from cassette.core.replay.playback import Played
from cassette.core.replay.prepared import Prepared
from cassette.core.replay.replay_parts import (
    answer_batch,
    asked_at_end,
    miss_line,
    needs_answer,
    params,
    played,
    played_raw,
    summary_lines,
)
from cassette.core.replay.reply import Reply, _reply
from cassette.core.replay.shown import Shown, ShownPolicy
from cassette.core.replay.waits import Waits
from cassette.core.wire.exchanges import Exchange, raw_key
from cassette.core.wire.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    REPLAY_MISS,
    SINGLE_MESSAGES,
    JSONObject,
    Kind,
    classify_parts,
    classify_value,
    error_response,
)
from cassette.core.wire.model import Era, Header, Recording
from cassette.errors import ReplayMiss

if TYPE_CHECKING:
    from cassette.core.replay.misses import MissReport
    from cassette.core.replay.paused import Paused

__all__ = ["Replayer", "ShownPolicy"]


class Replayer:
    """Sans-IO replay of one session: feed client messages, send back what it returns."""

    def __init__(
        self,
        recording: Recording,
        strategy: str | Strategy = "default",
        *,
        matcher_factory: MatcherFactory | None = None,
        environ: Mapping[str, str] | None = None,
        prepared: Prepared | None = None,
        shown: ShownPolicy | None = None,
        start_note: str | None = None,
    ) -> None:
        self.header: Header = recording.header
        #: said with every miss of a later server start (``cassette.core.replay.starts``): the
        #: client restarted the server, and which start of the cassette answered it
        self.start_note = start_note
        ignore = get_strategy(strategy).ignore
        ready = prepared if prepared is not None else Prepared.of(recording, ignore)
        self.misses: list[MissReport] = []
        source = getattr(recording, "source", None)
        self.source: str | None = str(source) if source is not None else None
        #: what the session waits for: client answers, and answers the recording lacks
        self._waits = Waits(self.misses, self.source)
        #: how a live message is shown to a person: redacted on a redacted cassette
        self._shown = Shown.of(recording, environ, shown)
        #: the group of the cassette answering the session, chosen by the era machine
        self._groups = Groups(ready, strategy, matcher_factory, ignore)
        #: the main recording's matcher, whatever group a handshake adopts (what a run
        #: leaves unplayed is told of the main recording only: variants are alternatives)
        self.main_matcher: Matcher = self._groups.current.matcher
        #: the era machine: asked before matching and after playing, and at no other point
        self._terms = Negotiation(self._groups, self._waits, self._shown)
        #: what the client is sent of a reply (``Negotiation.after``): every reply's way out
        self._after = self._terms.after

    @property
    def client_era(self) -> Era | None:
        """The live client's era, once a message said (``Negotiation.client_era``)."""
        return self._terms.client_era

    @property
    def era(self) -> Era:
        """The era of the group answering the session (a variant's may be the other)."""
        return self._groups.current.prepared.era

    @property
    def matcher(self) -> Matcher:
        """The matcher of the group answering the session."""
        return self._groups.current.matcher

    # -- public API --------------------------------------------------------------------

    def start(self) -> Reply:
        """What the server said before the client said anything (usually nothing)."""
        return played(self._groups.current.prepared.preamble)

    def receive_frame(self, data: bytes | str) -> Reply:
        """Answer one frame exactly as the client sent it (a stdio line, an HTTP body)."""
        if not data.strip():
            return Reply()  # a blank line carries no message; real servers skip it too
        kind, value, problem, text = classify_parts(data)
        # the raws first: most cassettes have none, and hashing a Kind is a Python call
        if self._groups.current.prepared.raws and kind not in SINGLE_MESSAGES:
            recorded = self._raw(data)
            if recorded is not None:
                return self._after(None, recorded)
        if kind is Kind.NOT_JSON or text is None:
            why = f"Parse error: {problem}" if problem else "Parse error"
            return _reply((error_response(None, PARSE_ERROR, why),))
        return self._dispatch(kind, value, text)

    def receive(self, message: Any) -> Reply:
        """Answer one decoded client message (an object, or a batch list)."""
        return self._dispatch(classify_value(message), message)

    def describe(self, report: MissReport) -> str:
        """One line for a person: the miss and where its closest recording is."""
        line = miss_line(report, self.source)
        if self.start_note is None:
            return line
        from cassette.core.words.said import prose, said

        return said(prose(line), f"; {self.start_note}")

    @property
    def repeats(self) -> int:
        """Requests answered again with their last recording (``allow_repeats``)."""
        matcher = self.main_matcher
        return matcher.repeats if isinstance(matcher, FingerprintMatcher) else 0

    def summary(self) -> str:
        """A one-line-per-miss account for the end of a session, and the count of answers
        repeated on request ("" when neither)."""
        text = summary_lines(self.misses, self.repeats, self.source)
        if text and self.misses and self.start_note is not None:
            from cassette.core.words.said import said

            text = said(text, f"\n  ({self.start_note})")
        return text

    def end_of_input(self) -> Reply:
        """The client's input ended (a stdio client closed the server's stdin): what the
        recorded server still asks it then (``replay_parts.asked_at_end``)."""
        if self.client_era != "legacy":
            return Reply()
        state = self._groups.current
        return asked_at_end(self._groups.main.surface, state.playback, state.prepared)

    def expire(self, server_id: object) -> Reply:
        """The client never answered server request ``server_id``: fail what waited on it."""
        return self._after(None, self._waits.expire(server_id))

    def undelivered(self, server_id: object) -> Reply:
        """A front could not deliver server request ``server_id`` (a live server drops what
        it cannot send, e.g. with no GET stream open): go on as if it had not been sent."""
        failed = self._waits.abandon(server_id, "could not be sent it")
        if failed is not None:
            return failed
        paused = self._waits.answered(server_id)
        if paused is None:
            return Reply()
        return self._after(None, self._resume(paused, ()))

    def give_up(self, request_id: object) -> Reply:
        """The request ``request_id``, which the recording leaves unanswered, is still
        unanswered at its deadline: fail it with an error naming why (a miss)."""
        return self._after(None, self._waits.give_up(request_id))

    @property
    def waiting(self) -> tuple[object, ...]:
        """Live ids of server requests still waiting for the client's answer."""
        return self._waits.waiting

    # -- one client message ------------------------------------------------------------

    def _dispatch(self, kind: Kind, value: Any, raw: str | None = None) -> Reply:
        """One client message, or one element of a batch: a request goes before, match,
        play, after (``_request``); anything else is answered here, then after."""
        if kind is Kind.REQUEST:
            return self._request(value, raw)  # redacted where it may be shown (Shown)
        if self._shown.literals is not None and isinstance(value, dict) and value.keys() - ENVELOPE:
            value = self._shown.message(value, raw)
        if kind is Kind.NOTIFICATION:
            reply = self._notification(value)
        elif kind in (Kind.RESPONSE, Kind.ERROR):
            settled = self._waits.round_answered(value) if self._waits.rounds else None
            if isinstance(settled, dict):  # the recorded retry: a request like any other
                return self._request(settled)
            reply = self._on_client_answer(value) if settled is None else settled
        elif kind is Kind.BATCH:
            reply = answer_batch(value, self._dispatch)
        else:
            msg_id = value.get("id") if isinstance(value, dict) else None
            reply = _reply((error_response(msg_id, INVALID_REQUEST, "Invalid Request"),))
        return self._after(value, reply)

    def _request(self, message: JSONObject, raw: str | None = None) -> Reply:
        """Before (the era machine), match, play, after (the era machine)."""
        chosen = self._terms.before(message, raw)
        if isinstance(chosen, Reply):  # the era rules answer it
            return self._after(message, chosen)
        if chosen is not None:  # a recording chosen before matching (a refusal, a listing)
            return self._after(message, self._play(chosen[0], message, chosen[1]))
        found = self._find(message, raw)
        if isinstance(found, Reply):  # what the recording makes certain, or the miss
            return self._after(message, found)
        exchange, message = found
        return self._after(message, self._play(exchange, message), raw, matched=True)

    def _find(self, message: JSONObject, raw: str | None) -> tuple[Exchange, JSONObject] | Reply:
        """The recording that answers ``message`` and the message as matched, or the miss.
        A miss is told of the redacted request (``Shown.described``), so that is matched
        again."""
        state = self._groups.current
        try:
            return state.prepared.exchanges[state.matcher.match(message)], message
        except ReplayMiss as miss:
            shown = self._shown.described(message, raw)
            if shown is message:
                return self._unanswered(message, miss)
            try:
                return state.prepared.exchanges[state.matcher.match(shown)], shown
            except ReplayMiss as again:
                return self._unanswered(shown, again)

    def _unanswered(self, message: JSONObject, miss: ReplayMiss) -> Reply:
        prepared, probe = self._groups.current.prepared, self._groups.main.probe
        handshake = prepared.handshake
        certain = unrecorded(message, prepared.era, handshake, self.client_era, probe)
        if certain is not None:  # asked on the client's own: the recording makes it certain
            return _reply((certain,))
        listen = unrecorded_listen(message, handshake)
        if listen is not None:  # a listen stream, as any 2026-07-28 server opens one
            return self._play(listen, message)
        from cassette.core.replay.misses import MissReport

        report = miss.report if isinstance(miss.report, MissReport) else None
        if report is None:
            report = MissReport("not-recorded", str(message.get("method")), str(miss))
        # what the client is told may reach a log: the values it quotes are redacted
        report = self._shown.told(report)
        self.misses.append(report)
        text = f"cassette-mcp: {self.describe(report)}"
        error = error_response(message["id"], REPLAY_MISS, text, report.as_data())
        return Reply((error,), report, (None,))

    def _notification(self, message: JSONObject) -> Reply:
        if message.get("method") == "notifications/cancelled":
            self._waits.cancel(params(message).get("requestId"))
        state = self._groups.current
        try:
            key = state.notes.match(message)
        except ReplayMiss:
            return Reply()
        return self._play(state.prepared.exchanges[key], message)

    def _on_client_answer(self, message: JSONObject) -> Reply:
        paused = self._waits.answered(message.get("id"))
        if paused is None:
            return Reply()  # an answer to nothing we are waiting for: a real server ignores it
        checked = self._waits.compared(paused, message, self.matcher.strict)
        return checked if isinstance(checked, Reply) else self._resume(paused, checked)

    def _resume(self, paused: Paused, warnings: tuple[str, ...]) -> Reply:
        playback = self._groups.current.playback
        played = playback.play(paused.exchange, paused.live, paused.rest, paused.ids)
        return self._reply_for(paused.exchange, paused.live, played, warnings, paused.answer_t)

    def _raw(self, data: bytes | str) -> Reply | None:
        """The recorded server's answer to the same raw frame (nothing, if it ignored it);
        ``None`` when the frame was never recorded."""
        state = self._groups.current
        key = raw_key(data)
        positions = state.prepared.raws.get(key)
        if not positions:
            return None
        played = state.raws_played.get(key, 0)
        state.raws_played[key] = played + 1
        return played_raw(state.prepared.exchanges[positions[min(played, len(positions) - 1)]])

    # -- output ------------------------------------------------------------------------

    def _play(self, exchange: Exchange, live: JSONObject, warnings: tuple[str, ...] = ()) -> Reply:
        played = self._groups.current.playback.play(exchange, live)
        return self._reply_for(exchange, live, played, warnings, exchange.t)

    def _reply_for(
        self,
        exchange: Exchange,
        live: JSONObject,
        played: Played,
        warnings: tuple[str, ...],
        since: float,
    ) -> Reply:
        awaiting: tuple[object, ...] = ()
        miss = None
        if played.skipped:
            strict = self.matcher.strict
            warnings, miss = self._waits.not_asked(exchange, played.skipped, warnings, strict)
        if played.paused is not None:
            awaiting = (self._waits.pause(played.paused),)
        elif not played.responded and needs_answer(exchange, live):  # played: answered
            return self._waits.no_answer(exchange, live, played, warnings, since)
        out, metas, times = tuple(played.messages), tuple(played.metas), tuple(played.times)
        origin, done = live.get("id"), played.responded
        return Reply(out, miss, metas, exchange, origin, awaiting, warnings, times, done, since)
