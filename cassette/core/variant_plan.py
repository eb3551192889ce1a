"""What a recording shows about its client, for a variant to send again (sans-IO).

``cassette variant`` (``cassette.client.variants``) re-sends the main recording's requests
as another client; this module reads them, with the handshake and the client's answers,
from the events alone. It is kept apart from ``cassette.core.variants`` so that a replay,
which only chooses among variants, never builds these classes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from cassette.core.mcp import META_PREFIX
from cassette.core.model import Era
from cassette.core.variants import HANDSHAKES, client_capabilities, opening

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
    """What ``events`` (the main recording's; message events have ``dir``, ``message``
    and ``seq``) show about the client, for a session of ``era``."""
    messages = [
        (e.dir, e.message, e.seq) for e in events if isinstance(getattr(e, "message", None), dict)
    ]
    answered = {
        repr(m.get("id")) for d, m, _ in messages if d == "s2c" and "method" not in m and "id" in m
    }
    requests: list[tuple[int, str, dict[str, Any] | None]] = []
    for direction, message, seq in messages:
        method = message.get("method")
        if direction != "c2s" or not isinstance(method, str) or "id" not in message:
            continue
        params = message.get("params")
        retry = isinstance(params, dict) and "inputResponses" in params
        if method in _NOT_AGAIN or retry or repr(message.get("id")) not in answered:
            continue
        requests.append((seq + 1, method, _without_envelope(params)))
    said = opening(era, (m for d, m, _ in messages if d == "c2s" and "id" in m)) or {}
    return RecordedClient(
        era,
        dict(client_capabilities(said) or {}) if said else {},
        _client_info(said),
        _asked_version(said),
        tuple(requests),
        _answers(messages),
    )


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


def _answers(messages: Sequence[tuple[str, dict[str, Any], int]]) -> dict[str, dict[str, Any]]:
    """The client's first answer to each method the server asked it, whether asked by a
    server request or by an ``input_required`` result's ``inputRequests``: ``{"result":
    ...}`` or ``{"error": ...}``, as the client sent it."""
    answers: dict[str, dict[str, Any]] = {}
    asked: dict[str, str] = {}  # server request id (repr) -> method
    rounds: dict[str, str] = {}  # inputRequests key -> method
    for direction, message, _ in messages:
        method, result = message.get("method"), message.get("result")
        if direction == "s2c" and isinstance(method, str) and "id" in message:
            asked[repr(message["id"])] = method
        elif direction == "s2c" and isinstance(result, dict):
            for key, request in _input_requests(result).items():
                rounds[key] = str(request.get("method"))
        elif direction == "c2s" and method is None:
            question = asked.pop(repr(message.get("id")), None)
            answer = _answer(message)
            if question is not None and answer is not None:
                answers.setdefault(question, answer)
        elif direction == "c2s" and isinstance(method, str):
            params = message.get("params")
            responses = params.get("inputResponses") if isinstance(params, dict) else None
            for key, given in (responses or {}).items() if isinstance(responses, dict) else ():
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
