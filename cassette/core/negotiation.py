"""The one authority on protocol version, era, capability fit and variant choice.

Theory of operation
-------------------
A replay session is asked by a client of some era, with some capabilities, for some
protocol revision; the cassette holds a recording of one era (``Header.era``) and maybe
variant sessions recorded for other clients (``cassette.core.variants``). Every decision
about who the client is and how it is served is taken here, and nowhere else: the
replayer (``cassette.core.replayer``) consults a ``Negotiation`` at the few points where
the answer depends on it, and the fronts learn the outcome from the ``Reply`` (its
``status``) or from the pool, never by reading eras themselves.

* **Variant choice** (``heard``): each handshake request until a session is under way,
  and each 2026-07-28 request whose envelope says who asks, picks the group that fits the
  client best (``cassette.core.variants.choose``); the replayer swaps its ``GroupState``
  whole.
* **Era** (``crosses`` / ``cross_era``): a legacy client's ``initialize`` on a modern
  cassette is answered from the recorded ``server/discover`` when that lists a legacy
  revision, else refused with ``-32022``; a 2026-07-28 request on a legacy cassette is
  refused with ``-32022`` (``cassette.core.eras`` has the table).
* **Protocol version** (``granted``): a client asking ``initialize`` for an older legacy
  revision than the recorded one is granted it, as the SDK servers grant it; a newer one
  gets the recorded revision, with a warning (``cassette.core.eras.granted_version``).
* **Shape** (``for_client``): a modern recording's messages lose the 2026-07-28-only
  members for a legacy client, and an ``input_required`` answer becomes server requests
  (``input_round``); the client's answers make the recorded retry, which ``answered``
  hands back as a message for the replayer to dispatch like any request.
* **What the recording makes certain** (``unrecorded``): ``ping`` and
  ``logging/setLevel`` asked on the client's own, or ``Method not found`` where the
  recorded server had no such method.
* **Fronts** (``Reply.status``, ``Reply.refuses_era``, ``refuse_other_era``): the HTTP
  status an answer goes out with for this client, whether a session refused its client's
  era (a network front then keeps no session for it), and how a recording front of one
  era answers the other era's opening.

Sans-IO: values in, values out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from cassette.core.eras import (
    LEGACY_ONLY_METHODS,
    capabilities_asked,
    client_era,
    era_refusal,
    granted_version,
    initialize_from_discover,
    input_requests,
    is_input_required,
    legacy_shape,
    legacy_status,
    legacy_versions,
    unsupported_version,
)
from cassette.core.exchanges import Exchange, progress_token
from cassette.core.ids import IdKey, id_key
from cassette.core.jsonrpc import METHOD_NOT_FOUND, REPLAY_MISS, JSONObject, error_response
from cassette.core.matching import FingerprintMatcher, Matcher
from cassette.core.mcp import MODERN_VERSION
from cassette.core.model import Era
from cassette.core.playback import Playback
from cassette.core.prepared import Prepared
from cassette.core.reply import Reply, _reply
from cassette.core.variants import HANDSHAKES, client_capabilities, compared, pick

if TYPE_CHECKING:
    from cassette.core.misses import MissReport
    from cassette.core.rounds import InputRound

__all__ = [
    "HANDSHAKES",
    "GroupState",
    "Negotiation",
    "client_era",
    "client_facts",
    "refuse_other_era",
]


class GroupState:
    """What one session holds for one group of the cassette (the main recording, or a
    variant session): swapped whole when the authority chooses another group, and kept,
    so a group adopted again goes on from where it was left.

    A machine's state compared by identity, written as a plain slotted class rather than
    an attrs class: attrs writes and compiles its methods at import, 2.3 M instructions of
    every replay's start-up for a class built once per session (a speed exception, listed
    in docs/architecture.md)."""

    __slots__ = ("matcher", "notes", "playback", "prepared", "raws_played", "refusals")

    def __init__(
        self,
        prepared: Prepared,
        matcher: Matcher,
        notes: FingerprintMatcher,
        refusals: FingerprintMatcher | None,
        playback: Playback,
    ) -> None:
        self.prepared = prepared
        self.matcher = matcher
        #: notifications, matched strictly and silently with the session's ignore rules
        self.notes = notes
        #: requests the recorded server refused without a session: they answer only
        #: requests sent before this session's own handshake succeeded; ``None`` after
        self.refusals = refusals
        self.playback = playback
        #: how many times each raw frame was played
        self.raws_played: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"GroupState(era={self.prepared.era!r}, playback={self.playback!r})"


def client_facts(
    message: JSONObject, method: object
) -> tuple[Era | None, Mapping[str, Any] | None]:
    """The era a request speaks and the capabilities it declares (``client_era``,
    ``client_capabilities``): a handshake says them, other requests only in their envelope
    (``_meta``), which most do not have, and are spared the two calls."""
    params = message.get("params")
    if method in HANDSHAKES or (isinstance(params, dict) and "_meta" in params):
        return client_era(message), client_capabilities(message)
    return None, None


def refuse_other_era(era: str, message: object) -> JSONObject | None:
    """How a server of only ``era`` answers a client request of the other era (``None``:
    forward it): what a recording front answers in the server's place under ``--era``
    (``cassette.core.eras.era_refusal``)."""
    return era_refusal(era, message)


class Negotiation:
    """One session's dealings with its client: who it is (era, capabilities), which group
    answers it, and the translation between eras. ``misses`` is the session's own list:
    what is refused here is a miss of the session."""

    def __init__(self, prepared: Prepared, misses: list[MissReport]) -> None:
        self.misses = misses
        self.groups = prepared.groups if prepared.variants else ()
        self._modern = prepared.era == "modern"  # the cassette's era (its main recording's)
        # a handshake may still choose the group (until a session is under way)
        self._choosing = bool(self.groups)
        #: the recorded server's answer to the recorder's legacy ``initialize`` probe
        self._probe = prepared.probe
        #: what the recorder's probes captured (``cassette.core.listings``)
        self._surface = prepared.surface
        #: whether this session was warned that its client's capabilities differ
        self._told_capabilities = False
        #: whether it was warned that the recording holds no progress its client asks for
        self._told_progress = False
        #: the live client's era, once a message says
        self.client_era: Era | None = None
        #: a legacy client's answers to what an input_required response asked, by live
        #: server-request id (``InputRound``)
        self.rounds: dict[IdKey, InputRound] = {}
        #: a legacy client's tool calls answered from a 2026-07-28 group whose legacy
        #: behaviour the recording cannot show, by live request id: what their errors say
        #: (``cassette.core.legacy_calls``); and the tools it was told of
        self._noted: dict[IdKey, str] = {}
        self._announced: set[str] = set()

    # -- who the client is ---------------------------------------------------------------

    def heard(
        self, message: JSONObject, method: object, era: Era | None, current: Prepared
    ) -> tuple[Prepared, bool] | None:
        """Note what ``message`` says of its client; the group to adopt instead of
        ``current``, and whether afresh (else it goes on where it was left), if another
        fits better."""
        if era is not None and self.client_era is None:
            self.client_era = era
        if not self.groups:
            return None
        if self._choosing:
            if method in HANDSHAKES:
                return self._choose(message, current, fresh=True)
            if method != "ping":
                self._choosing = False  # a session is under way: its group stays
        if era == "modern" and client_capabilities(message) is not None:
            return self._choose(message, current, fresh=False)
        return None

    def _choose(
        self, message: JSONObject, current: Prepared, *, fresh: bool
    ) -> tuple[Prepared, bool] | None:
        """The group ``message`` fits (a handshake, or a 2026-07-28 request, whose envelope
        says who asks: over stateless HTTP one replayer serves every client)."""
        groups = self.groups
        weighed = [(g.era, g.handshake, g.fit) for g in groups]
        chosen = groups[pick(weighed, message, probed=self._probe is not None)[0]]
        return None if chosen is current else (chosen, fresh)

    def translates(self, era: Era) -> bool:
        """Whether a group of ``era`` answers this client in the other era's shape."""
        return era == "modern" and self.client_era == "legacy"

    @property
    def legacy_on_modern(self) -> bool:
        """Whether this is a legacy client's session on a modern cassette: whatever group
        answers it, it is answered at the statuses a legacy server uses (``status_for``)."""
        return self._modern and self.client_era == "legacy"

    @staticmethod
    def status_for(reply: Reply) -> Reply:
        """``reply`` at the HTTP status a legacy server answers with: a 2026-07-28 server
        mirrors a JSON-RPC error in the status, a legacy one answers 200
        (``cassette.core.eras.legacy_status``)."""
        exchange = reply.exchange
        if exchange is None or reply.status is not None:
            return reply
        status = legacy_status(exchange.status)
        return reply if status == exchange.status else attrs.evolve(reply, status=status)

    # -- across eras (``cassette.core.eras``) ----------------------------------------------

    @staticmethod
    def crosses(method: object, era: Era | None, served: Era) -> bool:
        """Whether a request of ``era`` (as it says) is answered by the era rules, not by
        the recording of era ``served``."""
        if method == "initialize":
            return served == "modern"
        return served == "legacy" and era == "modern" and method != "server/discover"

    def cross_era(self, message: JSONObject, state: GroupState) -> Reply:
        """The answer to a request ``crosses`` says is the era rules'."""
        if message.get("method") == "initialize":
            return self._initialize_from_discover(message, state)
        return self._modern_on_legacy(message, state.prepared.handshake)

    def _initialize_from_discover(self, message: JSONObject, state: GroupState) -> Reply:
        """A legacy client on a modern cassette: its ``initialize``, answered from the
        recorded ``server/discover`` when that lists a legacy revision."""
        handshake = state.prepared.handshake
        requested = _params(message).get("protocolVersion")
        result = self._from_probe(requested, handshake)
        if result is None:
            result = initialize_from_discover(handshake or {}, requested)
        if result is not None:
            # A legacy session from here on: its log messages follow the legacy rules (sent
            # by default, filtered by logging/setLevel), as the live server's would.
            state.playback.modern = False
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            return _reply((answer,))
        listed = handshake.get("supportedVersions") if handshake else None
        supported = [str(v) for v in listed] if isinstance(listed, list) else []
        summary = (
            "initialize (a legacy client) on a 2026-07-28 cassette whose server listed no "
            "legacy revision and was not probed for one: record a legacy session into it "
            "with cassette variant TAPE --as legacy (or record with cassette record --era "
            "legacy)"
        )
        return self._refused(message, summary, requested, supported)

    def _from_probe(self, requested: object, handshake: JSONObject | None) -> JSONObject | None:
        """The ``initialize`` result the recorder's probe got, at the revision the server
        would grant ``requested`` (``granted_version``); ``None`` without a probe. It is
        the server's own answer to a legacy client, so it goes before one derived from
        ``server/discover``."""
        probe = self._probe
        version = probe.get("protocolVersion") if probe is not None else None
        if probe is None or not isinstance(version, str):
            return None
        listed = legacy_versions(handshake) if handshake else []
        return {**probe, "protocolVersion": granted_version(requested, version, listed)}

    def _modern_on_legacy(self, message: JSONObject, handshake: JSONObject | None) -> Reply:
        """A 2026-07-28 request on a legacy cassette: the recording shows no support for it."""
        recorded = handshake.get("protocolVersion") if handshake else None
        supported = [recorded] if isinstance(recorded, str) else []
        summary = (
            f"{message.get('method')} in the 2026-07-28 envelope on a legacy cassette (its "
            "server answered the initialize handshake only): record it with this client"
        )
        return self._refused(message, summary, MODERN_VERSION, supported)

    def _refused(
        self, message: JSONObject, summary: str, requested: object, supported: list[str]
    ) -> Reply:
        """The ``-32022`` a server of the other era gives, at the status a 2026-07-28
        server mirrors it with (400)."""
        from cassette.core.misses import MissReport

        report = MissReport("not-recorded", str(message.get("method")), summary)
        self.misses.append(report)
        error = unsupported_version(message.get("id"), requested, supported, summary)
        return Reply((error,), report, (None,), status=400, refuses_era=True)

    def granted(
        self, live: JSONObject, messages: Sequence[Any]
    ) -> tuple[Sequence[Any], tuple[str, ...]]:
        """The recorded ``initialize`` answer (the last of ``messages``) with the revision
        the recorded server would have granted the live client (``granted_version``), and
        a warning when that is not what it asked for."""
        asked = _params(live).get("protocolVersion")
        answer = messages[-1] if messages else None
        result = answer.get("result") if isinstance(answer, dict) else None
        given = result.get("protocolVersion") if isinstance(result, dict) else None
        if not isinstance(asked, str) or not isinstance(given, str) or asked == given:
            return messages, ()
        version = granted_version(asked, given, self._evidence())
        if version == asked:
            assert isinstance(answer, dict)
            assert isinstance(result, dict)
            shown = {**answer, "result": {**result, "protocolVersion": version}}
            return (*messages[:-1], shown), ()
        return messages, (
            f"the client asked for protocol {asked}; the recorded server answered {given}, "
            f"and grants no newer revision than it answered, so the replay answers {given}",
        )

    def _evidence(self) -> tuple[str, ...]:
        """The legacy revisions a recorded ``server/discover`` (of any group) lists: what
        the recording proves the server supports; empty when none was recorded."""
        found: list[str] = []
        for group in self.groups:
            if group.era == "modern" and group.handshake is not None:
                found += legacy_versions(group.handshake)
        return tuple(found)

    # -- capabilities the recorded server reacted to -----------------------------------------

    def capability_warnings(self, message: JSONObject, group: Prepared) -> tuple[str, ...]:
        """Once per session: the live client declares other capabilities than the client
        ``group`` was recorded with. It says whether the recorded server reacted to them
        (it asked that client for roots, sampling or elicitation, or a variant recorded
        for other capabilities holds other answers), or, where the server asked nothing at
        all, that the recording cannot show it: a server that lists its tools by the
        client's capabilities (server-everything) leaves no trace of it in one session.
        The answers come from that recording all the same; the warning says what may
        differ from the live server's."""
        said = client_capabilities(message)
        recorded = group.fit.capabilities if group.fit is not None else None
        if self._told_capabilities or said is None or recorded is None:
            return ()
        differ = compared(said) ^ recorded
        asked = _asked_for(group)
        reacted = differ & asked
        if differ and any(g.fit and g.fit.capabilities != recorded for g in self.groups):
            reacted = differ  # a variant shows the server answers by capabilities
        if not reacted and (asked or not differ):
            return ()  # the server asked for some, and not these: it ignores them
        if not reacted and self._surface is not None and self._surface.probed_for(said):
            return ()  # the probes show what it lists to these (``cassette.core.listings``)
        self._told_capabilities = True
        live = ", ".join(sorted(compared(said))) or "none"
        held = ", ".join(sorted(recorded)) or "none"
        if reacted:
            how = f"and the recorded server reacted to {', '.join(sorted(reacted))}"
        else:  # a tool list that depends on them shows nothing of it in one recording
            how = (
                "and the recording cannot show whether the server answers by them (some "
                "list their tools by the client's capabilities)"
            )
        return (
            f"the client declares capabilities {live}; the session answering it was "
            f"recorded with {held}, {how}: answers may differ from the live server's "
            "(record this client's session with cassette variant TAPE --as NAME "
            "--capabilities ... or a profile)",
        )

    def progress_warnings(self, live: JSONObject, exchange: Exchange) -> tuple[str, ...]:
        """Once per session: the live client asks for progress on a request (a
        ``progressToken`` in its ``_meta``) whose recording has none, because the client
        that recorded it did not ask: the server sends progress only when asked, so this
        client gets none from the replay, where the live server would have sent some."""
        if self._told_progress or progress_token(live) is None:
            return ()
        if progress_token(exchange.message) is not None:
            return ()  # the recording client asked: what the server sent is recorded
        self._told_progress = True
        return (
            f"the client asks for progress on {live.get('method')} (a progressToken); the "
            "client that recorded it did not ask, so the recording holds no progress "
            "notifications and the replay sends none (record with a client that asks for "
            "progress to replay it)",
        )

    # -- what the recording makes certain --------------------------------------------------

    def unrecorded(
        self, message: JSONObject, served: Era, handshake: JSONObject | None
    ) -> JSONObject | None:
        """The answer to an unrecorded request that the recording makes certain, if any:
        ``Method not found`` where it shows the server had no such method (2026-07-28
        removed ``ping`` and ``logging/setLevel``, a legacy server has no discovery, and one
        that did not advertise ``logging`` has no handler for it); an empty result for
        ``ping``, and for ``logging/setLevel`` when the server advertised ``logging``. A
        legacy client of a modern cassette is judged by what the server answered the
        recorder's legacy probe (2026-07-28 removed ``logging/setLevel``, so the modern
        handshake never advertises ``logging``)."""
        method = message.get("method")
        msg_id = message["id"]
        if served == "modern" and self.client_era == "legacy" and self._probe is not None:
            # what the server told a legacy client: a modern handshake has no logging
            handshake = self._probe
        logs = _server_logs(handshake)
        if method in LEGACY_ONLY_METHODS and self._speaks_modern(message):
            lacks = True
        elif method == "server/discover":
            lacks = served == "legacy"
        else:
            lacks = method == "logging/setLevel" and logs is False
        if lacks:
            return error_response(msg_id, METHOD_NOT_FOUND, "Method not found")
        if method == "ping" or (method == "logging/setLevel" and logs):
            return {"jsonrpc": "2.0", "id": msg_id, "result": {}}
        return None

    def _speaks_modern(self, message: JSONObject) -> bool:
        """Whether ``message`` belongs to a 2026-07-28 session: its envelope says so, or
        the session's first words did and this message says nothing."""
        era = client_era(message)
        return era == "modern" or (era is None and self.client_era == "modern")

    # -- a modern recording for a legacy client --------------------------------------------

    def unrecorded_call(
        self,
        live: JSONObject,
        exchange: Exchange,
        group: Prepared,
        capabilities: Mapping[str, Any] | None,
        *,
        bridged: bool,
    ) -> tuple[str, ...]:
        """A tool call answered by ``exchange`` of ``group`` whose recorded answer asked
        for input or refused it, to a client the recorded server may have treated
        otherwise: a legacy client of a 2026-07-28 group (``bridged``), or a client that
        declares other capabilities (``capabilities``) than the group's recorded client.
        Its behaviour for this client is not recorded (``cassette.core.legacy_calls``):
        the warning is given once per tool, and to a legacy client its errors say so too
        (``for_client``, ``noted``)."""
        if live.get("method") != "tools/call":
            return ()
        held = group.fit.capabilities if group.fit is not None else None
        differ = capabilities is not None and held is not None and compared(capabilities) != held
        if not (bridged or differ):
            return ()
        from cassette.core.legacy_calls import announcement, era_dependent

        if not era_dependent(exchange):
            return ()
        tool = str(_params(live).get("name"))
        note = announcement(tool, legacy=bridged)
        if bridged:  # the answer itself may be right for a client of its era: told, not changed
            self._noted[id_key(live.get("id"))] = note
        if tool in self._announced:
            return ()
        self._announced.add(tool)
        return (note,)

    def noted(self, reply: Reply) -> Reply:
        """``reply`` with the note ``unrecorded_call`` made in its errors (a client of the
        group's own era: nothing else to shape)."""
        if not self._noted or not reply.messages:
            return reply
        from cassette.core.legacy_calls import with_note

        messages = []
        for message in reply.messages:
            note = self._note_for(message)
            messages.append(message if note is None else with_note(message, note))
        return attrs.evolve(reply, messages=tuple(messages))

    def for_client(self, reply: Reply) -> Reply:
        """A modern recording's messages in the shape the live legacy client expects; an
        error for a tool call ``unrecorded_call`` noted says what the recording cannot."""
        if not reply.messages:
            return reply
        messages = []
        miss = reply.miss
        for message in reply.messages:
            note = self._note_for(message)
            if is_input_required(message):
                from cassette.core.misses import MissReport

                summary = (
                    "the recorded answer asks the client for input the 2026-07-28 way "
                    "(input_required) and the replay cannot ask this legacy client for it (a "
                    "capability it did not declare, or no request recorded): record it with "
                    "this client, or with cassette record --era legacy"
                )
                summary = summary if note is None else f"{summary}; {note}"
                miss = MissReport("not-recorded", "input_required", summary)
                self.misses.append(miss)
                text = f"cassette-mcp: {miss.summary}"
                messages.append(error_response(message.get("id"), REPLAY_MISS, text))
            elif note is not None:
                from cassette.core.legacy_calls import with_note

                messages.append(with_note(legacy_shape(message), note))
            else:
                messages.append(legacy_shape(message))
        return attrs.evolve(reply, messages=tuple(messages), miss=miss)

    def _note_for(self, message: Any) -> str | None:
        """The note of the noted tool call ``message`` answers (``None``: none); an answer
        that asks for input keeps it noted for the answer to its retry."""
        if not self._noted or not isinstance(message, dict) or "method" in message:
            return None
        key = id_key(message.get("id"))
        if is_input_required(message):
            return self._noted.get(key)
        return self._noted.pop(key, None)

    def input_round(self, live: JSONObject, reply: Reply, playback: Playback) -> Reply:
        """A legacy client answered ``input_required``: the server requests it stands for
        instead, sent as a legacy server sends them; the client's answers make the
        recorded retry (``answered``)."""
        found = [
            i
            for i, m in enumerate(reply.messages)
            if is_input_required(m) and id_key(m.get("id")) == id_key(live.get("id"))
        ]
        asked = input_requests(reply.messages[found[0]]) if found else []
        if not asked or not all(playback.may_ask(r) for _, r in asked):
            return reply  # for_client makes it the error that names input_required
        index = found[0]
        result = reply.messages[index]["result"]
        from cassette.core.rounds import InputRound  # only a bridged input_required

        round_ = InputRound(live, result.get("requestState"))
        requests = []
        for key, request in asked:
            server_id = playback.next_server_id
            playback.next_server_id += 1
            round_.keys[id_key(server_id)] = key
            self.rounds[id_key(server_id)] = round_
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

    def answered(self, message: JSONObject) -> Reply | JSONObject | None:
        """A client answer to an input round's server request: ``None`` when it is not
        one; the recorded retry (a request to dispatch) once all are in; else what to
        send now (nothing yet, or the error when the client answered with one)."""
        round_ = self.rounds.pop(id_key(message.get("id")), None)
        if round_ is None:
            return None
        if "result" not in message:
            return self._round_failed(round_, "answered it with an error")
        if not round_.answer(id_key(message.get("id")), message["result"]):
            return Reply()
        return round_.retry()

    def abandon(self, server_id: object, what: str) -> Reply | None:
        """An input round's server request the client did not answer (``what`` says why):
        its request fails; ``None`` when ``server_id`` is not one."""
        round_ = self.rounds.pop(id_key(server_id), None)
        return None if round_ is None else self._round_failed(round_, what)

    def _round_failed(self, round_: InputRound, what: str) -> Reply:
        """The client did not give what the recorded retry needs: its request fails."""
        for key in [k for k, r in self.rounds.items() if r is round_]:
            del self.rounds[key]
        method = str(round_.origin.get("method"))
        summary = (
            f"{method}: the recording asks the client for input here (input_required, sent "
            f"to this legacy client as server requests) and the client {what}"
        )
        from cassette.core.misses import MissReport

        report = MissReport("no-answer", method, summary)
        self.misses.append(report)
        origin = round_.origin.get("id")
        error = error_response(origin, REPLAY_MISS, f"cassette-mcp: {summary}")
        return Reply((error,), report, (None,), origin=origin, responded=True)

    def cancel(self, request_id: object) -> None:
        """The client cancelled ``request_id``: its input round, if any, is over."""
        for asked, round_ in list(self.rounds.items()):
            if id_key(round_.origin.get("id")) == id_key(request_id):
                del self.rounds[asked]

    @property
    def waiting(self) -> tuple[object, ...]:
        """Live ids of input rounds' server requests still waiting for an answer."""
        return tuple(key[1] for key in self.rounds)  # id_key keeps the id second


def _asked_for(group: Prepared) -> frozenset[str]:
    """The capabilities the recorded server asked its client for in ``group``: a server
    request, or (2026-07-28) an ``input_required`` result's ``inputRequests``."""
    asked: set[str] = set()
    for exchange in group.exchanges:
        for item in exchange.items:
            if not isinstance(item.message, dict):
                continue  # a raw exchange's answer may be a batch
            if item.role in ("request", "response"):
                asked |= capabilities_asked(item.message, request=item.role == "request")
    return frozenset(asked)


def _server_logs(handshake: JSONObject | None) -> bool | None:
    """Whether the recorded server advertised ``logging``; None when no handshake
    recorded its capabilities (the recording cannot tell)."""
    capabilities = handshake.get("capabilities") if handshake else None
    if not isinstance(capabilities, dict):
        return None
    return "logging" in capabilities


def _params(message: JSONObject) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}
