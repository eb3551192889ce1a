"""The era machine: the one authority on protocol version, era, capability fit and variant
choice, which the replayer asks at two points of each request.

Theory of operation
-------------------
A replay session is asked by a client of some era, with some capabilities, for some
protocol revision; the cassette holds a recording of one era (``Header.era``) and maybe
variant sessions recorded for other clients (``cassette.core.eras.variants``). Every decision
about who the client is and how it is served is taken here, and nowhere else. The replayer
(``cassette.core.replay.replayer``) answers a request in four steps, and this machine takes the
first and the last, as h11's ``Connection`` asks its ``ConnectionState`` at fixed points:

1. **before** (``before``): what the request says of its client (its era, set once by the
   first message that says it; the capabilities and log level it declares); which group
   of the cassette answers it (``cassette.core.eras.variants.pick`` on each handshake until a
   session is under way, and on each 2026-07-28 request whose envelope says who asks;
   the group is changed in the seat both share, ``cassette.core.replay.groups.Groups``); and
   whether something answers it other than the group's matcher: the era rules (a legacy
   client's ``initialize`` on a modern recording, a 2026-07-28 request on a legacy one,
   a legacy client's ``logging/setLevel`` on a modern one), a refusal the recorded server
   gave a request sent without a session, or a listing the recorder's probes answer better
   (``cassette.core.eras.listings``). The capability warning is made here, told with the reply.
2. **match** and 3. **play** are the replayer's.
4. **after** (``after``): what the client is sent. For a reply played from the
   recording the request matched: the warnings that reply carries (a 2026-07-28 retry's
   ``inputResponses`` that differ, progress the recording's client never asked for, a
   tool call whose behaviour for this client was not recorded,
   ``cassette.core.eras.legacy_calls``), and the protocol revision an ``initialize`` is
   granted. Then, for any reply to a client message: the warnings made before, and for a
   legacy client of a modern recording its shape (the 2026-07-28-only members dropped, an
   ``input_required`` answer turned into server requests, an *input round* whose answers
   make the recorded retry, ``cassette.core.replay.waits``) and its HTTP status. A reply to no
   client message (a raw frame's, a deadline's) gets its status only.

The rules themselves are functions of values in ``cassette.core.replay.era_answers`` (across
eras, the granted revision, what the recording makes certain, the status, the warnings);
this module keeps the state they are applied with. The fronts learn the outcome from the
``Reply`` (``status``, ``refuses_era``) or from the pool, never by reading eras themselves;
``refuse_other_era`` is how a recording front of one era answers the other era's opening.

Invariants
----------
* The replayer calls ``before`` once per request, ``after`` once per reply (a batch:
  once per element, then once for the batch; a reply to no client message, with
  ``live`` ``None``), and reads ``client_era``; nothing else of this object. Every other
  decision about eras, variants and what a client is sent is taken here, but one: to a
  request nothing recorded the replayer applies the rule of what the recording makes
  certain itself (``era_answers.unrecorded``), since only a miss asks it.
* The client's era is set by the first message that says it, and never changes.
* Only ``before`` changes the group answering the session, and only on a handshake
  before the session is under way, or on a 2026-07-28 request that says who asks.
* Each once-a-session warning (capabilities, progress, a probe's listing, each tool's
  announcement) is told at most once.
* Whatever is refused here is a miss of the session (``Waits.misses``, the session's list).
* Shaping is on only for a legacy client of a modern group or cassette; off, ``after``
  adds warnings and nothing else, so a client of the recording's era pays a few checks.

Sans-IO: values in, values out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from cassette.core.eras.bridge import (
    client_era,
    era_refusal,
    input_requests,
    is_input_required,
    legacy_shape,
)
from cassette.core.eras.variants import HANDSHAKES, client_capabilities, compared, pick
from cassette.core.replay.era_answers import (
    capability_warning,
    crosses,
    evidence,
    granted,
    initialize_on_modern,
    modern_on_legacy,
    progress_warning,
    status_for,
    unrecorded,
)
from cassette.core.replay.groups import Groups, GroupState
from cassette.core.replay.playback import Playback
from cassette.core.replay.prepared import Prepared
from cassette.core.replay.replay_parts import INPUTS, input_responses_differ, params
from cassette.core.replay.reply import Reply, _reply
from cassette.core.replay.shown import Shown
from cassette.core.wire.exchanges import Exchange
from cassette.core.wire.ids import IdKey, id_key
from cassette.core.wire.jsonrpc import REPLAY_MISS, JSONObject, error_response
from cassette.core.wire.model import Era
from cassette.errors import ReplayMiss

if TYPE_CHECKING:
    from cassette.core.replay.waits import Waits

__all__ = [
    "HANDSHAKES",
    "Chosen",
    "GroupState",
    "Negotiation",
    "client_era",
    "client_facts",
    "refuse_other_era",
]

#: a recording ``before`` chose to answer a request (a refusal, a probe's listing), and
#: the warnings to tell with it
Chosen = tuple[Exchange, tuple[str, ...]]


def client_facts(
    message: JSONObject, method: object
) -> tuple[Era | None, Mapping[str, Any] | None]:
    """The era a request speaks and the capabilities it declares (``client_era``,
    ``client_capabilities``): a handshake says them, other requests only in their envelope
    (``_meta``), which most do not have, and are spared the two calls."""
    found = message.get("params")
    if method in HANDSHAKES or (isinstance(found, dict) and "_meta" in found):
        return client_era(message), client_capabilities(message)
    return None, None


def refuse_other_era(era: str, message: object) -> JSONObject | None:
    """How a server of only ``era`` answers a client request of the other era (``None``:
    forward it): what a recording front answers in the server's place under ``--era``
    (``cassette.core.eras.bridge.era_refusal``)."""
    return era_refusal(era, message)


class Negotiation:
    """One session's dealings with its client: who it is (era, capabilities), which group
    answers it, and what it is sent (see the module docstring). ``groups`` is the seat it
    shares with the replayer; ``waits`` holds the session's misses and its input rounds;
    ``shown`` redacts a live message before a miss or a warning tells of it."""

    def __init__(self, groups: Groups, waits: Waits, shown: Shown | None = None) -> None:
        main = groups.main
        self._groups = groups
        self._waits = waits
        self.misses = waits.misses
        self._shown = shown if shown is not None else Shown()
        #: the groups a handshake chooses among (none: a cassette without variants)
        self._variants = main.groups if main.variants else ()
        self._modern = main.era == "modern"  # the cassette's era (its main recording's)
        # a handshake may still choose the group (until a session is under way)
        self._choosing = bool(self._variants)
        #: the recorded server's answer to the recorder's legacy ``initialize`` probe
        self._probe = main.probe
        #: what the recorder's probes captured (``cassette.core.eras.listings``)
        self._surface = main.surface
        self._listings = None if main.surface is None else main.surface.session()
        #: whether this session was warned that its client's capabilities differ, and
        #: that the recording holds no progress its client asks for
        self._told_capabilities = False
        self._told_progress = False
        #: the live client's era, once a message says
        self.client_era: Era | None = None
        #: whether replies are shaped for the client (a legacy client of a modern group
        #: or cassette): checked once per reply instead of asking the eras each time
        self._shaping = False
        #: warnings made before matching, told with the reply being made
        self._pending: tuple[str, ...] = ()
        #: a legacy client's tool calls answered from a 2026-07-28 group whose legacy
        #: behaviour the recording cannot show, by live request id: what their errors say
        #: (``cassette.core.eras.legacy_calls``); and the tools it was told of
        self._noted: dict[IdKey, str] = {}
        self._announced: set[str] = set()

    # -- before matching ---------------------------------------------------------------

    def before(self, message: JSONObject, raw: str | None = None) -> Reply | Chosen | None:
        """Before the request ``message`` is matched (``raw``: its text, if it came as
        one): note what it says of its client and choose the group that answers it. What
        answers it instead of the group's matcher: the era rules' ``Reply``, or a
        recording chosen here (``Chosen``) for the replayer to play; ``None``: match it."""
        method = message.get("method")
        era, capabilities = client_facts(message, method)
        if era is not None or self._variants:
            self._heard(message, method, era)
        state = self._groups.current
        if method == "logging/setLevel":  # the live choice, recorded or not
            level = params(message).get("level")
            state.playback.log_level = level if isinstance(level, str) else None
        if capabilities is not None:
            state.playback.capabilities = capabilities
            self._pending = self._capabilities(capabilities, state.prepared)
        served = state.prepared.era
        if (method == "initialize" or era == "modern") and crosses(method, era, served):
            return self._cross_era(self._shown.message(message, raw), state)
        if method == "initialize":
            state.refusals = None  # a session: no refusals to replay
        elif state.refusals is not None:
            try:  # sent without a session, as one the recorded server refused: the same
                return state.prepared.exchanges[state.refusals.match(message)], ()
            except ReplayMiss:
                pass
        if method == "logging/setLevel" and self._modern and self.client_era == "legacy":
            # what a modern session recorded of it is that era's answer (2026-07-28
            # removed the method): the probe's legacy handshake says instead
            certain = unrecorded(
                message, served, state.prepared.handshake, self.client_era, self._probe
            )
            if certain is not None:
                return _reply((certain,))
        if self._listings is None:
            return None
        return self._listings.answer(message, state.playback.capabilities, state.prepared)

    def _heard(self, message: JSONObject, method: object, era: Era | None) -> None:
        """Note what ``message`` says of its client; adopt the group that fits it best."""
        if era is not None and self.client_era is None:
            self.client_era = era
        if self._variants:
            chosen = self._chosen(message, method, era)
            if chosen is not None:
                self._groups.adopt(*chosen)
        served = self._groups.current.prepared.era
        self._shaping = self.client_era == "legacy" and (served == "modern" or self._modern)

    def _chosen(
        self, message: JSONObject, method: object, era: Era | None
    ) -> tuple[Prepared, bool] | None:
        """The group to adopt instead of the current one, if another fits better, and
        whether afresh (a handshake: else it goes on where it was left)."""
        if self._choosing:
            if method in HANDSHAKES:
                return self._choose(message, fresh=True)
            if method != "ping":
                self._choosing = False  # a session is under way: its group stays
        if era == "modern" and client_capabilities(message) is not None:
            return self._choose(message, fresh=False)
        return None

    def _choose(self, message: JSONObject, *, fresh: bool) -> tuple[Prepared, bool] | None:
        """The group ``message`` fits (a handshake, or a 2026-07-28 request, whose envelope
        says who asks: over stateless HTTP one replayer serves every client)."""
        groups = self._variants
        weighed = [(g.era, g.handshake, g.fit) for g in groups]
        chosen = groups[pick(weighed, message, probed=self._probe is not None)[0]]
        return None if chosen is self._groups.current.prepared else (chosen, fresh)

    def _capabilities(self, said: Mapping[str, Any], group: Prepared) -> tuple[str, ...]:
        """Once a session: the capability warning (``era_answers.capability_warning``)."""
        if self._told_capabilities:
            return ()
        told = capability_warning(said, group, self._variants, self._surface)
        if told is None:
            return ()
        self._told_capabilities = True
        return (told,)

    def _cross_era(self, message: JSONObject, state: GroupState) -> Reply:
        """The era rules' answer to a request of the other era than ``state``'s group."""
        handshake = state.prepared.handshake
        if message.get("method") == "initialize":
            reply = initialize_on_modern(message, handshake, self._probe)
            if reply.miss is None:
                # A legacy session from here on: its log messages follow the legacy rules
                # (sent by default, filtered by logging/setLevel), as the live server's would.
                state.playback.modern = False
        else:
            reply = modern_on_legacy(message, handshake)
        if reply.miss is not None:
            self.misses.append(reply.miss)
        return reply

    # -- after playing -----------------------------------------------------------------

    def after(
        self,
        live: JSONObject | None,
        reply: Reply,
        raw: str | None = None,
        *,
        matched: bool = False,
    ) -> Reply:
        """``reply`` as this client is sent it. ``live``: the client message it answers
        (``None``: none, as a raw frame's or a deadline's: its status only); ``matched``:
        played from the recording ``live`` matched (``raw``: the request's text)."""
        if live is None:
            return status_for(reply) if self._shaping and self._modern else reply
        if matched:
            reply = self._played(live, reply, raw)
        if self._pending:
            reply = attrs.evolve(reply, warnings=(*reply.warnings, *self._pending))
            self._pending = ()
        if not self._shaping:
            return reply
        if self._groups.current.prepared.era == "modern":
            reply = self._for_client(reply)
        return status_for(reply) if self._modern else reply

    def _played(self, live: JSONObject, reply: Reply, raw: str | None) -> Reply:
        """A reply played from the recording ``live`` matched: the warnings it carries,
        the revision an ``initialize`` is granted, and for a legacy client of a modern
        group, an ``input_required`` answer as an input round."""
        exchange = reply.exchange
        assert exchange is not None
        state = self._groups.current
        warnings: tuple[str, ...] = ()
        asked = live.get("params") or ()
        if INPUTS in asked or INPUTS in (exchange.message.get("params") or ()):
            # asked here, not in the function: most requests have none, and a call costs
            warnings = input_responses_differ(exchange.message, self._shown.message(live, raw))
        meta = asked.get("_meta") if isinstance(asked, dict) else None
        if isinstance(meta, dict) and "progressToken" in meta and not self._told_progress:
            told = progress_warning(live, exchange)
            if told is not None:
                self._told_progress = True
                warnings = (*warnings, told)
        bridged = self._shaping and state.prepared.era == "modern"
        method = live.get("method")
        if method == "tools/call":  # what its tools may not show this client
            warnings = (*warnings, *self._unrecorded_call(live, exchange, state, bridged))
        messages: Sequence[Any] = reply.messages
        if method == "initialize":  # the revision the live server would grant
            messages, said = granted(live, messages, evidence(self._variants))
            warnings = (*warnings, *said)
        if warnings or messages is not reply.messages:
            warnings = (*warnings, *reply.warnings)
            reply = attrs.evolve(reply, messages=tuple(messages), warnings=warnings)
        if bridged:
            return self._input_round(live, reply, state.playback)
        return self._with_notes(reply) if self._noted else reply

    def _unrecorded_call(
        self, live: JSONObject, exchange: Exchange, state: GroupState, bridged: bool
    ) -> tuple[str, ...]:
        """A tool call answered by ``exchange`` whose recorded answer asked for input or
        refused it, to a client the recorded server may have treated otherwise: a legacy
        client of a 2026-07-28 group (``bridged``), or a client that declares other
        capabilities than the group's recorded client. Its behaviour for this client is
        not recorded (``cassette.core.eras.legacy_calls``): the warning is given once per
        tool, and to a legacy client its errors say so too (``_for_client``)."""
        group, capabilities = state.prepared, state.playback.capabilities
        held = group.fit.capabilities if group.fit is not None else None
        differ = capabilities is not None and held is not None and compared(capabilities) != held
        if not (bridged or differ):
            return ()
        from cassette.core.eras.legacy_calls import announcement, era_dependent

        if not era_dependent(exchange):
            return ()
        tool = str(params(live).get("name"))
        note = announcement(tool, legacy=bridged)
        if bridged:  # the answer itself may be right for a client of its era: told, not changed
            self._noted[id_key(live.get("id"))] = note
        if tool in self._announced:
            return ()
        self._announced.add(tool)
        return (note,)

    def _with_notes(self, reply: Reply) -> Reply:
        """``reply`` with the note ``_unrecorded_call`` made in its errors (a client of
        the group's own era: nothing else to shape)."""
        if not reply.messages:
            return reply
        from cassette.core.eras.legacy_calls import with_note

        messages = []
        for message in reply.messages:
            note = self._note_for(message)
            messages.append(message if note is None else with_note(message, note))
        return attrs.evolve(reply, messages=tuple(messages))

    def _for_client(self, reply: Reply) -> Reply:
        """A modern recording's messages in the shape the live legacy client expects; an
        error for a tool call ``_unrecorded_call`` noted says what the recording cannot."""
        if not reply.messages:
            return reply
        messages = []
        miss = reply.miss
        for message in reply.messages:
            note = self._note_for(message)
            if is_input_required(message):
                from cassette.core.replay.misses import MissReport

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
                from cassette.core.eras.legacy_calls import with_note

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

    def _input_round(self, live: JSONObject, reply: Reply, playback: Playback) -> Reply:
        """A legacy client answered ``input_required``: the server requests it stands for
        instead, sent as a legacy server sends them; the client's answers make the
        recorded retry (``Waits.round_answered``)."""
        found = [
            i
            for i, m in enumerate(reply.messages)
            if is_input_required(m) and id_key(m.get("id")) == id_key(live.get("id"))
        ]
        asked = input_requests(reply.messages[found[0]]) if found else []
        if not asked or not all(playback.may_ask(r) for _, r in asked):
            return reply  # _for_client makes it the error that names input_required
        index = found[0]
        result = reply.messages[index]["result"]
        from cassette.core.eras.rounds import InputRound  # only a bridged input_required

        round_ = InputRound(live, result.get("requestState"))
        requests = []
        for key, request in asked:
            server_id = playback.next_server_id
            playback.next_server_id += 1
            round_.keys[id_key(server_id)] = key
            self._waits.rounds[id_key(server_id)] = round_
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
