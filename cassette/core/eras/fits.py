"""Which known clients each session of a cassette serves, and how: one verdict per client
for the replay's first line (``cassette.core.eras.first_screen``), and one line per session for
``show`` and ``replay -v``.

Theory of operation
-------------------
A cassette holds its main recording, maybe variant sessions recorded for other clients
(``cassette.core.eras.variants``), and maybe the recorder's probes (``cassette.core.eras.surface``):
what the server listed under each known client's capabilities. For each known client
(``cassette.core.eras.profiles.FITTED``) the session that answers it is chosen by the rule a
replay uses (``cassette.core.eras.variants.pick``), on the handshake that client would send;
then how it is answered is judged by the rule the replay's own capability warning follows
(``cassette.core.replay.negotiation``), so the banner warns of exactly what a replay would:

* ``fits``: the session's client declared the same capabilities;
* ``unused``: they differ, and the recorded server asked that session's client for other
  capabilities but none of these: it does not use them;
* ``probed``: they differ, the server asked for none, and a probe listed for exactly the
  client's capabilities: its listings are the live server's (``cassette.core.eras.listings``);
* ``reacted``: they differ, and the server asked that session's client for one of them;
* ``varies``: they differ, and a variant recorded for other capabilities shows that the
  server answers by them;
* ``unknown``: they differ, and nothing in the cassette shows whether the server answers
  by them (server-everything lists tools by them and leaves no trace in one session);
* ``untold``: the session does not say what its client declared;
* ``refused``: no session can open the client's handshake (a legacy-only client of a
  2026-07-28 recording without a legacy probe or variant).

The last five are caveats. Cheap by design, the banner judges on every replay start: a
session's facts come from its first handshake, the capabilities its server asked for
from one pass over its server's messages, and nothing is prepared or matched.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from cassette.core.eras.bridge import (
    capabilities_asked,
    granted_version,
    legacy_versions,
    recorded_handshake,
    served_clients,
)
from cassette.core.eras.profiles import FITTED
from cassette.core.eras.variants import PROBE_VARIANT, Fit, compared, pick, split_all
from cassette.core.wire.mcp import LATEST_LEGACY, LEGACY_VERSIONS, META_PREFIX, MODERN_VERSION
from cassette.core.wire.model import Era

if TYPE_CHECKING:
    from cassette.core.eras.listings import Surface

__all__ = ["CAVEATS", "Survey", "Verdict", "session_lines", "sessions", "survey"]

#: the verdicts that are worth a warning on the replay's first line
CAVEATS: Final = frozenset({"reacted", "varies", "unknown", "untold", "refused"})


class _Session:
    """One session's facts: its name, era, recorded handshake result and client fit, and
    (on first use) the capabilities its server asked its client for."""

    __slots__ = ("_asked", "era", "events", "fit", "handshake", "name")

    def __init__(self, name: str, era: Era, events: Sequence[Any]) -> None:
        self.name = name
        self.era = era
        self.events = events
        self.handshake = recorded_handshake(events)
        said = (e.message for e in events if getattr(e, "dir", None) == "c2s")
        self.fit = Fit.of(era, (m for m in said if isinstance(m, dict)))
        self._asked: frozenset[str] | None = None

    @property
    def asked(self) -> frozenset[str]:
        """What the recorded server asked this session's client for (``ASKS``)."""
        if self._asked is None:
            found: set[str] = set()
            for event in self.events:
                message = getattr(event, "message", None)
                if getattr(event, "dir", None) == "s2c" and isinstance(message, dict):
                    request = "method" in message and "id" in message
                    if request or "method" not in message:
                        found |= capabilities_asked(message, request=request)
            self._asked = frozenset(found)
        return self._asked


class Verdict:
    """How a replay answers one known client: ``client`` (its profile), the index of the
    session that answers it (0: the main recording), ``how`` (the module docstring) and
    the capabilities it declares that the session's client did not (``plus``) and the
    other way round (``minus``). A plain class: the banner builds a few on every start."""

    __slots__ = ("client", "how", "minus", "plus", "session")

    def __init__(
        self,
        client: Mapping[str, Any],
        session: int,
        how: str,
        plus: Iterable[str] = (),
        minus: Iterable[str] = (),
    ) -> None:
        self.client = client
        self.session = session
        self.how = how
        self.plus = tuple(sorted(plus))
        self.minus = tuple(sorted(minus))

    def __repr__(self) -> str:
        return f"Verdict({self.name!r}, {self.how!r}, {self.differ!r})"

    @property
    def name(self) -> str:
        return str(self.client["name"])

    @property
    def caveat(self) -> bool:
        return self.how in CAVEATS

    @property
    def differ(self) -> str:
        """``+roots -sampling``: it declares roots, which the session's client did not,
        and not sampling, which that one did (``?``: nothing to compare)."""
        names = sorted((*self.plus, *self.minus))
        return " ".join(("+" if c in self.plus else "-") + c for c in names) or "?"


