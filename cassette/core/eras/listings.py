"""Which recording answers a listing: the session recorded for this client, else the
surface the recorder probed (``cassette.core.eras.surface``).

Theory of operation
-------------------
A listing (``tools/list``, ``prompts/list``, ``resources/list``,
``resources/templates/list``) is what a client asks on connect, and what a server may
answer by who asks: server-everything lists its roots, sampling and elicitation tools only
to a client that declares them. A cassette holds the user's session (and maybe variants
recorded for other clients, ``cassette.core.eras.variants``), and, since the recorder probes the
server beside the session, each listing as the server answered it under each capability
set and era it was probed in (``Surface``, prepared once per cassette).

What a server may list by is the client's ``listing_key``: which of roots, sampling and
elicitation it declares, and elicitation's modes (form, URL). The recorder probes once per
key (``cassette.core.eras.surface``), so two clients of one key (Gemini CLI and the Inspector,
which adds extensions; the TypeScript SDK, which leaves out ``roots.listChanged``, and the
Python SDK) are answered from the same probe, as live, with nothing to tell.

For each listing request of a session (``Listings.answer``), the candidates are the group
the era-and-variant authority chose for the session (``cassette.core.replay.negotiation``), when
it recorded that listing, and every probe that holds it; the best is:

1. the live client's own listing key (what the server may list by);
2. then the fewest capability differences from what the live client declared
   (``distance``: a capability of ``COMPARED`` declared on one side only counts 4, any
   other one 2, a sub-flag such as ``elicitation.url`` 1), so the same capabilities best;
3. then the same era (a legacy client of a modern recording gets the legacy probe's
   listing before the modern one, which the replay translates as for any modern answer);
4. then the session's own group before any probe, and probes in file order.

A probe also holds what the server asked it of its own accord (``roots/list``: the
probes' module says why). A legacy client's session that ends its input is sent those of
the probe of its own listing key (``Surface.at_end``), the requests its capabilities
allow and its session has not been sent, unless the session's own group was recorded by a
client of that key: live, the server asks such a client as its input ends.

A modern client is answered from modern recordings only (a legacy answer lacks what its
era adds). The session's group wins when it fits (the common case: the recording client
replayed to itself); a probe answers otherwise, which also answers a listing no session
recorded (a connect-time ``prompts/list``), as the live server would, with no miss. A
probe chosen with other capabilities than the client's is told once per session, as a
warning (one of its own listing key is not). A page after the first goes to the
recording that handed out its cursor.

Sans-IO: values in, values out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

from cassette.core.eras.bridge import client_era
from cassette.core.eras.variants import COMPARED, Fit, client_capabilities, compared
from cassette.core.wire.exchanges import Exchange, cut
from cassette.core.wire.jsonrpc import JSONObject
from cassette.core.wire.model import Era

__all__ = ["LISTING_METHODS", "Listings", "Surface", "distance", "listing_key"]

#: the requests a probe answers
LISTING_METHODS: Final = frozenset(
    {"tools/list", "prompts/list", "resources/list", "resources/templates/list"}
)

Page = tuple[str, str | None]  # a listing's method and the cursor it was asked with


class Requests(Protocol):
    """What a listing's choice reads of a group's recorded requests (the replay's
    ``CandidateIndex``): named by shape, so the eras room need not import the replay."""

    @property
    def cursors(self) -> frozenset[str]: ...

    @property
    def by_method(self) -> Mapping[tuple[str, str], object]: ...


class Group(Protocol):
    """What a session's group (``cassette.core.replay.prepared.Prepared``) tells the choice."""

    @property
    def era(self) -> Era: ...

    @property
    def fit(self) -> Fit | None: ...

    @property
    def requests(self) -> Requests: ...


def _cursor(message: Mapping[str, Any]) -> str | None:
    params = message.get("params")
    cursor = params.get("cursor") if isinstance(params, dict) else None
    return cursor if isinstance(cursor, str) else None


