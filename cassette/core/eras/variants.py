"""Variant sessions: one cassette answering clients that a live server treats differently.

A live server's answers can depend on who asks. server-everything lists its sampling and
elicitation tools only to a client that declared those capabilities, and its roots tool
reports the client's own roots; the Python SDK's server shapes an elicitation schema
differently for a legacy session than for a 2026-07-28 one. A single recording holds
what one client was told, so no rule can derive what another client would have been told.

``cassette variant TAPE --as NAME`` therefore records it: cassette itself re-sends the
recorded session's requests to the live server as another client would (another era,
other capabilities, its own answers) and appends that session to the cassette, each of
its message and raw events carrying ``meta.variant = NAME`` (``cassette.client.variants``).
This module is the sans-IO half: it splits a cassette's events into the main recording
and its variants, says what each one's handshake shows (era, client capabilities), and
picks the one that best fits a live client's handshake. A replay adopts the chosen group
for the session.

The choice, made on each handshake request (``initialize`` or ``server/discover``) until
a session is under way, prefers, in order: the fewest declared capabilities (by name:
``roots``, ``sampling``, ``elicitation``) on one side only, the same set best (the best
fit, not only an exact one), then the same era; ties go to the main recording, then to
variants in file order. Capabilities come first because nothing can make up for them:
a tool the server listed only to another client stays listed, while a session of the
other era is still served by the cross-era rules of ``cassette.core.eras.bridge``, as before
variants existed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from cassette.core.eras.bridge import (
    client_era,
    initialize_from_discover,
    recorded_handshake,
    served_clients,
)
from cassette.core.wire.mcp import META_PREFIX
from cassette.core.wire.meta import PROBE, VARIANT
from cassette.core.wire.model import Era

__all__ = [
    "COMPARED",
    "HANDSHAKES",
    "PROBE_VARIANT",
    "Fit",
    "choose",
    "client_capabilities",
    "clients_line",
    "compared",
    "declared",
    "group_era",
    "has_legacy_variant",
    "opening",
    "opens",
    "pick",
    "probe_of",
    "split",
    "split_all",
    "variant_of",
]

#: the variant a recorder's handshake-only probe is kept as (``cassette.runtime.probe``):
#: the recorded server's answer to a legacy ``initialize``, for a 2026-07-28 session. It
#: is no group of its own: a replay answers a legacy client's ``initialize`` from it and
#: the rest from the main recording (``cassette.core.replay.negotiation``)
PROBE_VARIANT: Final = "legacy-probe"
#: the requests that open a session, and so choose the group that answers it
HANDSHAKES: Final = frozenset({"initialize", "server/discover"})


def variant_of(event: Any) -> str | None:
    """The variant an event belongs to (``None``: the main recording). Only message and
    raw events carry ``meta``; stderr, exit and HTTP status events are the main one's."""
    meta = getattr(event, "meta", None)
    name = meta.get(VARIANT) if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else None


def probe_of(event: Any) -> str | None:
    """The recorder's probe an event belongs to (``None``: none)."""
    meta = getattr(event, "meta", None)
    name = meta.get(PROBE) if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else None


def split(events: Sequence[Any]) -> tuple[list[Any], dict[str, list[Any]]]:
    """The main recording's events, and each variant's, in file order; the recorder's
    probes are neither (``split_all``). A cassette without variants or probes comes back
    whole, as the same list (no copy on the common path)."""
    main, variants, _ = split_all(events)
    return main, variants


def split_all(
    events: Sequence[Any],
) -> tuple[list[Any], dict[str, list[Any]], dict[str, list[Any]]]:
    """``split``, and the recorder's probes' events by probe name (``meta.probe``)."""
    for event in events:  # the common case, no variant at all, in one tight loop
        meta = getattr(event, "meta", None)
        if meta and (VARIANT in meta or PROBE in meta):
            break
    else:
        return list(events) if not isinstance(events, list) else events, {}, {}
    main: list[Any] = []
    variants: dict[str, list[Any]] = {}
    probes: dict[str, list[Any]] = {}
    for event in events:
        probe = probe_of(event)
        if probe is not None:
            probes.setdefault(probe, []).append(event)
            continue
        name = variant_of(event)
        (main if name is None else variants.setdefault(name, [])).append(event)
    return main, variants, probes


