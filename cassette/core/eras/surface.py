"""The surface a recording captures beside its session: what any client may list.

Theory of operation
-------------------
A recorded session holds what one client happened to ask. Agents list prompts, resources
and capability-dependent tools on connect that the recording client never asked for (Gemini
CLI drops a server whose listing fails; server-everything lists its roots, sampling and
elicitation tools only to a client that declares them). So the recorder asks the server
itself, beside the session, what any client may ask without running the user's code: the
handshake in each era the server accepts, and every listing its handshake advertises
(``tools/list``, ``prompts/list``, ``resources/list``, ``resources/templates/list``, all
pages up to ``MAX_PAGES``), under each capability set the server may react to. Never a
``tools/call``, ``resources/read``, ``prompts/get`` or anything else with effects.

This module is the sans-IO half. ``plan`` says which probes a recording gets, each one
connection to a fresh server start (``cassette.runtime.probe`` runs them side by side):

* a legacy recording: one legacy session per capability set (``capability_sets``: none,
  one per listing key the shipped profiles declare, the recording client's own when no
  profile has its key), named ``legacy:<set>``. The first one (``legacy:bare``) opens
  with ``server/discover``, as a dual-era client does: a refusal is dropped and the
  session goes on with ``initialize``; a result shows the server speaks 2026-07-28 too,
  kept as the probe ``modern``, and that connection ends there (``follow`` starts
  ``legacy:bare`` afresh on another);
* a 2026-07-28 recording: one start for every capability set, since a modern server takes
  the client's capabilities in each request's envelope (``server/discover`` named
  ``modern``, each set's listings ``modern:<set>``), and the legacy handshake
  (``legacy:bare``: ``initialize`` and its listings), which serves legacy clients.

``ProbeSession`` is one probe's conversation: it says what to send, hears what the server
sends, answers the server's own requests as the set's profile says (``answers``; else the
``-32601`` a client without a handler gives), follows ``nextCursor`` one request at a
time, and keeps the request and answer of the handshake and of each listing page in that
order (``kept``): never the server's notifications, whose timing varies from one run to the
next, so an unchanged server gives the same lines every time and a re-recording stays
byte-identical. A handshake the server refuses keeps nothing.

One request of the server's own is kept: ``roots/list``, which a server asks a client that
declares roots of its own accord (server-everything on a timer after the handshake; a
filesystem server to learn where it may work), not in the course of a tool call. A live
client of a short session meets it as its input ends: the server still sends it before it
exits. So a legacy probe whose set declares roots ``listens`` once its listings are done:
the runtime closes the server's input and reads on until the server asks it, exits, or
``cassette.runtime.probe.PROBE_TAIL`` passes. The request is kept after the listings,
wherever it came (a slow machine may have it arrive among them), so the lines do not
depend on timing; a replay sends it to a client that fits the probe when that client's
input ends (``cassette.core.eras.listings.Surface.at_end``). Sampling and elicitation
are asked within tool calls, which a probe never makes: a probe does not wait for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from cassette._version import __version__
from cassette.core.eras.listings import listing_key
from cassette.core.eras.profiles import FITTED
from cassette.core.eras.variants import probe_of
from cassette.core.wire.jsonrpc import JSONObject, classify_parts, dumps_bytes
from cassette.core.wire.limits import max_message_bytes
from cassette.core.wire.mcp import LATEST_LEGACY, META_PREFIX, MODERN_VERSION
from cassette.core.wire.model import Direction, Era

__all__ = [
    "LISTINGS",
    "MAX_PAGES",
    "CapabilitySet",
    "Probe",
    "ProbeSession",
    "capability_sets",
    "envelope",
    "plan",
    "probe_of",
    "probes_line",
    "surface_line",
]

#: the listings a probe asks, in order, and the server capability that advertises each
LISTINGS: Final = (
    ("tools/list", "tools"),
    ("prompts/list", "prompts"),
    ("resources/list", "resources"),
    ("resources/templates/list", "resources"),
)
#: the most pages a probe reads of one listing (a server that never stops paging)
MAX_PAGES: Final = 20
#: who a probe says it is
CLIENT_INFO: Final = {"name": "cassette-probe", "version": __version__}
#: what a client without a handler answers a server request with
NO_HANDLER: Final = {"error": {"code": -32601, "message": "Method not found"}}
#: the server's own requests a probe keeps, and the capability a client declares to be
#: asked each (see the module docstring)
OWN_REQUESTS: Final = {"roots/list": "roots"}


class CapabilitySet:
    """One set of client capabilities a probe declares: its name (a profile's, ``bare``
    or ``recorded``), the capabilities, how that client answers the server's requests,
    and the legacy revision it asks for."""

    __slots__ = ("answers", "capabilities", "name", "version")

    def __init__(
        self,
        name: str,
        capabilities: Mapping[str, Any],
        answers: Mapping[str, Any] | None = None,
        version: str | None = None,
    ) -> None:
        self.name = name
        self.capabilities = dict(capabilities)
        self.answers = dict(answers or {})
        self.version = version or LATEST_LEGACY

    def __repr__(self) -> str:
        return f"CapabilitySet({self.name!r}, {self.capabilities!r})"


def capability_sets(
    recorded: Mapping[str, Any] | None, recorded_version: str | None = None
) -> tuple[CapabilitySet, ...]:
    """The capability sets a recording is probed under: one per listing key the shipped
    profiles declare (``cassette.core.eras.listings.listing_key``: which of roots, sampling,
    form and URL elicitation; ``cassette.core.eras.profiles.FITTED``, ``bare`` first), then
    the recording client's own when no profile has its key (named ``recorded``).

    One per key, not one per capabilities object: each is a server start for a legacy
    server, and what a server may list by is what the key holds (a replay answers a
    client from the probe of its key, ``cassette.core.eras.listings``). Of the profiles of
    one key, the one declaring the fewest capabilities is probed (the first on a tie):
    Gemini CLI's roots rather than the Inspector's roots and extensions."""
    wanted = [
        CapabilitySet(str(c["name"]), c["capabilities"], c.get("answers"), c.get("legacy_version"))
        for c in FITTED
    ]
    chosen: dict[frozenset[str], CapabilitySet] = {}
    for found in wanted:
        key = listing_key(found.capabilities)
        held = chosen.get(key)
        if held is None or len(found.capabilities) < len(held.capabilities):
            chosen[key] = found  # a dict keeps the first key's place: bare stays first
    if recorded is not None and listing_key(recorded) not in chosen:
        chosen[listing_key(recorded)] = CapabilitySet("recorded", recorded, None, recorded_version)
    return tuple(chosen.values())


class Probe:
    """One probe: a connection to a fresh start of the server, in ``era``, declaring each
    of ``sets`` (one for a legacy session; every one, request by request, for a modern
    one); ``discover``: it opens with ``server/discover``."""

    __slots__ = ("discover", "era", "name", "sets")

    def __init__(
        self, name: str, era: Era, sets: Sequence[CapabilitySet], *, discover: bool
    ) -> None:
        self.name = name
        self.era = era
        self.sets = tuple(sets)
        self.discover = discover

    def __repr__(self) -> str:
        return f"Probe({self.name!r})"

    @property
    def own_requests(self) -> frozenset[str]:
        """The server's own requests this probe keeps (``OWN_REQUESTS``): those whose
        capability its set declares, on a legacy probe; none on a modern one."""
        if self.era != "legacy":
            return frozenset()
        declared = self.sets[0].capabilities
        return frozenset(m for m, needs in OWN_REQUESTS.items() if needs in declared)

    @property
    def listens(self) -> bool:
        """Whether this probe may read on for a request of the server's own after its
        listings."""
        return bool(self.own_requests)


def plan(
    era: Era, recorded: Mapping[str, Any] | None, recorded_version: str | None = None
) -> tuple[Probe, ...]:
    """The probes a recording of ``era`` gets, in the order their lines are written
    (see the module docstring); ``recorded``: the capabilities the recording client
    declared, ``recorded_version`` the legacy revision its session spoke."""
    sets = capability_sets(recorded, recorded_version if era == "legacy" else None)
    bare = sets[0]
    if era == "modern":
        return (
            Probe("modern", "modern", sets, discover=True),
            Probe(f"legacy:{bare.name}", "legacy", (bare,), discover=False),
        )
    return tuple(
        Probe(f"legacy:{s.name}", "legacy", (s,), discover=index == 0)
        for index, s in enumerate(sets)
    )


def envelope(params: Mapping[str, Any] | None, capabilities: Mapping[str, Any]) -> JSONObject:
    """A 2026-07-28 request's params: what it asks, plus who asks (the probe, declaring
    ``capabilities``) and in which revision."""
    meta = {
        META_PREFIX + "protocolVersion": MODERN_VERSION,
        META_PREFIX + "clientCapabilities": dict(capabilities),
        META_PREFIX + "clientInfo": dict(CLIENT_INFO),
    }
    return {**dict(params or {}), "_meta": meta}


def _frame(message: JSONObject) -> bytes:
    """A message as a probe sends it: compact JSON, one line (a stdio frame), written as
    every frame is (``cassette.core.wire.jsonrpc``)."""
    return dumps_bytes(message) + b"\n"


#: one kept line: its direction, its bytes as carried, and the probe it is named by
Kept = tuple[Direction, bytes, str]


class ProbeSession:
    """One probe's conversation, sans-IO (see the module docstring): ``opening`` is what
    to send first, ``heard`` takes each frame the server sends and gives what to send
    back; ``done`` once there is nothing more to ask, ``kept`` what to record."""

    def __init__(self, probe: Probe) -> None:
        self.probe = probe
        self.done = False
        #: a probe to run next on a fresh connection (``legacy:bare``, after a
        #: ``server/discover`` that showed a modern server on this one)
        self.follow: Probe | None = None
        #: the handshake's and listings' lines, and the server's own requests (kept last)
        self._lines: list[Kept] = []
        self._asked: dict[str, Kept] = {}
        #: listing pages answered (with a result or an error)
        self.listings = 0
        self._ids = 0
        #: the request in flight: its id, its frame, its method and the set it declares
        self._in_flight: tuple[str, bytes, str, CapabilitySet] | None = None
        self._queue: list[tuple[str, CapabilitySet]] = []
        self._pages = 0

    @property
    def kept(self) -> list[Kept]:
        """What to record: the handshake's and listings' lines in the order asked, then
        each request of the server's own it heard (``OWN_REQUESTS``), by method."""
        if not self._lines:  # a refused handshake keeps nothing
            return []
        return self._lines + [self._asked[method] for method in sorted(self._asked)]

    @property
    def listens(self) -> bool:
        """Whether, its listings done, the probe should read on for a request of the
        server's own (a legacy probe whose set declares what one needs) it has not had."""
        return bool(self._lines) and bool(self.probe.own_requests - self._asked.keys())

    # -- what to send ----------------------------------------------------------------

    def opening(self) -> list[bytes]:
        """The first request: ``server/discover``, or a legacy ``initialize``."""
        first = self.probe.sets[0]
        if self.probe.discover:
            return [self._ask("server/discover", envelope(None, first.capabilities), first)]
        return [self._initialize(first)]

    def _initialize(self, chosen: CapabilitySet) -> bytes:
        params = {
            "protocolVersion": chosen.version,
            "capabilities": chosen.capabilities,
            "clientInfo": dict(CLIENT_INFO),
        }
        return self._ask("initialize", params, chosen)

    def _ask(self, method: str, params: Mapping[str, Any], chosen: CapabilitySet) -> bytes:
        self._ids += 1
        request_id = f"cassette-probe-{self._ids}"
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)}
        frame = _frame(message)
        self._in_flight = (request_id, frame, method, chosen)
        return frame

    # -- what the server says --------------------------------------------------------

    def heard(self, data: bytes) -> list[bytes]:
        """The server sent ``data``: what to send in return (maybe nothing)."""
        if len(data) > max_message_bytes():
            return []  # over the size limit: read no further, as a replay refuses it
        # the one classifier, with its depth limit; it never raises: a line that is no
        # message (a server's log on stdout) decodes to no object
        _, message, _, _ = classify_parts(data)
        if not isinstance(message, dict):
            return []
        method = message.get("method")
        if isinstance(method, str) and "id" in message:
            self._own_request(message, data)
            return [] if self.done else self._server_request(message)
        if self.done or isinstance(method, str):
            return []
        asked = self._in_flight
        if asked is None or not _answers(message, asked[0]):
            return []
        self._in_flight = None
        return self._answered(message, data, asked[1], asked[2], asked[3])

    def _server_request(self, message: JSONObject) -> list[bytes]:
        """A request of the server's (``roots/list``...), answered as the set's profile
        says: what that client answers, or what one without a handler does."""
        chosen = self._in_flight[3] if self._in_flight is not None else self.probe.sets[0]
        answer = chosen.answers.get(str(message["method"]), NO_HANDLER)
        return [_frame({"jsonrpc": "2.0", "id": message["id"], **answer})]

    def _own_request(self, message: JSONObject, data: bytes) -> None:
        """Keep the first of each of the server's own requests the probe keeps
        (``Probe.own_requests``), named by the probe."""
        method = str(message["method"])
        if method in self.probe.own_requests:
            self._asked.setdefault(method, ("s2c", data, self.probe.name))

    def _answered(
        self, message: JSONObject, data: bytes, sent: bytes, method: str, chosen: CapabilitySet
    ) -> list[bytes]:
        result = message.get("result")
        if method == "server/discover":
            return self._discovered(result, data, sent, chosen)
        if method == "initialize":
            if not isinstance(result, dict):
                self.done = True  # a refused handshake proves nothing: keep nothing
                return []
            self._keep(sent, data, self.probe.name)
            notified = _frame({"jsonrpc": "2.0", "method": "notifications/initialized"})
            self._plan_listings(result, (chosen,))
            return [notified, *self._next()]
        self._keep(sent, data, self._label(chosen))
        self.listings += 1
        cursor = result.get("nextCursor") if isinstance(result, dict) else None
        self._pages += 1
        if isinstance(cursor, str) and cursor and self._pages < MAX_PAGES:
            return [self._ask(method, self._params({"cursor": cursor}, chosen), chosen)]
        return self._next()

    def _discovered(
        self, result: object, data: bytes, sent: bytes, chosen: CapabilitySet
    ) -> list[bytes]:
        """A modern probe goes on with its listings; a legacy one, refused (a legacy-only
        server), with ``initialize``; answered, it ends here and ``follow`` asks again."""
        listed = result.get("supportedVersions") if isinstance(result, dict) else None
        served = isinstance(listed, list) and MODERN_VERSION in listed
        if self.probe.era == "legacy":
            if not served:
                return [self._initialize(chosen)]
            self._keep(sent, data, "modern")
            self.follow = Probe(self.probe.name, "legacy", self.probe.sets, discover=False)
            self.done = True
            return []
        if not isinstance(result, dict):
            self.done = True
            return []
        self._keep(sent, data, "modern")
        self._plan_listings(result, self.probe.sets)
        return self._next()

    def _plan_listings(self, handshake: JSONObject, sets: Sequence[CapabilitySet]) -> None:
        """Every listing the server's handshake advertises, for each set in turn."""
        offered = handshake.get("capabilities")
        offered = offered if isinstance(offered, dict) else {}
        self._queue = [(m, s) for s in sets for m, cap in LISTINGS if cap in offered]

    def _next(self) -> list[bytes]:
        """The next listing's first page, or the end."""
        if not self._queue:
            self.done = True
            return []
        method, chosen = self._queue.pop(0)
        self._pages = 0
        return [self._ask(method, self._params({}, chosen), chosen)]

    def _params(self, params: Mapping[str, Any], chosen: CapabilitySet) -> JSONObject:
        if self.probe.era == "modern":
            return envelope(params, chosen.capabilities)
        return dict(params)

    def _label(self, chosen: CapabilitySet) -> str:
        return f"modern:{chosen.name}" if self.probe.era == "modern" else self.probe.name

    def _keep(self, sent: bytes, answer: bytes, label: str) -> None:
        self._lines += [("c2s", sent, label), ("s2c", answer, label)]


