"""Answer a live client from a recording: sans-IO, one client message in, messages out.

Theory of operation
-------------------
At construction the event log is cut into *exchanges* (see ``cassette.core.exchanges``): each
client message with the server messages it caused. Server messages before any client
message form the *preamble*, sent when a session starts.

Replaying an exchange emits its server messages in recorded order, so a notification
recorded before a response reaches the client before that response (progress callbacks
fire), and one recorded after it follows it. The response takes the live request's id and
each progress notification takes the live request's progress token. Raw lines, stderr and
exit events are kept in the cassette for people and for lint, but a replay's output is
JSON-RPC only.

Who the client is (era, capabilities, protocol revision) and which group of the cassette
(the main recording, or a variant session) answers it is decided by the era-and-variant
authority, ``cassette.core.negotiation``: the replayer tells it what each request says of
its client and lets it answer what the era rules answer (a legacy client's ``initialize``
on a modern cassette, a 2026-07-28 request on a legacy one, an unrecorded ``ping``).

A recorded server request the live client did not declare the capability for is not
sent; what the recording shows next is replayed, with a warning (a miss under ``strict``).

A request whose recording has no answer is answered all the same, never left to hang
(``cassette.core.waits``). A client frame that is not one JSON-RPC message is answered as
the recording answered the same frame (a raw exchange), or ignored if it was; only a frame
never recorded gets the standard error.

Server-to-client requests (``sampling/createMessage``, ``elicitation/create``,
``roots/list``, ``ping``) are sent at their recorded place with ids of this session's own
server sequence; where the recording shows the client answering, the replay stops and waits
for the live answer (``Reply.awaiting``), then goes on (see ``cassette.core.playback``). An
answer that differs from the recorded one is a warning, or under ``strict`` a miss; no
answer at all is the caller's timeout, turned into an error by ``expire``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from cassette.core.exchanges import Exchange, raw_key
from cassette.core.jsonrpc import (
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
from cassette.core.listen import unrecorded_listen
from cassette.core.matching import (
    STRATEGIES,
    Candidate,
    FingerprintMatcher,
    Matcher,
    Strategy,
    get_strategy,
)
from cassette.core.model import Era, Header, Recording
from cassette.core.negotiation import GroupState, Negotiation, client_facts
from cassette.core.playback import Playback, Played
from cassette.core.prepared import Prepared, check_redaction
from cassette.core.redacted import ENVELOPE
from cassette.core.replay_parts import (
    INPUTS,
    answer_batch,
    answer_part,
    env_values,
    input_responses_differ,
    miss_line,
    needs_answer,
    params,
    played,
    played_raw,
    summary_lines,
    where,
)
from cassette.core.reply import Reply, _reply
from cassette.core.waits import Waits
from cassette.core.wildcards import mask_like
from cassette.errors import ReplayMiss

if TYPE_CHECKING:
    from cassette.core.misses import MissReport
    from cassette.core.paused import Paused
    from cassette.core.redaction import RedactionSession, Redactor

#: The policy a person-facing description of a live message passes (a miss, a warning,
#: the error a miss sends the client), made when first needed: the runtime hands over
#: the redaction gate's (``cassette.store.gate.display``), which the core cannot build.
ShownPolicy = Callable[[], "Redactor"]

__all__ = ["Replayer"]

#: notifications are matched strictly and silently, with the session's ignore rules
STRICT = STRATEGIES["strict"]


class Replayer:
    """Sans-IO replay of one session: feed client messages, send back what it returns."""

    def __init__(
        self,
        recording: Recording,
        strategy: str | Strategy = "default",
        *,
        matcher_factory: Callable[[Sequence[Candidate], str | Strategy], Matcher] | None = None,
        environ: Mapping[str, str] | None = None,
        prepared: Prepared | None = None,
        shown: ShownPolicy | None = None,
        start_note: str | None = None,
    ) -> None:
        self.header: Header = recording.header
        #: said with every miss of a later server start (``cassette.core.starts``): the
        #: client restarted the server, and which start of the cassette answered it
        self.start_note = start_note
        self._strategy = strategy
        self._matcher_factory = matcher_factory
        self._ignore = get_strategy(strategy).ignore
        ready = prepared if prepared is not None else Prepared.of(recording, self._ignore)
        self.misses: list[MissReport] = []
        #: who the client is and how it is served: era, capabilities, variant group
        self._terms = Negotiation(ready, self.misses)
        self._groups = bool(self._terms.groups)
        #: the state of each group a session left, by ``id`` of its ``Prepared``
        self._kept: dict[int, GroupState] = {}
        #: what answers a listing: the recorder's probes, or the session's group
        self._listings = None if ready.surface is None else ready.surface.session()
        self._bind(self._fresh(ready))
        #: the main recording's matcher, whatever group a handshake adopts (what a run
        #: leaves unplayed is told of the main recording only: variants are alternatives)
        self.main_matcher: Matcher = self.matcher
        #: whether replies need the era authority's shaping (a legacy client of a modern
        #: recording); checked once per message instead of asking on every one
        self._shaping = False
        #: warnings to tell with the reply being made (``Negotiation.capability_warnings``)
        self._pending: tuple[str, ...] = ()
        source = getattr(recording, "source", None)
        self.source: str | None = str(source) if source is not None else None
        #: what the session waits for: client answers, and answers the recording lacks
        self._waits = Waits(self.misses, self.source)
        # A redacted cassette: a live message is redacted with ``shown``'s policy (the
        # built-in rules when none is given) and the header's named variables before any
        # part of it can be shown (a miss, a warning), so a live secret never reaches a
        # log. A request is matched as it came: redacted positions of the recording are
        # wildcards, so matching does not depend on it, and a request the recording holds
        # (most) is never redacted (``_shown``). The header's patterns are never compiled.
        # The error a miss sends the client passes the same policy, on any cassette.
        # The redactor is built when first needed: a clean session needs none, and its
        # module with the rule tables is 2.5% of a replay's start-up.
        info = recording.header.redaction
        self._policy = shown
        self._literals: tuple[str, ...] | None = None  # a redacted cassette's, else None
        self._redactor: RedactionSession | None = None
        if info is not None:
            check_redaction(recording)
            self._literals = tuple(env_values(info, environ))

    @property
    def client_era(self) -> Era | None:
        """The live client's era, once a message said (``Negotiation.client_era``)."""
        return self._terms.client_era

    # -- the group a session is answered from (``cassette.core.negotiation``) ----------------

    def _fresh(self, ready: Prepared) -> GroupState:
        """A session's state for ``ready``'s group, before anything was played from it."""
        if self._matcher_factory is None:
            matcher: Matcher = FingerprintMatcher(ready.requests, self._strategy)
        else:
            matcher = self._matcher_factory(ready.requests.candidates, self._strategy)
        # Notifications are matched strictly and silently: a client may send any it likes.
        notes = FingerprintMatcher(ready.notifications, STRICT.ignoring(self._ignore))
        refusals = FingerprintMatcher(ready.refused, "strict") if ready.refused else None
        return GroupState(ready, matcher, notes, refusals, Playback(modern=ready.era == "modern"))

    def _bind(self, state: GroupState) -> None:
        """Answer from ``state``: the hot path reads these references, not the state."""
        self._state = state
        ready = state.prepared
        self.era: Era = ready.era
        self._preamble, self._exchanges, self._raws = ready.preamble, ready.exchanges, ready.raws
        self.matcher: Matcher = state.matcher
        self._notes, self._refusals = state.notes, state.refusals
        self._playback, self._raws_played = state.playback, state.raws_played

    def _adopt(self, ready: Prepared, fresh: bool) -> None:
        """Answer from ``ready``'s group, which the authority chose. The group left is kept
        as it was; unless ``fresh``, one adopted again goes on from where it was left."""
        served = self._state
        self._kept[id(served.prepared)] = served
        kept = None if fresh else self._kept.get(id(ready))
        state = kept if kept is not None else self._fresh(ready)
        playback = state.playback  # ids already given to server requests stay given
        playback.next_server_id = max(playback.next_server_id, served.playback.next_server_id)
        self._bind(state)

    def _heard(self, message: JSONObject, method: object, era: Era | None) -> None:
        """Tell the authority what ``message`` says of its client; adopt what it chooses."""
        terms = self._terms
        chosen = terms.heard(message, method, era, self._state.prepared)
        if chosen is not None:
            self._adopt(*chosen)
        self._shaping = terms.translates(self.era) or terms.legacy_on_modern

    def _shape(self, reply: Reply) -> Reply:
        """``reply`` as the authority says this client gets it (messages, status)."""
        terms = self._terms
        if terms.translates(self.era):
            reply = terms.for_client(reply)
        return terms.status_for(reply) if terms.legacy_on_modern else reply

    def _out(self, reply: Reply) -> Reply:
        """A reply not to a client message (an answer's deadline, a raw frame): its status."""
        if self._shaping and self._terms.legacy_on_modern:
            return self._terms.status_for(reply)
        return reply

    # -- public API --------------------------------------------------------------------

    def start(self) -> Reply:
        """What the server said before the client said anything (usually nothing)."""
        return played(self._preamble)

    def receive_frame(self, data: bytes | str) -> Reply:
        """Answer one frame exactly as the client sent it (a stdio line, an HTTP body)."""
        if not data.strip():
            return Reply()  # a blank line carries no message; real servers skip it too
        kind, value, problem, text = classify_parts(data)
        if self._raws and kind not in SINGLE_MESSAGES:
            recorded = self._raw(data)
            if recorded is not None:
                return self._out(recorded)
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
        from cassette.core.said import prose, said

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
            from cassette.core.said import said

            text = said(text, f"\n  ({self.start_note})")
        return text

    # -- dispatch ----------------------------------------------------------------------

    def _dispatch(self, kind: Kind, value: Any, raw: str | None = None) -> Reply:
        reply = self._dispatch_native(kind, value, raw)
        if self._pending:
            reply = attrs.evolve(reply, warnings=(*reply.warnings, *self._pending))
            self._pending = ()
        return self._shape(reply) if self._shaping else reply

    def _dispatch_native(self, kind: Kind, value: Any, raw: str | None = None) -> Reply:
        if kind is Kind.REQUEST:
            return self._request(value, raw)  # redacted where it may be shown (_shown)
        if self._literals is not None and isinstance(value, dict) and value.keys() - ENVELOPE:
            value, _ = self._session_redactor().message(value, None, raw)
        if kind is Kind.NOTIFICATION:
            return self._notification(value)
        if kind in (Kind.RESPONSE, Kind.ERROR):
            return self._on_client_answer(value)
        if kind is Kind.BATCH:
            return self._batch(value)
        msg_id = value.get("id") if isinstance(value, dict) else None
        return _reply((error_response(msg_id, INVALID_REQUEST, "Invalid Request"),))

    def _shown(self, message: JSONObject, raw: str | None = None) -> JSONObject:
        """``message`` as a person may see it: redacted with the built-in rules on a
        redacted cassette (``raw``, its text, lets a clean one skip the walk)."""
        if self._literals is None:
            return message
        return self._session_redactor().message(message, None, raw)[0]

    def _described(self, message: JSONObject, raw: str | None) -> JSONObject:
        """``message`` as a miss tells it (the client's error, the miss line, the run's
        summary): ``_shown``, and on a cassette recorded without redaction, through the
        policy the runtime handed over all the same, since a miss is printed."""
        if self._literals is None and self._policy is not None:
            return self._session_redactor().message(message, None, raw)[0]
        return self._shown(message, raw)

    def _session_redactor(self) -> RedactionSession:
        """This session's redactor (the policy the runtime handed over, else the built-in
        rules, and the recording's named variables), made on first use."""
        if self._redactor is None:
            if self._policy is not None:
                policy = self._policy().with_literals(self._literals or ())
            else:
                from cassette.core.redaction import Redactor

                policy = Redactor(literals=self._literals or ())
            self._redactor = policy.session()
        return self._redactor

    def _request(self, message: JSONObject, raw: str | None = None) -> Reply:
        method = message.get("method")
        era, capabilities = client_facts(message, method)
        if era is not None or self._groups:
            self._heard(message, method, era)
        if method == "logging/setLevel":  # the live choice, recorded or not
            level = params(message).get("level")
            self._playback.log_level = level if isinstance(level, str) else None
        if capabilities is not None:
            self._playback.capabilities = capabilities
            # told with this request's reply (``_dispatch``): capabilities the recorded
            # server reacted to, declared otherwise by this client
            self._pending = self._terms.capability_warnings(message, self._state.prepared)
        if (method == "initialize" or era == "modern") and self._terms.crosses(
            method, era, self.era
        ):
            return self._terms.cross_era(self._shown(message, raw), self._state)
        if method == "initialize":
            self._refusals = self._state.refusals = None  # a session: no refusals to replay
        elif self._refusals is not None:
            refused = self._refused_again(message)
            if refused is not None:
                return refused
        found = self._level_of_legacy(message) or self._listing(message) or self._find(message, raw)
        if isinstance(found, Reply):
            return found
        key, message = found
        exchange = self._exchanges[key]
        warnings: tuple[str, ...] = ()
        asked = message.get("params") or ()
        if INPUTS in asked or INPUTS in (
            exchange.message.get("params") or ()
        ):  # asked here, not in the function: most requests have none, and a call costs
            warnings = input_responses_differ(exchange.message, self._shown(message, raw))
        meta = asked.get("_meta") if isinstance(asked, dict) else None
        if isinstance(meta, dict) and "progressToken" in meta:  # asked for progress
            warnings = (*warnings, *self._terms.progress_warnings(message, exchange))
        bridged = self._shaping and self._terms.translates(self.era)
        told = self._terms.unrecorded_call(  # what its tools may not show this client
            message, exchange, self._state.prepared, self._playback.capabilities, bridged=bridged
        )
        reply = self._play(exchange, message, warnings=(*warnings, *told))
        if bridged:
            return self._terms.input_round(message, reply, self._playback)
        return self._terms.noted(reply)

    def _level_of_legacy(self, message: JSONObject) -> Reply | None:
        """A legacy client's ``logging/setLevel`` on a modern cassette: what a modern session
        recorded of it is that era's answer (2026-07-28 removed the method), so it gets what
        the probe's legacy handshake shows (``Negotiation.unrecorded``) instead."""
        if message.get("method") != "logging/setLevel" or not self._terms.legacy_on_modern:
            return None
        certain = self._terms.unrecorded(message, self.era, self._state.prepared.handshake)
        return None if certain is None else _reply((certain,))

    def _listing(self, message: JSONObject) -> Reply | None:
        """A listing a probe answers better than the session's group does (``Listings``)."""
        chosen = self._listings and self._listings.answer(
            message, self._playback.capabilities, self._state.prepared
        )
        return self._play(chosen[0], message, warnings=chosen[1]) if chosen else None

    def _find(self, message: JSONObject, raw: str | None) -> tuple[int, JSONObject] | Reply:
        """The recording that answers ``message`` and the message as matched, or the miss.
        A miss is told of the redacted request (``_shown``), so that is matched again."""
        try:
            return self.matcher.match(message), message
        except ReplayMiss as miss:
            shown = self._described(message, raw)
            if shown is message:
                return self._unanswered(message, miss)
            try:
                return self.matcher.match(shown), shown
            except ReplayMiss as again:
                return self._unanswered(shown, again)

    def _refused_again(self, message: JSONObject) -> Reply | None:
        """A request sent without a session, as one the recorded server refused: the same
        refusal (status included), once per recording."""
        assert self._refusals is not None
        try:
            key = self._refusals.match(message)
        except ReplayMiss:
            return None
        return self._play(self._exchanges[key], message)

    def _notification(self, message: JSONObject) -> Reply:
        if message.get("method") == "notifications/cancelled":
            self._cancel(params(message).get("requestId"))
        try:
            key = self._notes.match(message)
        except ReplayMiss:
            return Reply()
        return self._play(self._exchanges[key], message)

    def _on_client_answer(self, message: JSONObject) -> Reply:
        if self._terms.rounds:
            settled = self._terms.answered(message)
            if isinstance(settled, dict):  # the recorded retry: a request like any other
                return self._dispatch_native(Kind.REQUEST, settled)
            if settled is not None:
                return settled
        paused = self._waits.answered(message.get("id"))
        if paused is None:
            return Reply()  # an answer to nothing we are waiting for: a real server ignores it
        from cassette.core.jsondiff import differences  # answered server requests only

        live = mask_like(paused.answer, message)
        diffs = differences(answer_part(paused.answer), answer_part(live), limit=3)
        if not diffs:
            return self._resume(paused, ())
        method = str(paused.request.get("method"))
        from cassette.core.said import NAME, VALUE, Quote, said

        text = said(
            "the client's answer to ",
            Quote(method, NAME),
            " (id ",
            Quote(message.get("id"), VALUE),
            ") differs from the recording at ",
            where(diffs),
        )
        if self.matcher.strict:
            from cassette.core.misses import MissReport

            report = MissReport("answer-differs", method, text, paused.exchange.seq)
            return self._waits.fail(paused, report)
        return self._resume(paused, (text,))

    def expire(self, server_id: object) -> Reply:
        """The client never answered server request ``server_id``: fail what waited on it."""
        failed = self._terms.abandon(server_id, "did not answer it in time")
        if failed is not None:
            return failed
        paused = self._waits.answered(server_id)
        if paused is None:
            return Reply()
        method = str(paused.request.get("method"))
        text = (
            f"the client did not answer {method} (id {server_id}) in time; the recording "
            "shows the server waiting for that answer before it went on"
        )
        from cassette.core.misses import MissReport

        report = MissReport("no-answer", method, text, paused.exchange.seq)
        return self._out(self._waits.fail(paused, report))

    def undelivered(self, server_id: object) -> Reply:
        """A front could not deliver server request ``server_id`` (a live server drops what
        it cannot send, e.g. with no GET stream open): go on as if it had not been sent."""
        failed = self._terms.abandon(server_id, "could not be sent it")
        if failed is not None:
            return failed
        paused = self._waits.answered(server_id)
        if paused is None:
            return Reply()
        return self._out(self._resume(paused, ()))

    @property
    def waiting(self) -> tuple[object, ...]:
        """Live ids of server requests still waiting for the client's answer."""
        return self._waits.waiting + self._terms.waiting

    def _resume(self, paused: Paused, warnings: tuple[str, ...]) -> Reply:
        played = self._playback.play(paused.exchange, paused.live, paused.rest, paused.ids)
        return self._reply_for(paused.exchange, paused.live, played, warnings, paused.answer_t)

    def _cancel(self, request_id: object) -> None:
        self._waits.cancel(request_id)
        self._terms.cancel(request_id)

    def give_up(self, request_id: object) -> Reply:
        """The request ``request_id``, which the recording leaves unanswered, is still
        unanswered at its deadline: fail it with an error naming why (a miss)."""
        return self._out(self._waits.give_up(request_id))

    def _raw(self, data: bytes | str) -> Reply | None:
        """The recorded server's answer to the same raw frame (nothing, if it ignored it);
        ``None`` when the frame was never recorded."""
        key = raw_key(data)
        positions = self._raws.get(key)
        if not positions:
            return None
        played = self._raws_played.get(key, 0)
        self._raws_played[key] = played + 1
        return played_raw(self._exchanges[positions[min(played, len(positions) - 1)]])

    def _batch(self, batch: list[Any]) -> Reply:
        return answer_batch(batch, self._dispatch)

    def _unanswered(self, message: JSONObject, miss: ReplayMiss) -> Reply:
        handshake = self._state.prepared.handshake
        certain = self._terms.unrecorded(message, self.era, handshake)
        if certain is not None:  # asked on the client's own: the recording makes it certain
            return _reply((certain,))
        listen = unrecorded_listen(message, handshake)
        if listen is not None:  # a listen stream, as any 2026-07-28 server opens one
            return self._play(listen, message)
        from cassette.core.misses import MissReport

        report = miss.report if isinstance(miss.report, MissReport) else None
        if report is None:
            report = MissReport("not-recorded", str(message.get("method")), str(miss))
        if self._policy is not None or self._literals is not None:
            # what the client is told may reach a log: the gate's policy, on any cassette;
            # the values the report quotes are redacted, never our words about them
            redactor = self._session_redactor()
            report = report.told(redactor.value, redactor.text)
        self.misses.append(report)
        text = f"cassette-mcp: {self.describe(report)}"
        error = error_response(message["id"], REPLAY_MISS, text, report.as_data())
        return Reply((error,), report, (None,))

    # -- output ------------------------------------------------------------------------

    def _play(
        self, exchange: Exchange, live: JSONObject, *, warnings: tuple[str, ...] = ()
    ) -> Reply:
        played = self._playback.play(exchange, live)
        if live.get("method") == "initialize":  # the revision the live server would grant
            messages, granted = self._terms.granted(live, played.messages)
            played.messages = list(messages)
            warnings = (*warnings, *granted)
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
