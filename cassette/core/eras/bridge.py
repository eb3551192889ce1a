"""Serving a client of the other era, from what the recording proves, and no further.

A cassette is a session of one era (``Header.era``). A live client may speak the other:
a legacy client opens with ``initialize``; a modern one sends ``server/discover`` or puts
the 2026-07-28 envelope (``_meta`` with ``io.modelcontextprotocol/protocolVersion``) on
every request. What the replay serves, by cassette and client:

====================  =========================  ===========================================
cassette              client                     served
====================  =========================  ===========================================
legacy                legacy                     natively; a client asking for an older
                                                 legacy revision than the recorded one is
                                                 granted it (``granted_version``), a newer
                                                 one gets the recorded revision; answers
                                                 stay as recorded (the specification says
                                                 no way to lower a result to an older
                                                 revision, and clients ignore members
                                                 they do not know)
legacy                dual-era (probes first)    the probe gets ``-32601`` as from the live
                                                 legacy server; the client falls back to
                                                 ``initialize``: natively
legacy                modern only                ``-32022`` UnsupportedProtocolVersion: the
                                                 recording shows no 2026-07-28 support; a
                                                 miss, with a hint to record that client
modern                modern or dual-era         natively
modern                legacy, and the recorded   ``initialize`` answered from the recorded
                      ``server/discover`` lists  ``server/discover`` (the version the client
                      a legacy version           asked for if listed, else the newest listed
                                                 legacy one); results lose the 2026-07-28-only
                                                 members (``resultType``, ``ttlMs``,
                                                 ``cacheScope``, the ``_meta`` envelope);
                                                 ``input_required``: server requests
                                                 (``cassette.core.eras.rounds``); HTTP errors at 200
modern                legacy, and the recorder's ``initialize`` answered from the probe's
                      probe was answered         recorded answer (``cassette.runtime.probe``),
                                                 at the revision the server grants; the rest
                                                 as in the row above
modern                legacy, no legacy version  ``-32022``, as a modern-only server says; a
                      listed and no probe        miss, with a hint: ``cassette variant TAPE
                                                 --as legacy`` or ``record --era legacy``
====================  =========================  ===========================================

An ``input_required`` result is 2026-07-28's way of asking the client mid-call: its
``inputRequests`` are the server requests a legacy session sends instead (``sampling/
createMessage``, ``elicitation/create``, ``roots/list``), and the recording holds what the
server answered once the client's ``inputResponses`` came back. A legacy client is sent
those requests (``cassette.core.eras.rounds``); its answers make the recorded retry, whose result it
gets as the answer to its own request. A request for a capability the client did not declare,
or an ``input_required`` without requests, is an error naming it, a miss.
Sans-IO: values in, values out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from cassette.core.wire.jsonrpc import METHOD_NOT_FOUND, JSONObject, error_response
from cassette.core.wire.mcp import LEGACY_VERSIONS, META_PREFIX, MODERN_VERSION, VERSION_META
from cassette.core.wire.model import Era

__all__ = [
    "ASKS",
    "ERA_CHOICES",
    "LEGACY_ONLY_METHODS",
    "MODERN_ONLY_MEMBERS",
    "UNSUPPORTED_VERSION",
    "capabilities_asked",
    "client_era",
    "era_refusal",
    "granted_version",
    "initialize_from_discover",
    "input_requests",
    "legacy_shape",
    "legacy_status",
    "legacy_versions",
    "recorded_handshake",
    "served_clients",
    "unsupported_version",
]

#: UnsupportedProtocolVersion (2026-07-28's numbering).
UNSUPPORTED_VERSION: Final = -32022
#: Result members only the 2026-07-28 revision has.
MODERN_ONLY_MEMBERS: Final = frozenset({"resultType", "ttlMs", "cacheScope"})
#: Client requests the 2026-07-28 revision removed: a server answers them ``-32601``
#: Method not found in that era (the log level travels in each request's ``_meta``).
LEGACY_ONLY_METHODS: Final = frozenset({"ping", "logging/setLevel"})


def client_era(message: JSONObject) -> Era | None:
    """The era a client message speaks, when it says (``None``: it does not)."""
    method = message.get("method")
    if method == "initialize":
        return "legacy"
    if method == "server/discover":
        return "modern"
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and meta.get(VERSION_META) == MODERN_VERSION:
        return "modern"
    return None


#: What ``cassette record --era`` accepts: ``auto`` lets the client choose.
ERA_CHOICES: Final = ("auto", "legacy", "modern")


def era_refusal(era: str, message: object) -> JSONObject | None:
    """How a server of only ``era`` answers a client request that belongs to the other era
    (``None``: forward it). ``cassette record --era`` answers with it in the server's place,
    so a dual-era client settles in the era a later client of the cassette needs: under
    ``legacy`` the ``server/discover`` probe gets ``-32601`` Method not found, as from a
    legacy server, and the client falls back to ``initialize``; under ``modern`` an
    ``initialize`` gets ``-32022`` naming the 2026-07-28 revision."""
    if not isinstance(message, dict) or "id" not in message:
        return None
    method = message.get("method")
    if era == "legacy" and method == "server/discover":
        return error_response(message["id"], METHOD_NOT_FOUND, "Method not found")
    if era == "modern" and method == "initialize":
        params = message.get("params")
        requested = params.get("protocolVersion") if isinstance(params, dict) else None
        hint = "this recording is 2026-07-28 only (cassette record --era modern)"
        return unsupported_version(message["id"], requested, [MODERN_VERSION], hint)
    return None


def legacy_versions(discover: JSONObject) -> list[str]:
    """The legacy revisions a recorded ``server/discover`` result lists, newest first."""
    listed = discover.get("supportedVersions")
    if not isinstance(listed, list):
        return []
    return sorted((v for v in listed if v in LEGACY_VERSIONS), reverse=True)


def granted_version(asked: object, recorded: str, supported: Iterable[str] = ()) -> str:
    """The legacy revision a server that answered ``recorded`` gives a client asking for
    ``asked``, as the SDK servers negotiate (the Python SDK's server grants any revision in
    its ``SUPPORTED_PROTOCOL_VERSIONS``, every legacy one from 2024-11-05 on, and answers its
    own otherwise): an older legacy revision is granted, a newer or unknown one gets the
    recorded revision. ``supported``, when the recording lists what the server supports (a
    ``server/discover``), narrows what may be granted to that list."""
    listed = frozenset(supported)
    if (
        isinstance(asked, str)
        and asked in LEGACY_VERSIONS
        and recorded in LEGACY_VERSIONS
        and asked < recorded  # legacy revisions are dates: they sort as they were released
        and (not listed or asked in listed)
    ):
        return asked
    return recorded


def initialize_from_discover(discover: JSONObject, requested: object) -> JSONObject | None:
    """The ``initialize`` result the recorded server would have given a legacy client, from
    its ``server/discover`` result; ``None`` when it lists no legacy revision."""
    versions = legacy_versions(discover)
    if not versions:
        return None
    version = requested if requested in versions else versions[0]
    result: JSONObject = {"protocolVersion": version}
    capabilities = discover.get("capabilities")
    result["capabilities"] = capabilities if isinstance(capabilities, dict) else {}
    meta = discover.get("_meta")
    info = meta.get(META_PREFIX + "serverInfo") if isinstance(meta, dict) else None
    if not isinstance(info, dict):
        info = discover.get("serverInfo")
    result["serverInfo"] = info if isinstance(info, dict) else {"name": "", "version": ""}
    if isinstance(discover.get("instructions"), str):
        result["instructions"] = discover["instructions"]
    return result


def legacy_shape(message: Any) -> Any:
    """A recorded 2026-07-28 message as a legacy client expects it: without the members
    only that revision has (see the module docstring). Other values pass unchanged."""
    if not isinstance(message, dict):
        return message
    result = message.get("result")
    if isinstance(result, dict):
        return {**message, "result": _without_modern(result)}
    params = message.get("params")
    if "method" in message and isinstance(params, dict) and isinstance(params.get("_meta"), dict):
        return {**message, "params": _without_modern(params)}
    return message


def legacy_status(status: int | None) -> int | None:
    """The HTTP status a legacy session answers a recorded 2026-07-28 response with. A
    2026-07-28 server mirrors a JSON-RPC error in the status (404 for Method not found, 400
    for invalid parameters); a legacy server sends a JSON-RPC response at 200 whatever it
    says, and a legacy client takes a 404 for the end of its session."""
    return 200 if status is not None and status >= 400 else status


def _without_modern(value: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in value.items() if k not in MODERN_ONLY_MEMBERS}
    meta = out.get("_meta")
    if isinstance(meta, dict):
        kept = {k: v for k, v in meta.items() if not k.startswith(META_PREFIX)}
        if kept:
            out["_meta"] = kept
        else:
            del out["_meta"]
    return out


def unsupported_version(
    msg_id: object, requested: object, supported: list[str], hint: str
) -> JSONObject:
    """The ``-32022`` UnsupportedProtocolVersion error, with the hint a person needs."""
    data = {"supported": supported, "requested": requested}
    return error_response(
        msg_id, UNSUPPORTED_VERSION, f"Unsupported protocol version: {hint}", data
    )


def is_input_required(message: Any) -> bool:
    """Whether a recorded response asks the client for input (2026-07-28 only)."""
    result = message.get("result") if isinstance(message, dict) else None
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def input_requests(message: Any) -> list[tuple[str, JSONObject]]:
    """The server requests a recorded ``input_required`` response stands for, as (key in
    ``inputRequests``, request without an id); empty when it holds none."""
    result = message.get("result") if isinstance(message, dict) else None
    asked = result.get("inputRequests") if isinstance(result, dict) else None
    if not isinstance(asked, dict):
        return []
    out: list[tuple[str, JSONObject]] = []
    for key, request in asked.items():
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            return []
        params = request.get("params")
        sent: JSONObject = {"jsonrpc": "2.0", "method": request["method"]}
        if isinstance(params, dict):
            sent["params"] = params
        out.append((str(key), sent))
    return out


#: the server requests that ask a client for what a capability declares
ASKS: Final = {
    "roots/list": "roots",
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
}


def capabilities_asked(message: JSONObject, *, request: bool) -> frozenset[str]:
    """The client capabilities a recorded server message asks for: as a server request
    of ``ASKS`` (``request``), or, as its answer to the client, through an
    ``input_required`` result's ``inputRequests`` (2026-07-28). The replay's capability
    warning and the banner both judge a recording by it, so they say the same."""
    if request:
        found = ASKS.get(str(message.get("method")))
        return frozenset() if found is None else frozenset((found,))
    return frozenset(ASKS[r["method"]] for _, r in input_requests(message) if r["method"] in ASKS)


def recorded_handshake(events: Iterable[object]) -> JSONObject | None:
    """The recorded server's own account of itself: the result of the first successful
    ``initialize`` (legacy) or ``server/discover`` (2026-07-28) in ``events``."""
    asked: set[object] = set()
    for event in events:
        message = getattr(event, "message", None)
        if not isinstance(message, dict):
            continue
        direction = getattr(event, "dir", None)
        if direction == "c2s" and message.get("method") in ("initialize", "server/discover"):
            asked.add(repr(message.get("id")))
        elif direction == "s2c" and "method" not in message and repr(message.get("id")) in asked:
            result = message.get("result")
            if isinstance(result, dict):
                return result
    return None


def served_clients(era: Era, handshake: JSONObject | None, *, probed: bool = False) -> str:
    """Which clients a cassette serves, for the banner and ``show`` (see the table above);
    ``probed``: the recorder's legacy ``initialize`` probe was answered
    (``cassette.runtime.probe``)."""
    if era == "legacy":
        return "serves legacy clients, and dual-era ones (they fall back to initialize)"
    if probed:
        return "serves 2026-07-28 and legacy clients (the server answered a legacy probe)"
    if handshake is not None and legacy_versions(handshake):
        return "serves 2026-07-28 and legacy clients"
    return (
        "serves 2026-07-28 and dual-era clients; legacy-only clients need --era legacy "
        "(or cassette variant TAPE --as legacy)"
    )