def _answers(message: JSONObject, request_id: str) -> bool:
    """Whether ``message`` answers the request in flight: its id, or an error with id
    ``null`` (an HTTP server's refusal of a request it took without a session), since a
    probe has one request in flight at a time."""
    said = message.get("id")
    return said == request_id or (said is None and "error" in message)


def surface_line(sessions: Sequence[ProbeSession], seconds: float) -> str:
    """The banner's line: what was probed and how long it took."""
    labels = {label for session in sessions for _, _, label in session.kept}
    if not labels:
        return f"probed the surface: no probe was answered ({seconds:.1f} s)"
    eras = {label.split(":")[0] for label in labels}
    sets = {label.split(":", 1)[1] for label in labels if ":" in label}
    listed = sum(session.listings for session in sessions)
    return (
        f"probed the surface: {_count(len(eras), 'era')}, "
        f"{_count(len(sets), 'capability set')}, {_count(listed, 'listing')} "
        f"in {seconds:.1f} s"
    )


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def probes_line(probes: Mapping[str, Sequence[Any]]) -> str:
    """One line saying what a cassette's probes hold (``show``, the replay's banner):
    each probe by name, and the listings they answered."""
    listed: dict[str, None] = {}
    for events in probes.values():
        for event in events:
            message = getattr(event, "message", None)
            method = message.get("method") if isinstance(message, dict) else None
            if getattr(event, "dir", None) == "c2s" and method in _LISTED:
                listed[str(method)] = None
    names = ", ".join(probes)
    what = ", ".join(m for m, _ in LISTINGS if m in listed) or "no listing"
    return (
        f"probed surface (the recorder's own sessions, not the client's): {names}; "
        f"{what}; replays answer listings from it"
    )


_LISTED: Final = frozenset(m for m, _ in LISTINGS)
