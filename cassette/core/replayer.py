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

Serving the era the header names, and a client of the other era as far as the recording
proves the server would have served it (``cassette.core.eras`` has the table): under a
legacy cassette an unrecorded ``server/discover`` gets ``Method not found``, exactly what a
legacy server says to a dual-era client's probe, so the client falls back to
``initialize`` as it did live; under a modern one, a legacy client's ``initialize`` is
answered from the recorded ``server/discover`` when it lists a legacy revision, and what
follows loses the 2026-07-28-only members. Requests a client sends on its own at the
start replay unrecorded where the recording makes the answer certain: ``ping``, and
``logging/setLevel``: an empty result when the server advertised ``logging``, and
``Method not found`` when its recorded capabilities did not (no handler, no capability).
From a 2026-07-28 client both get ``Method not found``: that revision removed them.

The live client's capabilities are honoured: a recorded server request it did not declare
the capability for (``roots/list``, ``sampling/createMessage``, ``elicitation/create``) is
not sent, and what the recording shows next is replayed, with a warning (a miss under
``strict``).

A request whose recording has no answer is answered all the same, never left to hang:
when the client cancelled it while recording, or the recording simply ends first, the
replay waits for the live client to cancel it too, and otherwise (``give_up``, called by
the runtime when its answer deadline passes) fails it with an error naming why; when the
server exited while it was open (a crash mid-call), the replay fails it at once and the
reply ``closes`` the session, as the live server's exit did. A client frame that is not
one JSON-RPC message is answered as the recording answered the same frame (a raw
exchange), or ignored if it was; only a frame never recorded gets the standard error.

Server-to-client requests (``sampling/createMessage``, ``elicitation/create``,
``roots/list``, ``ping``) are sent at their recorded place with ids of this session's own
server sequence; where the recording shows the client answering, the replay stops and waits
for the live answer (``Reply.awaiting``), then goes on (see ``cassette.core.playback``). An
answer that differs from the recorded one is a warning, or under ``strict`` a miss; no
answer at all is the caller's timeout, turned into an error by ``expire``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

import attrs

from cassette.core._gc import paused_gc
from cassette.core.eras import (
    LEGACY_ONLY_METHODS,
    InputRound,
    client_era,
    initialize_from_discover,
    input_requests,
    is_input_required,
    legacy_shape,
    unsupported_version,
)
from cassette.core.exchanges import Exchange, Item, cut, raw_key
from cassette.core.ids import IdKey, id_key
from cassette.core.jsondiff import Difference, differences
from cassette.core.jsonrpc import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REPLAY_MISS,
    SINGLE_MESSAGES,
    JSONObject,
    Kind,
    classify_parts,
    classify_value,
    error_response,
)
from cassette.core.matching import (
    STRATEGIES,
    Candidate,
    CandidateIndex,
    FingerprintMatcher,
    Matcher,
    MissReport,
    Strategy,
    get_strategy,
    show_value,
)
from cassette.core.mcp import MODERN_VERSION
from cassette.core.model import Era, Header, Recording, era_of
from cassette.core.playback import Paused, Playback, Played
from cassette.core.redacted import ENVELOPE, check_header
from cassette.core.reply import Reply, _reply
from cassette.core.variants import (
    HANDSHAKES,
    Fit,
    choose,
    client_capabilities,
    group_era,
    split,
)
from cassette.core.wildcards import mask_like
from cassette.errors import CassetteFormatError, ReplayMiss

if TYPE_CHECKING:
    from cassette.core.redaction import RedactionSession

__all__ = [
    "Exchange",
    "Prepared",
    "ReplaySessions",
    "Replayer",
    "Reply",
    "Responder",
    "ResponderPool",
]

#: what a ``Replayer`` holds per group of the cassette (``Replayer._adopt``)
_GROUP_STATE = (
    "_ready",
    "era",
    "_preamble",
    "_exchanges",
    "matcher",
    "_notes",
    "_refusals",
    "strategy_name",
    "_playback",
    "_raws",
    "_raws_played",
    "_handshake",
)

#: notifications are matched strictly and silently, with the session's ignore rules
STRICT = STRATEGIES["strict"]


