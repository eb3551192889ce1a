"""What the era rules answer, as functions of values: the era-and-variant authority's rules.

The authority (``cassette.core.replay.negotiation``) keeps a session's state: who the client is,
which group answers it, what it was already told. What it decides from that state is
here, one function per rule, each taking the values it needs and returning a value (a
``Reply``, a message, a warning): tested with plain dicts, and read without the machine.

* **Across eras** (``crosses``, ``initialize_on_modern``, ``modern_on_legacy``): a legacy
  client's ``initialize`` on a modern recording is answered from the recorder's legacy
  probe, else from the recorded ``server/discover`` when that lists a legacy revision,
  else refused with ``-32022``; a 2026-07-28 request on a legacy recording is refused
  with ``-32022`` (``cassette.core.eras.bridge`` has the table). A refusal carries its miss.
* **Protocol version** (``granted``): a client asking ``initialize`` for an older legacy
  revision than the recorded one is granted it, as the SDK servers grant it; a newer one
  gets the recorded revision, with a warning (``cassette.core.eras.bridge.granted_version``).
* **What the recording makes certain** (``unrecorded``): ``ping`` and
  ``logging/setLevel`` asked on the client's own, or ``Method not found`` where the
  recorded server had no such method.
* **Status** (``status_for``): the HTTP status a legacy server answers with.
* **What may differ** (``capability_warning``, ``progress_warning``): the live client
  declares other capabilities than the recording's client, or asks for progress the
  recording's client did not ask for.

Invariants: nothing here keeps state or changes what it is given (a ``Reply`` is
evolved, a message copied); a refusal's miss is on the ``Reply`` it returns, for the
caller to count. Sans-IO: values in, values out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from cassette.core.eras.bridge import (
    LEGACY_ONLY_METHODS,
    capabilities_asked,
    client_era,
    granted_version,
    initialize_from_discover,
    legacy_status,
    legacy_versions,
    unsupported_version,
)
from cassette.core.eras.variants import compared
from cassette.core.replay.prepared import Prepared
from cassette.core.replay.replay_parts import params
from cassette.core.replay.reply import Reply, _reply
from cassette.core.wire.exchanges import Exchange, progress_token
from cassette.core.wire.jsonrpc import METHOD_NOT_FOUND, JSONObject, error_response
from cassette.core.wire.mcp import MODERN_VERSION
from cassette.core.wire.model import Era

if TYPE_CHECKING:
    from cassette.core.eras.listings import Surface

__all__ = [
    "capability_warning",
    "crosses",
    "evidence",
    "granted",
    "initialize_on_modern",
    "modern_on_legacy",
    "progress_warning",
    "status_for",
    "unrecorded",
]


# -- across eras (``cassette.core.eras.bridge``) ---------------------------------------------------


def crosses(method: object, era: Era | None, served: Era) -> bool:
    """Whether a request of ``era`` (as it says) is answered by the era rules, not by the
    recording of era ``served``."""
    if method == "initialize":
        return served == "modern"
    return served == "legacy" and era == "modern" and method != "server/discover"


def initialize_on_modern(
    message: JSONObject, handshake: JSONObject | None, probe: JSONObject | None
) -> Reply:
    """A legacy client's ``initialize`` on a modern recording: answered from the
    recorder's legacy ``probe``, else from the recorded ``server/discover`` (its
    ``handshake``) when that lists a legacy revision; else the ``-32022`` refusal, with
    its miss."""
    requested = params(message).get("protocolVersion")
    result = _from_probe(requested, handshake, probe)
    if result is None:
        result = initialize_from_discover(handshake or {}, requested)
    if result is not None:
        return _reply(({"jsonrpc": "2.0", "id": message["id"], "result": result},))
    listed = handshake.get("supportedVersions") if handshake else None
    supported = [str(v) for v in listed] if isinstance(listed, list) else []
    summary = (
        "initialize (a legacy client) on a 2026-07-28 cassette whose server listed no "
        "legacy revision and was not probed for one: record a legacy session into it "
        "with cassette variant TAPE --as legacy (or record with cassette record --era "
        "legacy)"
    )
    return _refused(message, summary, requested, supported)


def _from_probe(
    requested: object, handshake: JSONObject | None, probe: JSONObject | None
) -> JSONObject | None:
    """The ``initialize`` result the recorder's probe got, at the revision the server
    would grant ``requested`` (``granted_version``); ``None`` without a probe. It is
    the server's own answer to a legacy client, so it goes before one derived from
    ``server/discover``."""
    version = probe.get("protocolVersion") if probe is not None else None
    if probe is None or not isinstance(version, str):
        return None
    listed = legacy_versions(handshake) if handshake else []
    return {**probe, "protocolVersion": granted_version(requested, version, listed)}


def modern_on_legacy(message: JSONObject, handshake: JSONObject | None) -> Reply:
    """A 2026-07-28 request on a legacy recording: the recording shows no support for it
    (the ``-32022`` refusal, with its miss)."""
    recorded = handshake.get("protocolVersion") if handshake else None
    supported = [recorded] if isinstance(recorded, str) else []
    summary = (
        f"{message.get('method')} in the 2026-07-28 envelope on a legacy cassette (its "
        "server answered the initialize handshake only): record it with this client"
    )
    return _refused(message, summary, MODERN_VERSION, supported)


def _refused(message: JSONObject, summary: str, requested: object, supported: list[str]) -> Reply:
    """The ``-32022`` a server of the other era gives, at the status a 2026-07-28
    server mirrors it with (400)."""
    from cassette.core.replay.misses import MissReport

    report = MissReport("not-recorded", str(message.get("method")), summary)
    error = unsupported_version(message.get("id"), requested, supported, summary)
    return Reply((error,), report, (None,), status=400, refuses_era=True)


def status_for(reply: Reply) -> Reply:
    """``reply`` at the HTTP status a legacy server answers with: a 2026-07-28 server
    mirrors a JSON-RPC error in the status, a legacy one answers 200
    (``cassette.core.eras.bridge.legacy_status``)."""
    exchange = reply.exchange
    if exchange is None or reply.status is not None:
        return reply
    status = legacy_status(exchange.status)
    return reply if status == exchange.status else attrs.evolve(reply, status=status)


# -- the protocol revision ---------------------------------------------------------------


def granted(
    live: JSONObject, messages: Sequence[Any], proven: Sequence[str]
) -> tuple[Sequence[Any], tuple[str, ...]]:
    """The recorded ``initialize`` answer (the last of ``messages``) with the revision
    the recorded server would have granted the live client (``granted_version``; the
    legacy revisions the recording proves it supports: ``evidence``), and a warning when
    that is not what it asked for."""
    asked = params(live).get("protocolVersion")
    answer = messages[-1] if messages else None
    result = answer.get("result") if isinstance(answer, dict) else None
    given = result.get("protocolVersion") if isinstance(result, dict) else None
    if not isinstance(asked, str) or not isinstance(given, str) or asked == given:
        return messages, ()
    version = granted_version(asked, given, proven)
    if version == asked:
        assert isinstance(answer, dict)
        assert isinstance(result, dict)
        shown = {**answer, "result": {**result, "protocolVersion": version}}
        return (*messages[:-1], shown), ()
    return messages, (
        f"the client asked for protocol {asked}; the recorded server answered {given}, "
        f"and grants no newer revision than it answered, so the replay answers {given}",
    )


def evidence(groups: Sequence[Prepared]) -> tuple[str, ...]:
    """The legacy revisions a recorded ``server/discover`` (of any group) lists: what
    the recording proves the server supports; empty when none was recorded."""
    found: list[str] = []
    for group in groups:
        if group.era == "modern" and group.handshake is not None:
            found += legacy_versions(group.handshake)
    return tuple(found)


# -- what the recording makes certain ----------------------------------------------------


def unrecorded(
    message: JSONObject,
    served: Era,
    handshake: JSONObject | None,
    client: Era | None,
    probe: JSONObject | None,
) -> JSONObject | None:
    """The answer to an unrecorded request that the recording makes certain, if any:
    ``Method not found`` where it shows the server had no such method (2026-07-28
    removed ``ping`` and ``logging/setLevel``, a legacy server has no discovery, and one
    that did not advertise ``logging`` has no handler for it); an empty result for
    ``ping``, and for ``logging/setLevel`` when the server advertised ``logging``.
    ``served``: the era of the group answering; ``client``: the era the session's client
    spoke first. A legacy client of a modern recording is judged by what the server
    answered the recorder's legacy ``probe`` (2026-07-28 removed ``logging/setLevel``, so
    the modern handshake never advertises ``logging``)."""
    method = message.get("method")
    msg_id = message["id"]
    if served == "modern" and client == "legacy" and probe is not None:
        handshake = probe  # what the server told a legacy client: a modern one has no logging
    logs = _server_logs(handshake)
    if method in LEGACY_ONLY_METHODS and _speaks_modern(message, client):
        lacks = True
    elif method == "server/discover":
        lacks = served == "legacy"
    else:
        lacks = method == "logging/setLevel" and logs is False
    if lacks:
        return error_response(msg_id, METHOD_NOT_FOUND, "Method not found")
    if method == "ping" or (method == "logging/setLevel" and logs):
        return {"jsonrpc": "2.0", "id": msg_id, "result": {}}
    return None


def _speaks_modern(message: JSONObject, client: Era | None) -> bool:
    """Whether ``message`` belongs to a 2026-07-28 session: its envelope says so, or
    the session's first words did and this message says nothing."""
    era = client_era(message)
    return era == "modern" or (era is None and client == "modern")


