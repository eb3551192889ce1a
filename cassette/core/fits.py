"""Which clients each session of a cassette fits: one line per session, for ``show`` and
the banner.

A cassette holds its main recording and maybe variant sessions recorded for other
clients (``cassette.core.variants``). For each session this says the protocol revisions
it serves, the capabilities its client declared, and which of the known clients
(``cassette.core.profiles.FITTED``) a replay answers from it, exactly (the same
capabilities) or as the closest one (with the capabilities that differ, which a
``cassette variant TAPE --as NAME`` would record). The session each client gets is
chosen by the same rule a replay uses (``cassette.core.variants.pick``), on the handshake
that client would send, so what ``show`` says is what the replay does.

Cheap by design: the banner prints it on every replay start. Each session's facts come
from its first handshake (the loops stop there); nothing is prepared or matched.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cassette.core.eras import (
    granted_version,
    legacy_versions,
    recorded_handshake,
    served_clients,
)
from cassette.core.mcp import LATEST_LEGACY, LEGACY_VERSIONS, META_PREFIX, MODERN_VERSION
from cassette.core.model import Era
from cassette.core.profiles import FITTED
from cassette.core.variants import PROBE_VARIANT, Fit, compared, pick, split_all

__all__ = ["session_lines", "sessions"]


class _Session:
    """One session's facts: its name, era, recorded handshake result and client fit."""

    __slots__ = ("era", "fit", "handshake", "name")

    def __init__(self, name: str, era: Era, events: Sequence[Any]) -> None:
        self.name = name
        self.era = era
        self.handshake = recorded_handshake(events)
        said = (e.message for e in events if getattr(e, "dir", None) == "c2s")
        self.fit = Fit.of(era, (m for m in said if isinstance(m, dict)))


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


def sessions(era: Era, events: Sequence[Any]) -> tuple[str, list[str]]:
    """Which clients a cassette of ``era`` serves (``served_clients``), and
    ``session_lines``: what the banner and ``show`` print, from one pass over ``events``."""
    main, variants, probes = split_all(events)
    probe_events: Sequence[Any] | None = variants.pop(PROBE_VARIANT, None)
    if probe_events is None and era == "modern":
        probe_events = _legacy_probe(probes)
    found = _sessions(era, main, variants)
    served = served_clients(era, found[0].handshake, probed=probe_events is not None)
    if era == "modern" and probe_events is None and any(s.era == "legacy" for s in found):
        served = "serves 2026-07-28 and dual-era clients, and legacy ones from a variant"
    lines = _lines(era, found, probe_events)
    if probes:
        from cassette.core.surface import probes_line  # only a cassette the recorder probed

        lines.append(probes_line(probes))
    return served, lines


def _legacy_probe(probes: Mapping[str, Sequence[Any]]) -> Sequence[Any] | None:
    """The events of the first legacy probe the server answered ``initialize`` in: what
    it tells a legacy client (``cassette.core.surface``)."""
    for name, events in probes.items():
        if name.startswith("legacy:") and recorded_handshake(events) is not None:
            return events
    return None


def _sessions(
    era: Era, main: Sequence[Any], variants: Mapping[str, Sequence[Any]]
) -> list[_Session]:
    found = [_Session("main", era, main)]
    if variants:
        from cassette.core.variants import group_era  # only for a cassette with variants

        found += [_Session(name, group_era(group), group) for name, group in variants.items()]
    return found


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
    return _lines(era, _sessions(era, main, variants), probe_events)


def _lines(era: Era, sessions: list[_Session], probe_events: Sequence[Any] | None) -> list[str]:
    probe = recorded_handshake(probe_events) if probe_events else None
    said: list[list[tuple[str, str]]] = [[] for _ in sessions]
    refused: list[str] = []
    groups = [(s.era, s.handshake, s.fit) for s in sessions]
    for client in FITTED:
        index, opened = pick(
            groups, _handshake(client, client.get("era") or era), probed=bool(probe)
        )
        if opened:
            said[index].append(_fit(client, sessions[index].fit))
        else:
            refused.append(client["name"])
    evidence = [
        v for s in sessions if s.era == "modern" for v in legacy_versions(s.handshake or {})
    ]
    lines = []
    for index, session in enumerate(sessions):
        served = _served(session, evidence, probe if index == 0 else None)
        parts = [f"session {session.name}: serves {served}", _declared(session.fit)]
        exact = [name for name, differ in said[index] if not differ]
        near = [f"{name} ({differ})" for name, differ in said[index] if differ]
        parts += ["fits " + ", ".join(exact)] if exact else []
        parts += ["closest for " + ", ".join(near)] if near else []
        lines.append("; ".join(parts))
    if refused:
        lines.append(
            f"no session serves {', '.join(refused)} (legacy clients): record one with "
            "cassette variant TAPE --as legacy"
        )
    return lines


def _fit(client: Mapping[str, Any], fit: Fit) -> tuple[str, str]:
    """``client``'s name, and ``""`` when the session's client declared what it declares,
    else what differs: ``+roots -sampling`` (it declares roots, which the session's client
    did not, and not sampling, which that one did)."""
    wanted = compared(client.get("capabilities") or {})
    held = fit.capabilities
    name = str(client["name"])
    if held is not None and wanted == held:
        return name, ""
    differ = sorted(wanted ^ (held or frozenset()))
    return name, " ".join(("+" if c in wanted else "-") + c for c in differ) or "?"