@attrs.frozen(eq=False)  # compared by identity: no __eq__ to build at import
class Prepared:
    """The read-only work of replaying a cassette, done once and shared by every session:
    the exchanges and the fingerprint indexes. Sessions only add their consumption state.

    A cassette with variant sessions (``cassette.core.variants``) is prepared as one
    ``Prepared`` per group: the main recording's, holding the variants' in ``variants``;
    a session adopts the group its handshake fits."""

    preamble: list[Item]
    exchanges: list[Exchange]
    requests: CandidateIndex
    notifications: CandidateIndex
    #: raw exchanges by their frame (``raw_key``), in recorded order
    raws: Mapping[str, tuple[int, ...]] = attrs.field(factory=dict)
    #: the recorded server's own account of itself: its ``initialize`` result (legacy) or
    #: its ``server/discover`` result (modern), when the recording holds one
    handshake: JSONObject | None = None
    #: requests the server refused for want of a session (HTTP, legacy era)
    refused: CandidateIndex | None = None
    #: the era this group serves (the header's, for the main recording)
    era: Era = "legacy"
    #: what this group's handshake shows about its client (set when there are variants)
    fit: Fit | None = None
    #: the variant sessions' groups, in file order (the main recording's only)
    variants: tuple[Prepared, ...] = ()

    @classmethod
    def of(cls, recording: Recording, ignore: Sequence[str] = ()) -> Prepared:
        """``ignore``: the params fingerprints leave out (``Strategy.ignore``)."""
        main, groups = split(recording.events)
        era = era_of(recording.header)
        if not groups:
            return cls._group(main, era, ignore)
        variants = tuple(cls._group(events, None, ignore) for events in groups.values())
        return attrs.evolve(cls._group(main, era, ignore), variants=variants)

    @classmethod
    def _group(cls, events: Sequence[Any], era: Era | None, ignore: Sequence[str]) -> Prepared:
        """One group's work; ``era`` ``None`` (a variant): the era its handshake shows."""
        with paused_gc():
            preamble, exchanges = cut(events)
            era = group_era(events) if era is None else era
            legacy = era == "legacy"
            sessionless = [x for x in exchanges if legacy and _sessionless(x)]
            messages = [x for x in exchanges if x.raw is None and not (legacy and _sessionless(x))]
            requests = [_candidate(x) for x in messages if "id" in x.message]
            notes = [_candidate(x) for x in messages if "id" not in x.message]
            refused = [_candidate(x) for x in sessionless if "id" in x.message]
            request_index = CandidateIndex.build(requests, _handed_out(exchanges), ignore)
            note_index = CandidateIndex.build(notes, ignore=ignore)
            raws: dict[str, list[int]] = {}
            for x in exchanges:
                if x.raw is not None:
                    raws.setdefault(x.raw, []).append(x.key)
        frozen = {k: tuple(v) for k, v in raws.items()}
        handshake = _recorded_result(exchanges, {"initialize", "server/discover"})
        refused_index = CandidateIndex.build(refused) if refused else None
        fit = Fit.of(era, (x.message for x in exchanges))
        return cls(
            preamble,
            exchanges,
            request_index,
            note_index,
            frozen,
            handshake,
            refused_index,
            era,
            fit,
        )

    @property
    def groups(self) -> tuple[Prepared, ...]:
        """The main recording's group, then each variant's."""
        return (self, *self.variants)


def _opens(group: Prepared, handshake: JSONObject) -> bool:
    """Whether ``group`` can answer ``handshake`` as its server would have: a probe of
    ``server/discover`` from a recorded discovery, or as a legacy server refuses it; an
    ``initialize`` from a recorded one, or from a discovery listing a legacy revision. A
    group that cannot (a 2026-07-28 client recorded it without a probe) is chosen only
    when none can."""
    if handshake.get("method") == "server/discover":
        return group.era == "legacy" or group.handshake is not None
    if group.era == "legacy":
        return group.handshake is not None
    return initialize_from_discover(group.handshake or {}, None) is not None


def _candidate(exchange: Exchange) -> Candidate:
    return Candidate(exchange.key, exchange.message, exchange.seq, exchange.redacted)


def _sessionless(exchange: Exchange) -> bool:
    """A request the recorded server refused for want of a session (HTTP, legacy era):
    refused and sent without one. Refused in a session (or in the stateless 2026-07-28
    era), a request is an ordinary recording: the same request is refused the same way."""
    return exchange.rejected and not (exchange.meta or {}).get("session")


def _recorded_result(exchanges: Sequence[Exchange], methods: set[str]) -> JSONObject | None:
    """The result of the first recorded request of ``methods`` that succeeded."""
    for exchange in exchanges:
        if exchange.message.get("method") not in methods:
            continue
        for item in exchange.items:
            result = item.message.get("result") if item.role == "response" else None
            if isinstance(result, dict):
                return result
    return None