def _server_logs(handshake: JSONObject | None) -> bool | None:
    """Whether the recorded server advertised ``logging``; None when no handshake
    recorded its capabilities (the recording cannot tell)."""
    capabilities = handshake.get("capabilities") if handshake else None
    if not isinstance(capabilities, dict):
        return None
    return "logging" in capabilities


# -- what may differ from the live server ------------------------------------------------


def capability_warning(
    said: Mapping[str, Any] | None,
    group: Prepared,
    groups: Sequence[Prepared],
    surface: Surface | None,
) -> str | None:
    """The live client declares capabilities ``said``, other than the client ``group``
    was recorded with: whether the recorded server reacted to them (it asked that client
    for roots, sampling or elicitation, or a variant of ``groups`` recorded for other
    capabilities holds other answers), or, where the server asked nothing at all, that
    the recording cannot show it: a server that lists its tools by the client's
    capabilities (server-everything) leaves no trace of it in one session. The answers
    come from that recording all the same; the warning says what may differ from the live
    server's. ``None``: nothing to say (the same capabilities, or ones the server ignores,
    or ones the recorder's probes listed for: ``surface``)."""
    recorded = group.fit.capabilities if group.fit is not None else None
    if said is None or recorded is None:
        return None
    differ = compared(said) ^ recorded
    asked = _asked_for(group)
    reacted = differ & asked
    if differ and any(g.fit and g.fit.capabilities != recorded for g in groups):
        reacted = differ  # a variant shows the server answers by capabilities
    if not reacted and (asked or not differ):
        return None  # the server asked for some, and not these: it ignores them
    if not reacted and surface is not None and surface.probed_for(said):
        return None  # the probes show what it lists to these (``cassette.core.eras.listings``)
    live = ", ".join(sorted(compared(said))) or "none"
    held = ", ".join(sorted(recorded)) or "none"
    if reacted:
        how = f"and the recorded server reacted to {', '.join(sorted(reacted))}"
    else:  # a tool list that depends on them shows nothing of it in one recording
        how = (
            "and the recording cannot show whether the server answers by them (some "
            "list their tools by the client's capabilities)"
        )
    return (
        f"the client declares capabilities {live}; the session answering it was "
        f"recorded with {held}, {how}: answers may differ from the live server's "
        "(record this client's session with cassette variant TAPE --as NAME "
        "--capabilities ... or a profile)"
    )