def distance(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> int:
    """How far apart two capability objects are (see the module docstring); 0: alike."""
    a, b = a or {}, b or {}
    total = 0
    for name in a.keys() | b.keys():
        if (name in a) != (name in b):
            total += 4 if name in COMPARED else 2
            continue
        subs_a = a[name] if isinstance(a[name], dict) else {}
        subs_b = b[name] if isinstance(b[name], dict) else {}
        total += len(subs_a.keys() ^ subs_b.keys())
    return total


def listing_key(capabilities: Mapping[str, Any] | None) -> frozenset[str]:
    """What a server may list by, of ``capabilities``: the names of ``COMPARED`` it
    declares, elicitation as its modes (``elicitation.form``, ``elicitation.url``; an
    empty object is form, as the protocol says). Not ``listChanged`` (a promise of
    notifications), nor extensions or experimental members: what the probes vary is
    what the protocol lets a server do with its client, which is what it lists by."""
    key = set(compared(capabilities or {}))
    elicitation = (capabilities or {}).get("elicitation")
    if elicitation is not None:
        key.discard("elicitation")
        modes = elicitation if isinstance(elicitation, dict) else {}
        key |= {f"elicitation.{m}" for m in ("form", "url") if m in modes}
        if not modes.keys() & {"form", "url"}:
            key.add("elicitation.form")
    return frozenset(key)


class Probed:
    """One probe's listings: its name, era, the capabilities it declared, and each page
    it holds by ``(method, cursor)``."""

    __slots__ = ("asks", "capabilities", "cursors", "era", "name", "pages")

    def __init__(self, name: str, era: Era, capabilities: Mapping[str, Any] | None) -> None:
        self.name = name
        self.era = era
        self.capabilities = capabilities
        self.pages: dict[Page, Exchange] = {}
        self.cursors: set[str] = set()  # every nextCursor it was given
        #: the server's own requests to this probe, in file order
        self.asks: tuple[JSONObject, ...] = ()

    def __repr__(self) -> str:
        return f"Probed({self.name!r}, {sorted(self.pages)!r})"


class Surface:
    """What the recorder's probes captured of a cassette, prepared once: each probe's
    listings (``probes``), and the server's answer to a legacy ``initialize``
    (``handshake``), which serves legacy clients of a modern recording."""

    __slots__ = ("handshake", "probes")

    def __init__(self, probes: Sequence[Probed], handshake: JSONObject | None) -> None:
        self.probes = tuple(probes)
        self.handshake = handshake

    @classmethod
    def of(cls, groups: Mapping[str, Sequence[Any]]) -> Surface | None:
        """The surface of a cassette's probe events, by probe name (``None``: none)."""
        probes: dict[str, Probed] = {}
        handshake: JSONObject | None = None
        for name, events in groups.items():
            era: Era = "modern" if name.split(":")[0] == "modern" else "legacy"
            asks, listed = _own_apart(events)
            for exchange in cut(listed)[1]:
                method = exchange.message.get("method")
                answer = _answer(exchange)
                if method == "initialize" and handshake is None:
                    result = answer.get("result") if answer is not None else None
                    handshake = result if isinstance(result, dict) else None
                if method not in LISTING_METHODS or answer is None:
                    continue
                probed = probes.get(name)
                if probed is None:
                    said = client_capabilities(exchange.message) if era == "modern" else None
                    probed = probes[name] = Probed(name, era, said)
                probed.pages[(str(method), _cursor(exchange.message))] = exchange
                _note_cursor(probed, answer)
            legacy = probes.get(name)
            if legacy is not None and era == "legacy":
                legacy.capabilities = _declared(listed)
                legacy.asks = tuple(asks)
        if not probes and handshake is None:
            return None
        return cls(list(probes.values()), handshake)

    def probed_for(self, declared: Mapping[str, Any]) -> bool:
        """Whether a probe listed for what ``declared`` says a client can do (its
        ``listing_key``)."""
        key = listing_key(declared)
        return any(listing_key(p.capabilities) == key for p in self.probes)

    def at_end(self, declared: Mapping[str, Any] | None, group: Group) -> tuple[JSONObject, ...]:
        """What the server asked the legacy probe of ``declared``'s listing key of its
        own accord, for a session whose client's input ended (see the module docstring);
        nothing when the session's ``group`` was recorded by a client of that key (what
        its server asked is in it) or no probe of that key was asked anything."""
        if declared is None:
            return ()
        key = listing_key(declared)
        fit = _group_declared(group)
        if fit is not None and listing_key(fit) == key:
            return ()
        for probed in self.probes:
            if probed.era == "legacy" and listing_key(probed.capabilities) == key:
                return probed.asks
        return ()

    def session(self) -> Listings:
        """A session's use of this surface."""
        return Listings(self)


def _own_apart(events: Sequence[Any]) -> tuple[list[JSONObject], list[Any]]:
    """A probe's events cut in two, in one pass: the requests the server sent it of its
    own accord (kept apart: never played in a listing's answer), and the rest."""
    asks: list[JSONObject] = []
    rest: list[Any] = []
    for event in events:
        message = getattr(event, "message", None)
        if (
            getattr(event, "dir", None) == "s2c"
            and isinstance(message, dict)
            and "method" in message
            and "id" in message
        ):
            asks.append(message)
        else:
            rest.append(event)
    return asks, rest


def _answer(exchange: Exchange) -> JSONObject | None:
    for item in exchange.items:
        if item.role == "response" and isinstance(item.message, dict):
            return item.message
    return None


def _note_cursor(probed: Probed, answer: JSONObject) -> None:
    result = answer.get("result")
    cursor = result.get("nextCursor") if isinstance(result, dict) else None
    if isinstance(cursor, str):
        probed.cursors.add(cursor)


def _declared(events: Sequence[Any]) -> Mapping[str, Any] | None:
    """What a legacy probe's ``initialize`` declared."""
    for event in events:
        message = getattr(event, "message", None)
        if isinstance(message, dict) and message.get("method") == "initialize":
            return client_capabilities(message)
    return None


class Listings:
    """One session's use of a cassette's surface (see the module docstring)."""

    __slots__ = ("_surface", "_told")

    def __init__(self, surface: Surface) -> None:
        self._surface = surface
        self._told = False  # whether this session was warned of other capabilities

    def answer(
        self, message: JSONObject, declared: Mapping[str, Any] | None, group: Group
    ) -> tuple[Exchange, tuple[str, ...]] | None:
        """The probe's exchange that answers the listing ``message`` better than the
        session's ``group`` does, and the warning to tell with it; ``None``: the group
        answers it, as any request (or it is no listing a probe holds). ``declared``:
        what the live client last declared it can do. The era is the request's own (a
        modern one carries the envelope): a dual-era client that fell back to
        ``initialize`` lists in the legacy era, whatever its first probe said."""
        method = message.get("method")
        if method not in LISTING_METHODS:
            return None
        page = (str(method), _cursor(message))
        era: Era = "modern" if client_era(message) == "modern" else "legacy"
        if page[1] is not None and page[1] in group.requests.cursors:
            return None  # a page of the group's own listing
        best: Probed | None = None
        best_score: tuple[int, int, int] | None = None  # the group's, when it holds the listing
        if _holds(group, page):
            best_score = _score(group.era, _group_declared(group), era, declared)
        for probed in self._surface.probes:
            if page not in probed.pages or (era == "modern" and probed.era != "modern"):
                continue
            if page[1] is not None and page[1] not in probed.cursors:
                continue
            if probed.era == "modern" and era == "legacy" and group.era == "legacy":
                continue  # nothing would translate its answer for this client
            score = _score(probed.era, probed.capabilities, era, declared)
            if best_score is None or score > best_score:
                best, best_score = probed, score
        if best is None:
            return None
        return best.pages[page], self._warning(best, declared)

    def _warning(self, probed: Probed, declared: Mapping[str, Any] | None) -> tuple[str, ...]:
        if self._told or listing_key(probed.capabilities) == listing_key(declared):
            return ()
        self._told = True
        live = ", ".join(sorted(declared or {})) or "none"
        held = ", ".join(sorted(probed.capabilities or {})) or "none"
        return (
            f"the client declares capabilities {live}; no recording lists for exactly "
            f"those, so listings are answered from the recorder's probe {probed.name} "
            f"(declaring {held}): they may differ from the live server's (record this "
            "client's session with cassette variant TAPE --as NAME)",
        )


def _score(
    era: Era, capabilities: Mapping[str, Any] | None, live_era: Era, live: Mapping[str, Any] | None
) -> tuple[int, int, int]:
    """Higher fits better: the client's own listing key, then the fewest capability
    differences (a recording that does not say what its client declared, the most),
    then the same era."""
    if capabilities is None:
        return (0, -_UNKNOWN, 1 if era == live_era else 0)
    same = 1 if listing_key(capabilities) == listing_key(live) else 0
    return (same, -distance(capabilities, live), 1 if era == live_era else 0)


#: the distance of a recording whose client's capabilities are not known: past any other
_UNKNOWN: Final = 1000


def _group_declared(group: Group) -> Mapping[str, Any] | None:
    fit = group.fit
    return fit.declared if fit is not None else None


def _holds(group: Group, page: Page) -> bool:
    """Whether the session's group recorded this listing (any page of it)."""
    return any(key[0] == page[0] for key in group.requests.by_method)