def _handed_out(exchanges: Sequence[Exchange]) -> frozenset[str]:
    """Every pagination cursor the recorded server gave (a ``nextCursor``): a request that
    carries one of them asks for that page."""
    cursors: set[str] = set()
    for exchange in exchanges:
        for item in exchange.items:
            if item.role != "response" or not isinstance(item.message, dict):
                continue  # a raw exchange's answer may be a batch
            result = item.message.get("result")
            cursor = result.get("nextCursor") if isinstance(result, dict) else None
            if isinstance(cursor, str):
                cursors.add(cursor)
    return frozenset(cursors)


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
    ) -> None:
        self.header: Header = recording.header
        self._strategy = strategy
        self._matcher_factory = matcher_factory
        self._ignore = get_strategy(strategy).ignore
        ready = prepared if prepared is not None else Prepared.of(recording, self._ignore)
        #: the state of each group a session left, by ``id`` of its ``Prepared``
        self._kept: dict[int, dict[str, Any]] = {}
        self._adopt(ready)
        #: the main recording's matcher, whatever group a handshake adopts (what a run
        #: leaves unplayed is told of the main recording only: variants are alternatives)
        self.main_matcher: Matcher = self.matcher
        self._groups = ready.groups if ready.variants else ()
        # a handshake may still choose the group (until a session is under way)
        self._choosing = bool(self._groups)
        self.misses: list[MissReport] = []
        self.client_era: Era | None = None  # the live client's, once a message says
        # requests whose recording has no answer, by live id: (exchange, request, why)
        self._no_answers: dict[object, tuple[Exchange, JSONObject, str]] = {}
        source = getattr(recording, "source", None)
        self.source: str | None = str(source) if source is not None else None
        # A redacted cassette: a live message is redacted with the built-in rules before
        # any part of it can be shown (a miss, a warning), so a live secret never reaches
        # a log. A request is matched as it came: redacted positions of the recording are
        # wildcards, so matching does not depend on it, and a request the recording holds
        # (most) is never redacted (``_shown``). The header's patterns are never compiled.
        # The redactor is built when first needed: a clean session needs none, and its
        # module with the rule tables is 2.5% of a replay's start-up.
        info = recording.header.redaction
        self._literals: tuple[str, ...] | None = None  # a redacted cassette's, else None
        self._redactor: RedactionSession | None = None
        if info is not None:
            _check_redaction(recording)
            self._literals = tuple(_env_values(info, environ))
        self._paused: dict[object, Paused] = {}
        # a legacy client's answers to what an input_required response asked, by live
        # server-request id (``cassette.core.eras.InputRound``)
        self._rounds: dict[IdKey, InputRound] = {}

    def _adopt(self, ready: Prepared, *, fresh: bool = True) -> None:
        """Answer from ``ready``'s group: the main recording, or a variant session a
        handshake chose (``cassette.core.variants``). A group left is kept as it was;
        unless ``fresh``, one adopted again goes on from where it was left."""
        served = getattr(self, "_playback", None)
        if served is not None:
            self._kept[id(self._ready)] = {n: getattr(self, n) for n in _GROUP_STATE}
        kept = None if fresh else self._kept.get(id(ready))
        if kept is not None:
            for name, value in kept.items():
                setattr(self, name, value)
        else:
            self._fresh(ready)
        if served is not None:  # ids already given to server requests stay given
            self._playback.next_server_id = max(
                self._playback.next_server_id, served.next_server_id
            )

    def _fresh(self, ready: Prepared) -> None:
        self._ready = ready
        self.era: Era = ready.era
        self._preamble, self._exchanges = ready.preamble, ready.exchanges
        if self._matcher_factory is None:
            self.matcher: Matcher = FingerprintMatcher(ready.requests, self._strategy)
        else:
            self.matcher = self._matcher_factory(ready.requests.candidates, self._strategy)
        # Notifications are matched strictly and silently: a client may send any it likes.
        self._notes = FingerprintMatcher(ready.notifications, STRICT.ignoring(self._ignore))
        # Requests the recorded server refused without a session answer only requests sent
        # before this session's own handshake succeeded (the same refusal); ``None`` after.
        self._refusals = FingerprintMatcher(ready.refused, "strict") if ready.refused else None
        self.strategy_name = getattr(self.matcher, "strategy", None)
        self._playback = Playback(modern=self.era == "modern")
        self._raws = ready.raws
        self._raws_played: dict[str, int] = {}
        self._handshake = ready.handshake

    def _group_for(self, message: JSONObject, era: Era | None) -> None:
        """Choose the group on each handshake until a session is under way; after that,
        again on each 2026-07-28 request, whose envelope says who asks."""
        method = message.get("method")
        if self._choosing:
            if method in HANDSHAKES:
                self._choose(message)
                return
            if method != "ping":
                self._choosing = False  # a session is under way: its group stays
        if era == "modern" and client_capabilities(message) is not None:
            self._choose(message, fresh=False)

    def _choose(self, message: JSONObject, *, fresh: bool = True) -> None:
        """Adopt the group ``message`` fits (a handshake, or a 2026-07-28 request, whose
        envelope says who asks: over stateless HTTP one replayer serves every client)."""
        groups = self._groups
        if message.get("method") in HANDSHAKES:
            groups = tuple(g for g in groups if _opens(g, message)) or groups
        chosen = groups[choose([g.fit or Fit(g.era, None) for g in groups], message)]
        if chosen is not self._ready:
            self._adopt(chosen, fresh=fresh)

    # -- public API --------------------------------------------------------------------

    def start(self) -> Reply:
        """What the server said before the client said anything (usually nothing)."""
        return _played(self._preamble)

    def receive_frame(self, data: bytes | str) -> Reply:
        """Answer one frame exactly as the client sent it (a stdio line, an HTTP body)."""
        if not data.strip():
            return Reply()  # a blank line carries no message; real servers skip it too
        kind, value, problem, text = classify_parts(data)
        if self._raws and kind not in SINGLE_MESSAGES:
            recorded = self._raw(data)
            if recorded is not None:
                return recorded
        if kind is Kind.NOT_JSON or text is None:
            why = f"Parse error: {problem}" if problem else "Parse error"
            return _reply((error_response(None, PARSE_ERROR, why),))
        return self._dispatch(kind, value, text)

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

    def _dispatch(self, kind: Kind, value: Any, raw: str | None = None) -> Reply:
        return self._for_client(self._dispatch_native(kind, value, raw))

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

    def _session_redactor(self) -> RedactionSession:
        """This session's redactor (built-in rules and the recording's named variables),
        made on first use."""
        if self._redactor is None:
            from cassette.core.redaction import Redactor

            self._redactor = Redactor(literals=self._literals or ()).session()
        return self._redactor

    def _request(self, message: JSONObject, raw: str | None = None) -> Reply:
        method = message.get("method")
        era, capabilities = _client_facts(message, method)
        if self._groups:
            self._group_for(message, era)
        if era is not None and self.client_era is None:
            self.client_era = era
        if method == "logging/setLevel":  # the live choice, recorded or not
            level = _params(message).get("level")
            self._playback.log_level = level if isinstance(level, str) else None
        if capabilities is not None:
            self._playback.capabilities = capabilities
        if self.era == "modern" and method == "initialize":
            return self._initialize_from_discover(self._shown(message, raw))
        if self.era == "legacy" and era == "modern" and method != "server/discover":
            return self._modern_on_legacy(self._shown(message, raw))
        if method == "initialize":
            self._refusals = None  # a session from here on: no more refusals to replay
        elif self._refusals is not None:
            refused = self._refused_again(message)
            if refused is not None:
                return refused
        found = self._find(message, raw)
        if isinstance(found, Reply):
            return found
        key, message = found
        exchange = self._exchanges[key]
        warnings: tuple[str, ...] = ()
        if _INPUTS in (message.get("params") or ()) or _INPUTS in (
            exchange.message.get("params") or ()
        ):  # asked here, not in the function: most requests have none, and a call costs
            warnings = _input_responses_differ(exchange.message, self._shown(message, raw))
        return self._input_round(message, self._play(exchange, message, warnings=warnings))

    def _find(self, message: JSONObject, raw: str | None) -> tuple[int, JSONObject] | Reply:
        """The recording that answers ``message`` and the message as matched, or the miss.
        A miss is told of the redacted request (``_shown``), so that is matched again."""
        try:
            return self.matcher.match(message), message
        except ReplayMiss as miss:
            shown = self._shown(message, raw)
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
            self._cancel(_params(message).get("requestId"))
        try:
            key = self._notes.match(message)
        except ReplayMiss:
            return Reply()
        return self._play(self._exchanges[key], message)

    def _on_client_answer(self, message: JSONObject) -> Reply:
        round_ = self._rounds.pop(id_key(message.get("id")), None)
        if round_ is not None:
            return self._round_answered(round_, message)
        paused = self._paused.pop(id_key(message.get("id")), None)
        if paused is None:
            return Reply()  # an answer to nothing we are waiting for: a real server ignores it
        live = mask_like(paused.answer, message)
        diffs = differences(_answer_part(paused.answer), _answer_part(live), limit=3)
        if not diffs:
            return self._resume(paused, ())
        method = str(paused.request.get("method"))
        answer_id = message.get("id")
        text = f"the client's answer to {method} (id {answer_id}) differs from the recording at "
        text += _where(diffs)
        if self._strict():
            report = MissReport("answer-differs", method, text, paused.exchange.seq)
            return self._fail(paused, report)
        return self._resume(paused, (text,))

    def expire(self, server_id: object) -> Reply:
        """The client never answered server request ``server_id``: fail what waited on it."""
        round_ = self._rounds.pop(id_key(server_id), None)
        if round_ is not None:
            return self._round_failed(round_, "did not answer it in time")
        paused = self._paused.pop(id_key(server_id), None)
        if paused is None:
            return Reply()
        method = str(paused.request.get("method"))
        text = (
            f"the client did not answer {method} (id {server_id}) in time; the recording "
            "shows the server waiting for that answer before it went on"
        )
        return self._fail(paused, MissReport("no-answer", method, text, paused.exchange.seq))

    def undelivered(self, server_id: object) -> Reply:
        """A front could not deliver server request ``server_id`` (a live server drops what
        it cannot send, e.g. with no GET stream open): go on as if it had not been sent."""
        round_ = self._rounds.pop(id_key(server_id), None)
        if round_ is not None:
            return self._round_failed(round_, "could not be sent it")
        paused = self._paused.pop(id_key(server_id), None)
        if paused is None:
            return Reply()
        return self._resume(paused, ())

    @property
    def waiting(self) -> tuple[object, ...]:
        """Live ids of server requests still waiting for the client's answer."""
        asked = tuple(paused.request.get("id") for paused in self._paused.values())
        return asked + tuple(key[1] for key in self._rounds)  # id_key keeps the id second

    def _not_asked(
        self, exchange: Exchange, skipped: list[str], warnings: tuple[str, ...]
    ) -> tuple[tuple[str, ...], MissReport | None]:
        """Server requests left out for capabilities the client did not declare: a warning,
        and under ``strict`` a miss (the replay went on without what the recording had)."""
        text = (
            f"the recording sends {', '.join(skipped)} here, for a capability this client did "
            "not declare, so it was not sent; what the recording shows next was replayed"
        )
        if not self._strict():
            return (*warnings, text), None
        report = MissReport("answer-differs", skipped[0], text, exchange.seq)
        self.misses.append(report)
        return warnings, report

    def _no_answer(
        self,
        exchange: Exchange,
        live: JSONObject,
        played: Played,
        warnings: tuple[str, ...],
        since: float,
    ) -> Reply:
        """What the recording shows before its missing answer, then: an error at once and
        the session's end if the server exited here; otherwise a deadline (see above)."""
        times = tuple(played.times)
        if exchange.exited:
            summary = (
                f"{_label(live)} was never answered: the recorded server exited while it "
                "was open, and the replay ends the session here as the server did"
            )
            report = MissReport("no-answer", str(live.get("method")), summary, exchange.seq)
            failed = self._failed(live, report, exchange)
            return Reply(
                (*played.messages, *failed.messages),
                report,
                (*played.metas, None),
                exchange,
                live.get("id"),
                warnings=warnings,
                times=(*times, times[-1] if times else since),
                responded=True,
                since=since,
                closes=True,
            )
        why = (
            "the client cancelled it while recording"
            if exchange.cancelled
            else "the recording ends before the server answered it"
        )
        self._no_answers[id_key(live.get("id"))] = (exchange, live, why)
        return Reply(
            tuple(played.messages),
            None,
            tuple(played.metas),
            exchange,
            live.get("id"),
            warnings=warnings,
            times=times,
            since=since,
            unanswered=True,
        )

    def _strict(self) -> bool:
        strategy = getattr(self.matcher, "strategy", None)
        return getattr(strategy, "name", None) == "strict"

    def _resume(self, paused: Paused, warnings: tuple[str, ...]) -> Reply:
        played = self._playback.play(paused.exchange, paused.live, paused.rest, paused.ids)
        return self._reply_for(paused.exchange, paused.live, played, warnings, paused.answer_t)

    def _fail(self, paused: Paused, report: MissReport) -> Reply:
        self.misses.append(report)
        origin = paused.live.get("id")
        if "id" not in paused.live:
            return Reply(miss=report, origin=None)
        text = f"cassette-mcp: {report.summary}"
        error = error_response(origin, REPLAY_MISS, text, report.as_data())
        return Reply((error,), report, (None,), paused.exchange, origin, responded=True)

    def _cancel(self, request_id: object) -> None:
        self._no_answers.pop(id_key(request_id), None)  # cancelled: it needs no answer now
        for asked, round_ in list(self._rounds.items()):
            if id_key(round_.origin.get("id")) == id_key(request_id):
                del self._rounds[asked]
        for key, paused in list(self._paused.items()):
            if "id" in paused.live and id_key(paused.live["id"]) == id_key(request_id):
                del self._paused[key]

    def give_up(self, request_id: object) -> Reply:
        """The request ``request_id``, which the recording leaves unanswered, is still
        unanswered at its deadline: fail it with an error naming why (a miss)."""
        found = self._no_answers.pop(id_key(request_id), None)
        if found is None:  # the client cancelled it since: it is settled, with no answer
            return Reply(origin=request_id, responded=True)
        exchange, request, why = found
        summary = f"{_label(request)} has no recorded answer: {why}"
        report = MissReport("no-answer", str(request.get("method")), summary, exchange.seq)
        return self._failed(request, report, exchange)

    def _failed(self, request: JSONObject, report: MissReport, exchange: Exchange) -> Reply:
        self.misses.append(report)
        text = f"cassette-mcp: {_miss_line(report, self.source)}"
        error = error_response(request.get("id"), REPLAY_MISS, text, report.as_data())
        origin = request.get("id")
        return Reply((error,), report, (None,), exchange, origin, responded=True)

    def _raw(self, data: bytes | str) -> Reply | None:
        """The recorded server's answer to the same raw frame (nothing, if it ignored it);
        ``None`` when the frame was never recorded."""
        key = raw_key(data)
        positions = self._raws.get(key)
        if not positions:
            return None
        played = self._raws_played.get(key, 0)
        self._raws_played[key] = played + 1
        exchange = self._exchanges[positions[min(played, len(positions) - 1)]]
        items = exchange.items
        return Reply(
            tuple(i.message for i in items),
            None,
            tuple(i.meta for i in items),
            exchange,
            times=tuple(i.t for i in items),
            responded=exchange.answered,
            since=exchange.t,
        )

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

    # -- across eras (``cassette.core.eras``) -----------------------------------------------

    def _initialize_from_discover(self, message: JSONObject) -> Reply:
        """A legacy client on a modern cassette: its ``initialize``, answered from the
        recorded ``server/discover`` when that lists a legacy revision."""
        requested = _params(message).get("protocolVersion")
        result = initialize_from_discover(self._handshake or {}, requested)
        if result is not None:
            # A legacy session from here on: its log messages follow the legacy rules (sent
            # by default, filtered by logging/setLevel), as the live server's would.
            self._playback.modern = False
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            return _reply((answer,))
        listed = self._handshake.get("supportedVersions") if self._handshake else None
        supported = [str(v) for v in listed] if isinstance(listed, list) else []
        summary = (
            "initialize (a legacy client) on a 2026-07-28 cassette whose server listed no "
            "legacy revision: record it with this client, or with cassette record --era legacy"
        )
        return self._refused(message, summary, requested, supported)

    def _modern_on_legacy(self, message: JSONObject) -> Reply:
        """A 2026-07-28 request on a legacy cassette: the recording shows no support for it."""
        recorded = self._handshake.get("protocolVersion") if self._handshake else None
        supported = [recorded] if isinstance(recorded, str) else []
        summary = (
            f"{message.get('method')} in the 2026-07-28 envelope on a legacy cassette (its "
            "server answered the initialize handshake only): record it with this client"
        )
        return self._refused(message, summary, MODERN_VERSION, supported)

    def _refused(
        self, message: JSONObject, summary: str, requested: object, supported: list[str]
    ) -> Reply:
        report = MissReport("not-recorded", str(message.get("method")), summary)
        self.misses.append(report)
        error = unsupported_version(message.get("id"), requested, supported, summary)
        return Reply((error,), report, (None,))

    def _for_client(self, reply: Reply) -> Reply:
        """A modern recording's messages in the shape the live legacy client expects."""
        if self.era != "modern" or self.client_era != "legacy" or not reply.messages:
            return reply
        messages = []
        miss = reply.miss
        for message in reply.messages:
            if is_input_required(message):
                miss = MissReport(
                    "not-recorded",
                    "input_required",
                    "the recorded answer asks the client for input the 2026-07-28 way "
                    "(input_required) and the replay cannot ask this legacy client for it (a "
                    "capability it did not declare, or no request recorded): record it with "
                    "this client, or with cassette record --era legacy",
                )
                self.misses.append(miss)
                text = f"cassette-mcp: {miss.summary}"
                messages.append(error_response(message.get("id"), REPLAY_MISS, text))
            else:
                messages.append(legacy_shape(message))
        return attrs.evolve(reply, messages=tuple(messages), miss=miss)

    def _input_round(self, live: JSONObject, reply: Reply) -> Reply:
        """A legacy client on a modern cassette, answered ``input_required``: the server
        requests it stands for instead, sent as a legacy server sends them; the client's
        answers make the recorded retry (``_round_answered``)."""
        if self.era != "modern" or self.client_era != "legacy":
            return reply
        found = [
            i
            for i, m in enumerate(reply.messages)
            if is_input_required(m) and id_key(m.get("id")) == id_key(live.get("id"))
        ]
        asked = input_requests(reply.messages[found[0]]) if found else []
        if not asked or not all(self._playback.may_ask(r) for _, r in asked):
            return reply  # _for_client makes it the error that names input_required
        index = found[0]
        result = reply.messages[index]["result"]
        round_ = InputRound(live, result.get("requestState"))
        requests = []
        for key, request in asked:
            server_id = self._playback.next_server_id
            self._playback.next_server_id += 1
            round_.keys[id_key(server_id)] = key
            self._rounds[id_key(server_id)] = round_
            requests.append({**request, "id": server_id})
        n = len(requests)
        times = reply.times
        if len(times) == len(reply.messages):
            times = (*times[:index], *(times[index],) * n, *times[index + 1 :])
        return attrs.evolve(
            reply,
            messages=(*reply.messages[:index], *requests, *reply.messages[index + 1 :]),
            metas=(*reply.metas[:index], *(None,) * n, *reply.metas[index + 1 :]),
            times=times,
            awaiting=(*reply.awaiting, *(r["id"] for r in requests)),
            responded=False,
        )

    def _round_answered(self, round_: InputRound, message: JSONObject) -> Reply:
        """One answer to an input round; the recorded retry once all are in."""
        if "result" not in message:
            return self._round_failed(round_, "answered it with an error")
        if not round_.answer(id_key(message.get("id")), message["result"]):
            return Reply()
        return self._request(round_.retry())

    def _round_failed(self, round_: InputRound, what: str) -> Reply:
        """The client did not give what the recorded retry needs: its request fails."""
        for key in [k for k, r in self._rounds.items() if r is round_]:
            del self._rounds[key]
        method = str(round_.origin.get("method"))
        summary = (
            f"{method}: the recording asks the client for input here (input_required, sent "
            f"to this legacy client as server requests) and the client {what}"
        )
        report = MissReport("no-answer", method, summary)
        self.misses.append(report)
        origin = round_.origin.get("id")
        error = error_response(origin, REPLAY_MISS, f"cassette-mcp: {summary}")
        return Reply((error,), report, (None,), origin=origin, responded=True)

    def _lacks(self, method: object, message: JSONObject) -> bool:
        """Whether the recording shows the server had no ``method`` (JSON-RPC's answer is
        then ``Method not found``): 2026-07-28 removed ``ping`` and ``logging/setLevel``, a
        legacy server has no discovery, and one that did not advertise ``logging`` has no
        handler for it."""
        if method in LEGACY_ONLY_METHODS and self._speaks_modern(message):
            return True
        if method == "server/discover":
            return self.era == "legacy"
        return method == "logging/setLevel" and self._server_logs() is False

    def _speaks_modern(self, message: JSONObject) -> bool:
        """Whether ``message`` belongs to a 2026-07-28 session: its envelope says so, or
        the session's first words did and this message says nothing."""
        era = client_era(message)
        return era == "modern" or (era is None and self.client_era == "modern")

    def _server_logs(self) -> bool | None:
        """Whether the recorded server advertised ``logging``; None when no handshake
        recorded its capabilities (the recording cannot tell)."""
        capabilities = self._handshake.get("capabilities") if self._handshake else None
        if not isinstance(capabilities, dict):
            return None
        return "logging" in capabilities

    def _unanswered(self, message: JSONObject, miss: ReplayMiss) -> Reply:
        method = message.get("method")
        msg_id = message["id"]
        if self._lacks(method, message):
            return _reply((error_response(msg_id, METHOD_NOT_FOUND, "Method not found"),))
        if method == "ping" or (method == "logging/setLevel" and self._server_logs()):
            # Asked on the client's own at the start; the recording makes the answer certain
            return _reply(({"jsonrpc": "2.0", "id": msg_id, "result": {}},))
        report = miss.report if isinstance(miss.report, MissReport) else None
        if report is None:
            report = MissReport("not-recorded", str(method), str(miss))
        self.misses.append(report)
        text = f"cassette-mcp: {_miss_line(report, self.source)}"
        error = error_response(msg_id, REPLAY_MISS, text, report.as_data())
        return Reply((error,), report, (None,))

    # -- output ------------------------------------------------------------------------

    def _play(
        self, exchange: Exchange, live: JSONObject, *, warnings: tuple[str, ...] = ()
    ) -> Reply:
        played = self._playback.play(exchange, live)
        if live.get("method") == "initialize":
            warnings = (*warnings, *_version_differs(live, played.messages))
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
            warnings, miss = self._not_asked(exchange, played.skipped, warnings)
        if played.paused is not None:
            live_id = played.paused.request.get("id")
            self._paused[id_key(live_id)] = played.paused
            awaiting = (live_id,)
        elif not played.responded and _needs_answer(exchange, live):  # played: answered
            return self._no_answer(exchange, live, played, warnings, since)
        return Reply(
            tuple(played.messages),
            miss,
            tuple(played.metas),
            exchange,
            live.get("id"),
            awaiting,
            warnings,
            tuple(played.times),
            played.responded,
            since,
        )