class Survey:
    """What ``survey`` found: which clients the cassette serves (``served``, the line
    ``show`` and ``-v`` print), a ``Verdict`` per known client, and the per-session
    lines (``lines``, built when asked)."""

    __slots__ = ("_legacy_probe", "_probes", "_sessions", "era", "served", "verdicts")

    def __init__(
        self,
        era: Era,
        found: list[_Session],
        verdicts: list[Verdict],
        served: str,
        legacy_probe: Mapping[str, Any] | None,
        probes: Mapping[str, Sequence[Any]],
    ) -> None:
        self.era = era
        self._sessions = found
        self.verdicts = verdicts
        self.served = served
        self._legacy_probe = legacy_probe
        self._probes = probes

    @property
    def lines(self) -> list[str]:
        """One line per session, the clients no session serves, and the probes' line."""
        lines = _lines(self._sessions, self.verdicts, self._legacy_probe)
        if self._probes:
            from cassette.core.eras.surface import (
                probes_line,  # only a cassette the recorder probed
            )

            lines.append(probes_line(self._probes))
        return lines


def survey(era: Era, events: Sequence[Any]) -> Survey:
    """Judge every known client against the sessions of a cassette of ``era`` (see the
    module docstring), from one pass over ``events``."""
    main, variants, probes = split_all(events)
    probe_events: Sequence[Any] | None = variants.pop(PROBE_VARIANT, None)
    if probe_events is None and era == "modern":
        probe_events = _legacy_probe(probes)
    found = _sessions(era, main, variants)
    legacy_probe = recorded_handshake(probe_events) if probe_events else None
    surface = None
    if probes:
        from cassette.core.eras.listings import Surface  # only a cassette the recorder probed

        surface = Surface.of(probes)
    served = served_clients(era, found[0].handshake, probed=probe_events is not None)
    if era == "modern" and probe_events is None and any(s.era == "legacy" for s in found):
        served = "serves 2026-07-28 and dual-era clients, and legacy ones from a variant"
    verdicts = _verdicts(era, found, legacy_probe, surface)
    return Survey(era, found, verdicts, served, legacy_probe, probes)


def sessions(era: Era, events: Sequence[Any]) -> tuple[str, list[str]]:
    """Which clients a cassette of ``era`` serves (``served_clients``), and the lines
    ``show`` and ``replay -v`` print (``Survey.lines``)."""
    found = survey(era, events)
    return found.served, found.lines


def session_lines(
    era: Era,
    main: Sequence[Any],
    variants: Mapping[str, Sequence[Any]],
    probe_events: Sequence[Any] | None = None,
) -> list[str]:
    """``session NAME: serves ...; recorded with ...; fits ...; closest for ...``, one
    line per session (the main recording first, then each variant of ``variants``), and a
    last line naming the known clients no session serves, if any. ``probe_events``: the
    recorder's legacy probe (``cassette.runtime.probe``), when it was answered."""
    found = _sessions(era, main, variants)
    probe = recorded_handshake(probe_events) if probe_events else None
    return _lines(found, _verdicts(era, found, probe, None), probe)