def progress_warning(live: JSONObject, exchange: Exchange) -> str | None:
    """The live client asks for progress on a request (a ``progressToken`` in its
    ``_meta``) whose recording has none, because the client that recorded it did not
    ask: the server sends progress only when asked, so this client gets none from the
    replay, where the live server would have sent some. ``None``: nothing to say."""
    if progress_token(live) is None or progress_token(exchange.message) is not None:
        return None  # not asked, or the recording client asked: what was sent is recorded
    return (
        f"the client asks for progress on {live.get('method')} (a progressToken); the "
        "client that recorded it did not ask, so the recording holds no progress "
        "notifications and the replay sends none (record with a client that asks for "
        "progress to replay it)"
    )


def _asked_for(group: Prepared) -> frozenset[str]:
    """The capabilities the recorded server asked its client for in ``group``: a server
    request, or (2026-07-28) an ``input_required`` result's ``inputRequests``
    (``capabilities_asked``, the rule the banner's verdicts use too)."""
    asked: set[str] = set()
    for exchange in group.exchanges:
        for item in exchange.items:
            if not isinstance(item.message, dict):
                continue  # a raw exchange's answer may be a batch
            if item.role in ("request", "response"):
                asked |= capabilities_asked(item.message, request=item.role == "request")
    return frozenset(asked)
