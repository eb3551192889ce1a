"""``cassette import FILE [-o OUT]``: bring a recording made by another tool in as a cassette.

Two formats are read, both described by their own tools' source:

* **mcp-recorder** (``"version": "1.0"``, ``"interactions"``): each interaction is a
  client request with the server's response, or a client notification; HTTP lifecycle
  entries (``GET``/``DELETE``) carry no message and are left out. The format keeps no time
  of its own but each answer's ``latency_ms``, so events are timed one after the other by
  those latencies.
* **mcp-cassette**, the Python one (``"format_version": 3``, ``"messages"``): every message
  in order, with its sender and ``t_offset_ms``; a ``raw`` line stays a raw event.

The result is an ordinary cassette: messages exactly as the other tool stored them (its
placeholders, such as ``"REDACTED"``, stay what they are: values nobody can turn back),
the era and protocol version the recorded session proves, decided as our recorder decides
them (a 2026-07-28 session, ``server/discover`` and enveloped requests, is modern; an
``initialize`` session legacy, at the version it negotiated), and ``target.imported``
naming where it came from. Any other file is
refused with one line naming the formats known.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from cassette._version import __version__
from cassette.core.recording.recorder import decide
from cassette.core.wire.ids import id_key
from cassette.core.wire.model import (
    Direction,
    Era,
    Event,
    Header,
    MessageEvent,
    RawEvent,
    RecorderInfo,
)
from cassette.errors import CassetteError
from cassette.store.storage import Cassette

__all__ = ["KNOWN_FORMATS", "import_cassette"]

#: The formats ``import`` reads, as the one line of a refusal names them.
KNOWN_FORMATS: Final = (
    'mcp-recorder JSON ("version": "1.0" with "interactions")',
    'mcp-cassette (Python) format 3 ("format_version": 3 with "messages")',
)
_EPOCH: Final = "1970-01-01T00:00:00.000Z"


def import_cassette(data: bytes, source: str) -> tuple[str, Cassette]:
    """The cassette ``data`` (another tool's recording) becomes, and that tool's name."""
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        document = None
    for name, looks, convert in _READERS:
        if isinstance(document, dict) and looks(document):
            try:
                return name, convert(document, source)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise CassetteError(
                    f"{source}: a {name} file, but not as expected: {exc!r}"
                ) from exc
    raise CassetteError(
        f"{source}: not a recording cassette import knows ({'; '.join(KNOWN_FORMATS)})"
    )


def _is_recorder(doc: Mapping[str, Any]) -> bool:
    return doc.get("version") == "1.0" and isinstance(doc.get("interactions"), list)


def _is_python_cassette(doc: Mapping[str, Any]) -> bool:
    return doc.get("format_version") == 3 and isinstance(doc.get("messages"), list)


def _from_recorder(doc: Mapping[str, Any], source: str) -> Cassette:
    meta = doc.get("metadata") or {}
    events: list[Event] = []
    t = 0.0
    for item in doc["interactions"]:
        request, response = item.get("request"), item.get("response")
        if not isinstance(request, dict):
            continue  # an HTTP GET or DELETE: no message
        events.append(MessageEvent(t=round(t, 6), dir="c2s", message=request))
        if isinstance(response, dict):
            t += max(float(item.get("latency_ms") or 0), 0.0) / 1000
            events.append(MessageEvent(t=round(t, 6), dir="s2c", message=response))
    header = _header(
        meta.get("transport_type"),
        meta.get("recorded_at"),
        meta.get("protocol_version"),
        events,
        "mcp-recorder " + str(doc["version"]),
    )
    return Cassette(header, tuple(events), source)


def _from_python_cassette(doc: Mapping[str, Any], source: str) -> Cassette:
    events: list[Event] = []
    for item in doc["messages"]:
        direction: Direction = "c2s" if item["sender"] == "client" else "s2c"
        t = round(max(float(item.get("t_offset_ms") or 0), 0.0) / 1000, 6)
        t = max(t, events[-1].t) if events else t  # never decreasing down the file
        payload = item.get("payload")
        if isinstance(payload, dict) and item.get("kind") != "raw":
            events.append(MessageEvent(t=t, dir=direction, message=payload))
        else:
            text = payload if isinstance(payload, str) else json.dumps(payload)
            events.append(RawEvent(t=t, dir=direction, text=text))
    header = _header(
        doc.get("transport"),
        doc.get("recorded_at"),
        doc.get("protocol_version"),
        events,
        "mcp-cassette 3",
    )
    return Cassette(header, tuple(events), source)


def _header(
    transport: object, recorded: object, version: object, events: list[Event], origin: str
) -> Header:
    era, proved = _era(events)
    if era == "modern":
        negotiated = proved
    else:
        negotiated = version if isinstance(version, str) else proved or _negotiated(events)
    return Header(
        transport="stdio" if transport in (None, "stdio") else "streamable-http",
        recorder=RecorderInfo("cassette-mcp", __version__),
        started_at=_timestamp(recorded),
        target={"imported": origin},
        era=era,
        protocol_version=negotiated,
    )


def _era(events: list[Event]) -> tuple[Era, str | None]:
    """The era the recorded session speaks, and its protocol version, decided as the
    recorder decides it (``cassette.core.recording.recorder.decide``): by its first successful
    exchange that proves one (a 2026-07-28 session's ``server/discover`` or enveloped
    request, a legacy one's ``initialize``); legacy when none does."""
    asked: dict[Any, dict[str, Any]] = {}
    for event in events:
        if not isinstance(event, MessageEvent) or "id" not in event.message:
            continue
        message = event.message
        if event.dir == "c2s" and "method" in message:
            asked[id_key(message["id"])] = message
        elif event.dir == "s2c" and "result" in message:
            request = asked.get(id_key(message["id"]))
            verdict = None if request is None else decide(request, message["result"])
            if verdict is not None:
                return verdict
    return "legacy", None


def _negotiated(events: list[Event]) -> str | None:
    """The version the server's ``initialize`` answer named."""
    for message in _messages(events):
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            return str(result["protocolVersion"])
    return None


def _messages(events: list[Event]) -> Iterator[dict[str, Any]]:
    return (e.message for e in events if isinstance(e, MessageEvent))


def _timestamp(value: object) -> str:
    """RFC 3339 in UTC with milliseconds, as a cassette header holds it."""
    if not isinstance(value, str):
        return _EPOCH
    try:
        moment = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return _EPOCH
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    moment = moment.astimezone(datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


_READERS: Final[tuple[tuple[str, Callable[[Mapping[str, Any]], bool], Any], ...]] = (
    ("mcp-recorder", _is_recorder, _from_recorder),
    ("mcp-cassette", _is_python_cassette, _from_python_cassette),
)