def _handshake(client: Mapping[str, Any], era: Era) -> dict[str, Any]:
    """The handshake request ``client`` (a profile) opens a session of ``era`` with."""
    capabilities = dict(client.get("capabilities") or {})
    if era == "legacy":
        version = client.get("legacy_version") or LATEST_LEGACY
        params = {"protocolVersion": version, "capabilities": capabilities}
        return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    meta = {
        META_PREFIX + "protocolVersion": MODERN_VERSION,
        META_PREFIX + "clientCapabilities": capabilities,
    }
    return {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": meta}}


def _verdicts(
    era: Era,
    found: list[_Session],
    probe: Mapping[str, Any] | None,
    surface: Surface | None,
) -> list[Verdict]:
    """A ``Verdict`` per known client, in the profiles' order."""
    groups = [(s.era, s.handshake, s.fit) for s in found]
    out = []
    for client in FITTED:
        opening = _handshake(client, client.get("era") or era)
        index, opened = pick(groups, opening, probed=bool(probe))
        if opened:
            out.append(_judged(client, index, found, surface))
        else:
            out.append(Verdict(client, index, "refused"))
    return out


def _judged(
    client: Mapping[str, Any], index: int, found: list[_Session], surface: Surface | None
) -> Verdict:
    """How the session at ``index`` answers ``client``: the replay's capability warning's
    rule (``Negotiation.capability_warnings``), told as a verdict."""
    said = dict(client.get("capabilities") or {})
    wanted = compared(said)
    session = found[index]
    recorded = session.fit.capabilities
    if recorded is None:
        return Verdict(client, index, "untold", wanted)
    plus, minus = wanted - recorded, recorded - wanted
    differ = plus | minus
    if not differ:
        return Verdict(client, index, "fits")
    if differ & session.asked:
        how = "reacted"
    elif any(s.fit.capabilities != recorded for s in found):
        how = "varies"  # a variant shows the server answers by capabilities
    elif session.asked:
        how = "unused"  # it asked for some, and not these: it ignores them
    elif surface is not None and surface.probed_for(said):
        how = "probed"
    else:
        how = "unknown"
    return Verdict(client, index, how, plus, minus)


def _span(versions: Iterable[str]) -> str:
    ordered = sorted(versions)
    if not ordered:
        return ""
    return ordered[0] if len(ordered) == 1 else f"{ordered[0]} to {ordered[-1]}"


def _served(session: _Session, evidence: Sequence[str], probe: Mapping[str, Any] | None) -> str:
    """The revisions a session answers: its own era's, and for a 2026-07-28 session the
    legacy ones its recorded discovery lists or the recorder's probe was answered at;
    an older legacy revision than the recorded one is granted (``granted_version``)."""
    recorded = session.handshake or {}
    if session.era == "legacy":
        version = recorded.get("protocolVersion")
        if not isinstance(version, str):
            return "legacy"
        return "legacy " + _span(_granted(version, evidence))
    served = [MODERN_VERSION]
    probed = probe.get("protocolVersion") if probe is not None else None
    if isinstance(probed, str):
        served.append("legacy " + _span(_granted(probed, evidence)) + " (probed)")
    elif legacy_versions(recorded):
        served.append("legacy " + _span(legacy_versions(recorded)))
    return ", ".join(served)


def _granted(recorded: str, evidence: Sequence[str]) -> list[str]:
    listed = [v for v in LEGACY_VERSIONS if granted_version(v, recorded, evidence) == v]
    return listed or [recorded]


def _declared(fit: Fit) -> str:
    if fit.capabilities is None:
        return "capabilities unknown"
    return "recorded with " + (", ".join(sorted(fit.capabilities)) or "no capabilities")


def _legacy_probe(probes: Mapping[str, Sequence[Any]]) -> Sequence[Any] | None:
    """The events of the first legacy probe the server answered ``initialize`` in: what
    it tells a legacy client (``cassette.core.eras.surface``)."""
    for name, events in probes.items():
        if name.startswith("legacy:") and recorded_handshake(events) is not None:
            return events
    return None


def _sessions(
    era: Era, main: Sequence[Any], variants: Mapping[str, Sequence[Any]]
) -> list[_Session]:
    found = [_Session("main", era, main)]
    if variants:
        from cassette.core.eras.variants import group_era  # only for a cassette with variants

        found += [_Session(name, group_era(group), group) for name, group in variants.items()]
    return found


#: how a session line words each verdict on one client, and what it adds to what differs
_WORDS: Final = (
    ("fits", "fits", ""),
    ("unused", "no difference for", ", which the server does not ask for"),
    ("probed", "listings as live (probed) for", ""),
    ("reacted", "closest for", ", which the server asks for"),
    ("varies", "closest for", ""),
    ("unknown", "closest for", ""),
    ("untold", "closest for", ""),
)
_WORDING: Final = {how: (words, tail) for how, words, tail in _WORDS}


def _lines(
    found: list[_Session], verdicts: list[Verdict], probe: Mapping[str, Any] | None
) -> list[str]:
    evidence = [v for s in found if s.era == "modern" for v in legacy_versions(s.handshake or {})]
    lines = []
    for index, session in enumerate(found):
        served = _served(session, evidence, probe if index == 0 else None)
        parts = [f"session {session.name}: serves {served}", _declared(session.fit)]
        mine = [v for v in verdicts if v.session == index and v.how != "refused"]
        said: dict[str, list[str]] = {words: [] for _, words, _ in _WORDS}
        for verdict in mine:  # the profiles' order within each of the words' groups
            words, tail = _WORDING[verdict.how]
            shown = verdict.name
            if verdict.how != "fits":
                shown += f" ({verdict.differ}{tail})"
            said[words].append(shown)
        parts += [f"{words} {', '.join(names)}" for words, names in said.items() if names]
        lines.append("; ".join(parts))
    refused = [v.name for v in verdicts if v.how == "refused"]
    if refused:
        lines.append(
            f"no session serves {', '.join(refused)} (legacy clients): record one with "
            "cassette variant TAPE --as legacy"
        )
    return lines