class Responder(Protocol):
    """One client session's sans-IO answerer, as the fronts drive it: a ``Replayer``, or
    anything that answers the same way (``cassette.mock.MockServer``)."""

    misses: list[MissReport]

    @property
    def waiting(self) -> tuple[object, ...]: ...

    def start(self) -> Reply: ...

    def receive_frame(self, data: bytes | str) -> Reply: ...

    def expire(self, server_id: object) -> Reply: ...

    def give_up(self, request_id: object) -> Reply: ...

    def undelivered(self, server_id: object) -> Reply: ...

    def describe(self, report: MissReport) -> str: ...

    def summary(self) -> str: ...


class ResponderPool(Protocol):
    """Every session a front serves: ``ReplaySessions``, or a mock's. ``recording`` says
    how the answering server was reached (era, transport, recorded HTTP facts), so a
    network front serves its sessions as that server did. ``release`` is told when a
    session has ended: what it kept for the end of the run (its misses) is taken from it,
    and the rest let go, so a front serving a long run keeps no ended session."""

    @property
    def recording(self) -> Recording: ...

    def new(self) -> Responder: ...

    def release(self, responder: Responder) -> None: ...

    @property
    def misses(self) -> list[MissReport]: ...

    def summary(self) -> str: ...


class ReplaySessions:
    """Every replay session a network front serves from one cassette.

    Each session gets its own ``Replayer`` (its own consumption state), all sharing the
    cassette's ``Prepared`` work. A session's replayer is kept while it is open; when it
    ends (``release``) only its misses and their summary stay, for the end-of-run report:
    the memory a long run keeps grows with its misses, not with its sessions.
    """

    def __init__(
        self,
        recording: Recording,
        strategy: str | Strategy = "default",
        *,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        _check_redaction(recording)  # refused before any client is served
        self.recording = recording
        self._strategy = strategy
        self._environ = environ
        self._prepared = Prepared.of(recording, get_strategy(strategy).ignore)
        self._open: dict[int, Replayer] = {}
        self._ended_misses: list[MissReport] = []
        self._ended_summaries: list[str] = []
        #: what the ended sessions left unplayed, folded as each ends (``unplayed``)
        self._ended_unplayed: dict[int, JSONObject] | None = None
        self._unplayed_unknown = False
        self.sessions = 0  # sessions opened so far

    def new(self) -> Replayer:
        """A fresh session."""
        replayer = Replayer(
            self.recording, self._strategy, environ=self._environ, prepared=self._prepared
        )
        self._open[id(replayer)] = replayer
        self.sessions += 1
        return replayer

    @property
    def live(self) -> int:
        """Sessions opened and not ended yet (each holds its replayer)."""
        return len(self._open)

    def release(self, responder: Responder) -> None:
        """The session of ``responder`` has ended: keep its misses, let go of the rest."""
        replayer = self._open.pop(id(responder), None)
        if replayer is None:
            return
        self._ended_misses += replayer.misses
        summary = replayer.summary()
        if summary:
            self._ended_summaries.append(summary)
        self._ended_unplayed = self._fold(self._ended_unplayed, replayer)

    def _fold(
        self, unplayed: dict[int, JSONObject] | None, replayer: Replayer
    ) -> dict[int, JSONObject] | None:
        """``unplayed`` narrowed to what ``replayer`` left unplayed too (at most the
        cassette's requests, however many sessions are folded in)."""
        matcher = replayer.main_matcher
        if not isinstance(matcher, FingerprintMatcher):
            self._unplayed_unknown = True
            return unplayed
        left = {c.seq: c.message for c in matcher.unconsumed()}
        if unplayed is None:
            return left
        return {seq: message for seq, message in unplayed.items() if seq in left}

    def unplayed(self) -> list[tuple[int, JSONObject]]:
        """The recorded requests no session played, as (event index, message) in order;
        empty when a session's matcher cannot tell (not a fingerprint matcher)."""
        unplayed = self._ended_unplayed
        for replayer in self._open.values():
            unplayed = self._fold(unplayed, replayer)
        if self._unplayed_unknown:
            return []
        return sorted((unplayed or {}).items())

    @property
    def misses(self) -> list[MissReport]:
        """Every miss of every session so far."""
        return [*self._ended_misses, *(m for r in self._open.values() for m in r.misses)]

    def summary(self) -> str:
        """All sessions' misses, for a person ("" when there were none)."""
        open_ = (s for s in (r.summary() for r in self._open.values()) if s)
        return "\n".join([*self._ended_summaries, *open_])


def _version_differs(live: JSONObject, messages: Sequence[Any]) -> tuple[str, ...]:
    """A client that asked ``initialize`` for another revision than the recorded server
    answered: the recording proves only the revision it shows, so that one is given."""
    asked = _params(live).get("protocolVersion")
    answer = messages[-1] if messages else None
    result = answer.get("result") if isinstance(answer, dict) else None
    given = result.get("protocolVersion") if isinstance(result, dict) else None
    if not isinstance(asked, str) or not isinstance(given, str) or asked == given:
        return ()
    return (
        f"the client asked for protocol {asked}; the recorded server answered {given}, and "
        f"the recording shows no more, so the replay answers {given}",
    )


def _needs_answer(exchange: Exchange, live: JSONObject) -> bool:
    """A request whose recording holds no answer (a listen stream never has one: it stays
    open until the client closes it)."""
    return (
        "id" in live
        and exchange.raw is None
        and not exchange.answered
        and live.get("method") != "subscriptions/listen"
    )


def _label(request: JSONObject) -> str:
    method = str(request.get("method"))
    params = _params(request)
    return f'{method} "{params.get("name")}"' if method == "tools/call" else method


def _played(items: Sequence[Item]) -> Reply:
    return Reply(tuple(i.message for i in items), None, tuple(i.meta for i in items))


def _miss_line(report: MissReport, source: str | None) -> str:
    line = report.closest_line
    if line is None:
        return report.summary
    where = f"{source}:{line}" if source else f"line {line}"
    return f"{report.summary} (closest recording: {where})"


def _params(message: JSONObject) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def _answer_part(message: JSONObject) -> Any:
    """What a client answer says, without the parts that may vary between runs."""
    if "error" in message:
        return {"error": message["error"]}
    result = message.get("result")
    if isinstance(result, dict):
        return {k: v for k, v in result.items() if k != "_meta"}
    return result


def _where(diffs: Sequence[Difference]) -> str:
    return "; ".join(
        f"{d.path or '/'}: recorded {show_value(d.recorded)}, received {show_value(d.received)}"
        for d in diffs
    )


_INPUTS: Final = "inputResponses"


def _input_responses_differ(recorded: JSONObject, live: JSONObject) -> tuple[str, ...]:
    """A 2026-07-28 retry carries the client's ``inputResponses``; say if they changed."""
    mine, theirs = _params(recorded).get("inputResponses"), _params(live).get("inputResponses")
    if mine is None and theirs is None:
        return ()
    diffs = differences(mine, mask_like(mine, theirs), limit=3)
    if not diffs:
        return ()
    return (f"{live.get('method')}: inputResponses differ from the recording at {_where(diffs)}",)


def _client_facts(
    message: JSONObject, method: object
) -> tuple[Era | None, Mapping[str, Any] | None]:
    """The era a request speaks and the capabilities it declares (``client_era``,
    ``client_capabilities``): a handshake says them, other requests only in their envelope
    (``_meta``), which most do not have, and are spared the two calls."""
    params = message.get("params")
    if method in HANDSHAKES or (isinstance(params, dict) and "_meta" in params):
        return client_era(message), client_capabilities(message)
    return None, None


def _check_redaction(recording: Recording) -> None:
    """A header's ``redaction`` is read, never run; a malformed one is refused, as ``lint``
    reports it (``check_header``)."""
    info = recording.header.redaction
    problems = [] if info is None else check_header(info)
    if problems:
        source = getattr(recording, "source", None)
        raise CassetteFormatError(str(source) if source else "cassette", 1, problems[0])


def _env_values(info: Mapping[str, Any], environ: Mapping[str, str] | None) -> list[str]:
    """Values of the environment variables the recording named as secret, if set here."""
    names = info.get("env") or ()
    return [v for n in names if isinstance(n, str) and (v := (environ or {}).get(n))]
