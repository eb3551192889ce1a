"""What a recording shows about how its server served streamable HTTP, read once when a
replay front starts: the facts the front serves every session by.

Each function answers one question about the recorded server from the cassette alone (its
header and events), so a front never guesses from what clients send.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from cassette.core.eras.variants import probe_of
from cassette.core.wire.mcp import LEGACY_VERSIONS, MODERN_VERSION
from cassette.core.wire.meta import RETRY, SESSION, SSE, STREAM
from cassette.core.wire.model import HttpEvent, MessageEvent, RawEvent, Recording

__all__ = [
    "get_refused",
    "modern_versions",
    "primed_streams",
    "recorded_path",
    "resumed_streams",
    "sessionless_methods",
]


def recorded_path(recording: Recording) -> str | None:
    """The path of the URL the recorded server was reached at, if it was reached by one."""
    url = recording.header.target.get("url")
    return (urlsplit(url).path or "/") if isinstance(url, str) else None


def primed_streams(recording: Recording) -> dict[str, int | None]:
    """Recorded POST streams that opened with a 2025-11-25 priming event, with its retry."""
    primed: dict[str, int | None] = {}
    for event in recording.events:
        meta = getattr(event, "meta", None)
        if isinstance(event, RawEvent) and event.text == "" and meta and meta.get(SSE):
            stream = meta.get(STREAM)
            retry = meta.get(RETRY)
            if isinstance(stream, str) and stream not in primed:
                primed[stream] = retry if isinstance(retry, int) else None
    return primed


def get_refused(recording: Recording) -> int | None:
    """A recorded server that refused GET (405) gets the same answer from its replay."""
    statuses = {
        e.status for e in recording.events if isinstance(e, HttpEvent) and e.method == "GET"
    }
    return 405 if statuses == {405} else None


def modern_versions(recording: Recording) -> tuple[str, ...]:
    """The 2026-07-28-era protocol versions the recorded server spoke: the recorded one,
    and any other non-legacy one its ``server/discover`` answer listed."""
    found = [recording.header.protocol_version or MODERN_VERSION]
    for event in recording.events:
        if isinstance(event, MessageEvent) and event.dir == "s2c":
            result = event.message.get("result")
            listed = result.get("supportedVersions") if isinstance(result, dict) else None
            if isinstance(listed, list):
                found += [v for v in listed if isinstance(v, str)]
    return tuple(dict.fromkeys(v for v in found if v not in LEGACY_VERSIONS))


def sessionless_methods(recording: Recording) -> frozenset[str] | None:
    """What a legacy-era client may send without a session: ``None`` (anything) unless the
    recorded server handed out sessions over streamable HTTP; then only ``initialize`` and
    the methods the recording shows sent without one (a dual-era client's ``server/discover``
    probe, answered with what the server said to it). The specification: a server that
    requires sessions answers any other request without one with 400."""
    if recording.header.transport != "streamable-http":
        return None
    if not any(_session_of(event) is not None for event in recording.events):
        return None
    methods = {"initialize"}
    for event in recording.events:
        if probe_of(event) is not None:
            continue  # the recorder's own probes: each was a session of its own
        if isinstance(event, MessageEvent) and event.dir == "c2s" and _session_of(event) is None:
            method = event.message.get("method")
            if isinstance(method, str):
                methods.add(method)
    return frozenset(methods)


def resumed_streams(recording: Recording) -> frozenset[str]:
    """Recorded GET streams that resumed a POST's stream (``Last-Event-ID``): a standalone
    GET stream never carries a response, so one that did was finishing a POST's."""
    resumed = set()
    for event in recording.events:
        if isinstance(event, MessageEvent) and event.dir == "s2c" and event.meta:
            stream = event.meta.get(STREAM)
            is_answer = "method" not in event.message and "id" in event.message
            if is_answer and isinstance(stream, str) and stream.startswith("get-"):
                resumed.add(stream)
    return frozenset(resumed)


def _session_of(event: object) -> object:
    if isinstance(event, HttpEvent):
        return event.session
    meta = getattr(event, "meta", None)
    return meta.get(SESSION) if meta else None