def client_capabilities(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """What a client message declares the client can do: in ``initialize`` (legacy), or
    in a request's envelope (2026-07-28); ``None`` when this message does not say."""
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    if message.get("method") == "initialize":
        capabilities = params.get("capabilities")
        return capabilities if isinstance(capabilities, dict) else {}
    meta = params.get("_meta")
    found = meta.get(META_PREFIX + "clientCapabilities") if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else None


#: the client capabilities a server's answers are known to depend on: it asks only for
#: what the client declared, and may offer the tools that ask only to such a client
COMPARED: Final = frozenset({"roots", "sampling", "elicitation"})


def compared(capabilities: Mapping[str, Any]) -> frozenset[str]:
    """The names of ``COMPARED`` among ``capabilities`` (sub-flags such as
    ``roots.listChanged`` change no answer a recording holds)."""
    return frozenset(capabilities) & COMPARED


def declared(message: Mapping[str, Any]) -> frozenset[str]:
    """The capabilities of ``COMPARED`` a handshake request declares, by name."""
    return compared(client_capabilities(message) or {})


def opening(era: Era, messages: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The client message that says who the client of a session of ``era`` is: its first
    handshake request of that era (a dual-era client's failed probe is not its session),
    or, in a 2026-07-28 session without one, its first request that carries the
    envelope's capabilities (a client that adopts that revision without a probe says
    what it can do in every request); ``None`` when no message says."""
    enveloped = None
    for message in messages:
        if message.get("method") in HANDSHAKES and client_era(dict(message)) == era:
            return message
        if enveloped is None and client_capabilities(message) is not None:
            enveloped = message
    return enveloped if era == "modern" else None


class Fit:
    """What a group of the cassette shows about the client it was recorded with. A plain
    class, not attrs: every replay imports it, and building an attrs class at import
    costs start-up instructions (docs/performance.md)."""

    __slots__ = ("capabilities", "declared", "era")

    def __init__(
        self,
        era: Era,
        capabilities: frozenset[str] | None,
        said: Mapping[str, Any] | None = None,
    ) -> None:
        self.era = era
        self.capabilities = capabilities  # None: the recording does not say
        #: the whole capabilities object its client declared (``None``: not known)
        self.declared = said

    def __repr__(self) -> str:
        return f"Fit({self.era!r}, {self.capabilities!r})"

    @classmethod
    def of(cls, era: Era, requests: Iterable[Mapping[str, Any]]) -> Fit:
        """``era`` and the capabilities its client's ``opening`` declares."""
        said = opening(era, requests)
        if said is None:
            return cls(era, None)
        whole = client_capabilities(said) or {}
        return cls(era, compared(whole), whole)

    def score(self, era: Era | None, capabilities: frozenset[str]) -> int:
        """Higher fits better: the fewest capabilities declared on one side only (the
        same set best, and a group whose recording does not say worst), then the same
        era. A client declaring roots and elicitation is answered from the session of a
        client declaring roots, elicitation and sampling rather than from a bare one."""
        if self.capabilities is None:
            differing = len(COMPARED) + 1
        else:
            differing = len(capabilities ^ self.capabilities)
        return -2 * differing + (1 if era == self.era else 0)


def choose(fits: Sequence[Fit], handshake: Mapping[str, Any]) -> int:
    """The index in ``fits`` (0: the main recording) of the group that answers a session
    opened by ``handshake``; see the module docstring for the order."""
    era, capabilities = client_era(dict(handshake)), declared(handshake)
    best, best_score = 0, -(2 * len(COMPARED) + 3)  # below any score
    for index, fit in enumerate(fits):
        score = fit.score(era, capabilities)
        if score > best_score:
            best, best_score = index, score
    return best


def opens(era: Era, recorded: Mapping[str, Any] | None, handshake: Mapping[str, Any]) -> bool:
    """Whether a session of ``era`` whose recorded handshake result is ``recorded`` can
    answer ``handshake`` as its server would have: a probe of ``server/discover`` from a
    recorded discovery, or as a legacy server refuses it; an ``initialize`` from a
    recorded one, or from a discovery listing a legacy revision."""
    if handshake.get("method") == "server/discover":
        return era == "legacy" or recorded is not None
    if era == "legacy":
        return recorded is not None
    return initialize_from_discover(dict(recorded or {}), None) is not None


#: a session as ``pick`` weighs it: its era, its recorded handshake result, its client
Group = tuple[Era, Mapping[str, Any] | None, "Fit | None"]


def pick(groups: Sequence[Group], message: Mapping[str, Any], *, probed: bool) -> tuple[int, bool]:
    """The index in ``groups`` (0: the main recording) of the session that answers a
    client whose ``message`` says who it is, and whether that session can open it. A
    handshake goes to the sessions that can open it (``opens``; the main recording opens
    an ``initialize`` when the recorder's legacy probe was answered, ``probed``), the best
    fitting of them (``choose``); when none can, the best fitting of all, which refuses
    it. Any other message (a 2026-07-28 request's envelope) goes to the best fitting."""
    method = message.get("method")
    indexes = list(range(len(groups)))
    opened = True
    if method in HANDSHAKES:
        can = [
            i
            for i in indexes
            if opens(groups[i][0], groups[i][1], message)
            or (probed and i == 0 and method == "initialize")
        ]
        indexes, opened = can or indexes, bool(can)
    fits = [groups[i][2] or Fit(groups[i][0], None) for i in indexes]
    return indexes[choose(fits, message)], opened


def group_era(events: Iterable[Any]) -> Era:
    """The era a group's events show: that of its first handshake request the server
    answered with a result (legacy when none was)."""
    from cassette.core.wire.pairing import exchanges  # off the path of a replay without variants

    for pair in exchanges(list(events))[0]:
        answer = pair.response.message if pair.response is not None else {}
        if pair.request.dir == "c2s" and pair.method in HANDSHAKES and "result" in answer:
            return "legacy" if pair.method == "initialize" else "modern"
    return "legacy"


def has_legacy_variant(events: Sequence[Any]) -> bool:
    """Whether a variant session shows what the server tells a legacy client."""
    return any(group_era(group) == "legacy" for group in split(events)[1].values())


def clients_line(era: Era, events: Sequence[Any]) -> str:
    """Which clients a cassette serves, for the banner and ``show``: ``served_clients``,
    told whether the recorder's legacy probe was answered (``cassette.core.eras.fits`` then
    says it per session)."""
    probed = PROBE_VARIANT in split(events)[1]
    return served_clients(era, recorded_handshake(events), probed=probed)
