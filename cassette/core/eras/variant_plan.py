"""What a recording shows about its client, for a variant to send again (sans-IO).

``cassette variant`` (``cassette.client.variants``) re-sends the main recording's requests
as another client; this module reads them, with the handshake and the client's answers,
from the events alone. It is kept apart from ``cassette.core.eras.variants`` so that a replay,
which only chooses among variants, never builds these classes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from cassette.core.eras.variants import HANDSHAKES, client_capabilities, opening
from cassette.core.wire.mcp import META_PREFIX
from cassette.core.wire.model import Era, MessageEvent
from cassette.core.wire.pairing import Exchange, exchanges

__all__ = ["RecordedClient", "recorded_client"]


@attrs.frozen
class RecordedClient:
    """The main recording's client, as a variant re-drives it: its handshake (era,
    capabilities, ``clientInfo``, the legacy revision it asked for), the requests it sent
    that the server answered, in order and without the 2026-07-28 envelope (a variant's
    own client adds the envelope of its era), and its first answer to each kind of
    question the server asked (server requests, and ``input_required`` rounds)."""

    era: Era
    capabilities: Mapping[str, Any]
    client_info: Mapping[str, Any]
    legacy_version: str | None
    #: (line in the cassette, method, params) of each request to send again
    requests: tuple[tuple[int, str, dict[str, Any] | None], ...]
    #: method -> ``{"result": ...}`` or ``{"error": ...}``
    answers: Mapping[str, dict[str, Any]]


#: requests a variant does not send again: its own client opens and keeps its session
_NOT_AGAIN: Final = HANDSHAKES | {"ping", "subscriptions/listen"}


def recorded_client(era: Era, events: Sequence[Any]) -> RecordedClient:
    """What ``events`` (the main recording's) show about the client, for a session of
    ``era``."""
    pairs = exchanges(list(events))[0]
    requests = tuple(
        (p.request.seq + 1, p.method, _without_envelope(p.request.message.get("params")))
        for p in pairs
        if p.request.dir == "c2s"
        and p.response is not None
        and p.method not in _NOT_AGAIN
        and not _retry(p.request.message)
    )
    messages = [e.message for e in events if isinstance(e, MessageEvent)]
    said = opening(era, (m for m in messages if "method" in m and "id" in m)) or {}
    return RecordedClient(
        era,
        dict(client_capabilities(said) or {}) if said else {},
        _client_info(said),
        _asked_version(said),
        requests,
        {**_round_answers(events), **_asked_answers(pairs)},
    )


def _retry(request: Mapping[str, Any]) -> bool:
    """A 2026-07-28 retry carrying ``inputResponses``: the variant's client makes its own."""
    params = request.get("params")
    return isinstance(params, dict) and "inputResponses" in params


def _without_envelope(params: Any) -> dict[str, Any] | None:
    """``params`` without the 2026-07-28 envelope's members of ``_meta``."""
    if not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return dict(params)
    kept = {k: v for k, v in meta.items() if not k.startswith(META_PREFIX)}
    out = {k: v for k, v in params.items() if k != "_meta"}
    if kept:
        out["_meta"] = kept
    return out


def _client_info(opening: Mapping[str, Any]) -> Mapping[str, Any]:
    params = opening.get("params")
    params = params if isinstance(params, dict) else {}
    info = params.get("clientInfo")
    if not isinstance(info, dict):
        meta = params.get("_meta")
        info = meta.get(META_PREFIX + "clientInfo") if isinstance(meta, dict) else None
    return dict(info) if isinstance(info, dict) else {"name": "cassette-variant", "version": "0"}


def _asked_version(opening: Mapping[str, Any]) -> str | None:
    params = opening.get("params")
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    return version if isinstance(version, str) and opening.get("method") == "initialize" else None


def _asked_answers(pairs: Sequence[Exchange]) -> dict[str, dict[str, Any]]:
    """The client's first answer to each method the server asked it by a server request:
    ``{"result": ...}`` or ``{"error": ...}``, as the client sent it."""
    answers: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        if pair.request.dir == "s2c" and pair.response is not None:
            answer = _answer(pair.response.message)
            if answer is not None:
                answers.setdefault(pair.method, answer)
    return answers


def _round_answers(events: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """The client's first answer to each method a 2026-07-28 ``input_required`` result
    asked it for (its ``inputRequests``, answered by key in the retry's
    ``inputResponses``), as ``{"result": ...}``."""
    answers: dict[str, dict[str, Any]] = {}
    rounds: dict[str, str] = {}  # inputRequests key -> method
    for event in events:
        if not isinstance(event, MessageEvent):
            continue
        result, params = event.message.get("result"), event.message.get("params")
        if event.dir == "s2c" and isinstance(result, dict):
            for key, request in _input_requests(result).items():
                rounds[key] = str(request.get("method"))
        elif event.dir == "c2s" and isinstance(params, dict):
            responses = params.get("inputResponses")
            for key, given in responses.items() if isinstance(responses, dict) else ():
                if key in rounds and isinstance(given, dict):
                    answers.setdefault(rounds[key], {"result": given})
    return answers


def _answer(message: Mapping[str, Any]) -> dict[str, Any] | None:
    if isinstance(message.get("result"), dict):
        return {"result": message["result"]}
    if isinstance(message.get("error"), dict):
        return {"error": message["error"]}
    return None


def _input_requests(result: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    if result.get("resultType") != "input_required":
        return {}
    requests = result.get("inputRequests")
    if not isinstance(requests, dict):
        return {}
    return {k: v for k, v in requests.items() if isinstance(v, dict)}
