"""Variant sessions: one cassette answering clients that a live server treats differently.

A live server's answers can depend on who asks. server-everything lists its sampling and
elicitation tools only to a client that declared those capabilities, and its roots tool
reports the client's own roots; the Python SDK's server shapes an elicitation schema
differently for a legacy session than for a 2026-07-28 one. A single recording holds
what one client was told, so no rule can derive what another client would have been told.

``cassette record --variant NAME`` therefore records it: once the client's session ends,
cassette itself re-sends that session's requests to the live server as another client
would (another era, other capabilities) and appends the session to the cassette, each
of its message and raw events carrying ``meta.variant = NAME``. This module is the
sans-IO half: it splits a cassette's events into the main recording and its variants,
says what each one's handshake shows (era, client capabilities), and picks the one that
best fits a live client's handshake. A replay adopts the chosen group for the session.

The choice, made on each handshake request (``initialize`` or ``server/discover``) until
a session is under way, prefers, in order: the same declared capabilities (by name:
``roots``, ``sampling``, ``elicitation``, ...) and the same era, then the same
capabilities, then the same era; ties go to the main recording, then to variants in file
order. Capabilities come first because nothing can make up for them: a tool the server
listed only to another client stays listed, while a session of the other era is still
served by the cross-era rules of ``cassette.core.eras``, as before variants existed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from cassette.core.eras import client_era
from cassette.core.mcp import META_PREFIX
from cassette.core.model import Era

__all__ = [
    "COMPARED",
    "HANDSHAKES",
    "VARIANT_META",
    "Fit",
    "RecordedClient",
    "choose",
    "client_capabilities",
    "declared",
    "describe",
    "group_era",
    "has_legacy_variant",
    "recorded_client",
    "split",
    "variant_of",
]

#: the member of an event's ``meta`` naming the variant session the event belongs to
VARIANT_META: Final = "variant"
#: the requests that open a session, and so choose the group that answers it
HANDSHAKES: Final = frozenset({"initialize", "server/discover"})


def variant_of(event: Any) -> str | None:
    """The variant an event belongs to (``None``: the main recording). Only message and
    raw events carry ``meta``; stderr, exit and HTTP status events are the main one's."""
    meta = getattr(event, "meta", None)
    name = meta.get(VARIANT_META) if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else None


def split(events: Sequence[Any]) -> tuple[list[Any], dict[str, list[Any]]]:
    """The main recording's events, and each variant's, in file order. A cassette without
    variants comes back whole, as the same list (no copy on the common path)."""
    for event in events:  # the common case, no variant at all, in one tight loop
        meta = getattr(event, "meta", None)
        if meta and VARIANT_META in meta:
            break
    else:
        return list(events) if not isinstance(events, list) else events, {}
    main: list[Any] = []
    variants: dict[str, list[Any]] = {}
    for event in events:
        name = variant_of(event)
        (main if name is None else variants.setdefault(name, [])).append(event)
    return main, variants


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


def declared(message: Mapping[str, Any]) -> frozenset[str]:
    """The capabilities of ``COMPARED`` a handshake request declares, by name (sub-flags
    such as ``roots.listChanged`` change no answer a recording holds)."""
    return frozenset(client_capabilities(message) or {}) & COMPARED


@attrs.frozen
class Fit:
    """What a group of the cassette shows about the client it was recorded with."""

    era: Era
    capabilities: frozenset[str] | None  # None: no handshake request recorded

    @classmethod
    def of(cls, era: Era, requests: Iterable[Mapping[str, Any]]) -> Fit:
        """``era`` and the capabilities of the first handshake request in ``requests``
        whose era is ``era`` (a dual-era client's failed probe is not its session)."""
        for message in requests:
            if message.get("method") in HANDSHAKES and client_era(dict(message)) == era:
                return cls(era, declared(message))
        return cls(era, None)

    def score(self, era: Era | None, capabilities: frozenset[str]) -> int:
        same_capabilities = 2 if capabilities == self.capabilities else 0
        return same_capabilities + (1 if era == self.era else 0)


def choose(fits: Sequence[Fit], handshake: Mapping[str, Any]) -> int:
    """The index in ``fits`` (0: the main recording) of the group that answers a session
    opened by ``handshake``; see the module docstring for the order."""
    era, capabilities = client_era(dict(handshake)), declared(handshake)
    best, best_score = 0, -1
    for index, fit in enumerate(fits):
        score = fit.score(era, capabilities)
        if score > best_score:
            best, best_score = index, score
    return best


# -- what a recording shows about its client (for recording variants) --------------------


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
    opening: Mapping[str, Any] = {}
    requests: list[tuple[int, str, dict[str, Any] | None]] = []
    for direction, message, seq in messages:
        method = message.get("method")
        if direction != "c2s" or not isinstance(method, str) or "id" not in message:
            continue
        if method in HANDSHAKES and not opening and client_era(message) == era:
            opening = message
        params = message.get("params")
        retry = isinstance(params, dict) and "inputResponses" in params
        if method in _NOT_AGAIN or retry or repr(message.get("id")) not in answered:
            continue
        requests.append((seq + 1, method, _without_envelope(params)))
    return RecordedClient(
        era,
        dict(client_capabilities(opening) or {}) if opening else {},
        _client_info(opening),
        _asked_version(opening),
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


def group_era(events: Iterable[Any]) -> Era:
    """The era a group's events show: that of its first handshake request the server
    answered with a result (legacy when none was)."""
    asked: dict[str, Era] = {}
    for event in events:
        message = getattr(event, "message", None)
        if not isinstance(message, dict):
            continue
        if event.dir == "c2s" and message.get("method") in HANDSHAKES and "id" in message:
            asked[repr(message["id"])] = "legacy" if message["method"] == "initialize" else "modern"
        elif event.dir == "s2c" and "result" in message and repr(message.get("id")) in asked:
            return asked[repr(message.get("id"))]
    return "legacy"


def has_legacy_variant(events: Sequence[Any]) -> bool:
    """Whether a variant session shows what the server tells a legacy client."""
    return any(group_era(group) == "legacy" for group in split(events)[1].values())


def describe(events: Sequence[Any]) -> str:
    """The variants a cassette holds, for the banner and ``show``: ``""`` when none, else
    ``"; variants: NAME (ERA; CAPABILITIES), ..."``."""
    _, variants = split(events)
    if not variants:
        return ""
    parts = []
    for name, group in variants.items():
        era = group_era(group)
        fit = Fit.of(
            era, (e.message for e in group if isinstance(getattr(e, "message", None), dict))
        )
        caps = ", ".join(sorted(fit.capabilities or ())) or "no capabilities"
        parts.append(f"{name} ({'2026-07-28' if era == 'modern' else 'legacy'}; {caps})")
    return "; variants: " + ", ".join(parts)
