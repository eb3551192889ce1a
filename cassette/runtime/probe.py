"""A handshake-only probe: does the recorded server also accept legacy clients?

A session recorded in the 2026-07-28 era shows what its server answered a modern client.
Whether it would also have accepted a legacy client's ``initialize`` the recording cannot
tell: fastmcp 4 and the Python SDK 2.3 servers accept it yet list only ``2026-07-28`` in
``server/discover``. Guessing either way is wrong for some server, so the recorder asks:
as soon as the recorded session has shown its era, it reaches the same target once more
(a second, short-lived server process over stdio; one POST, then the session's DELETE,
over HTTP), sends a legacy ``initialize``, and closes. The request and its answer are
appended to the cassette as a variant session named ``legacy-probe``
(``cassette.core.variants``), through the recorder, so they pass the same redaction gate
as every other byte. A replay answers a legacy client's ``initialize`` from it and the rest
from the modern session, translated by the cross-era rules (``cassette.core.negotiation``).

During the session, beside it (``cassette.runtime.record``), not after it: clients end
the recorder soon after closing their side (the Python SDK's stdio client kills it a few
seconds later), before a slow server's second start could answer. It runs only when the
era it is for was recorded, is bounded (``PROBE_BOUND``) and quiet: a server that refuses,
does not answer, or allows one instance only, leaves the cassette as it was, and the
replay goes on refusing legacy clients as before. ``--no-probe`` turns it off.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Final

import anyio

from cassette._version import __version__
from cassette.core.mcp import LATEST_LEGACY
from cassette.core.variants import PROBE_VARIANT
from cassette.errors import sole_exception
from cassette.runtime.sink import Sink
from cassette.transport import ConnectOptions, Frame, Target, UpstreamConnector

__all__ = ["PROBE_BOUND", "PROBE_ID", "probe_legacy", "record_probe"]

#: Seconds the whole probe may take: a server start, one answer, its ending.
PROBE_BOUND: Final = 10.0
#: The probe's request id: no client's, so nothing in the cassette answers it by chance.
PROBE_ID: Final = "cassette-legacy-probe"


def probe_request() -> bytes:
    """The legacy ``initialize`` a probe sends: the newest legacy revision, no capability
    (what the answer shows is then what the server gives any legacy client)."""
    params = {
        "protocolVersion": LATEST_LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "cassette-probe", "version": __version__},
    }
    message = {"jsonrpc": "2.0", "id": PROBE_ID, "method": "initialize", "params": params}
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"  # a stdio line


async def probe_legacy(
    plugin: UpstreamConnector, target: Target, bound: float = PROBE_BOUND
) -> tuple[bytes, bytes] | None:
    """The probe's request and the server's answer to it, as carried; ``None`` when the
    server could not be reached or did not answer within ``bound`` seconds."""
    request = probe_request()
    with anyio.move_on_after(bound):
        try:
            async with plugin.connect(target, ConnectOptions(timeout=bound)) as upstream:
                await upstream.send(Frame(request))
                while True:
                    frame = await upstream.receive()
                    if _answers(frame.data):
                        await upstream.send_eof()
                        return request, frame.data
        except Exception:  # a probe that fails proves nothing: the cassette stays as it was
            return None
    return None


def _answers(data: bytes) -> bool:
    """Whether ``data`` is the answer to the probe (the server may log or notify first)."""
    try:
        message = json.loads(data)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("id") == PROBE_ID


async def record_probe(sink: Sink, plugin: UpstreamConnector, target: Target) -> bool:
    """Probe ``target`` when the session ``sink`` recorded is a 2026-07-28 one, and append
    what the server answered as the ``legacy-probe`` variant; whether one was appended.
    Only a successful ``initialize`` result is kept: a refusal proves what the replay
    already answers."""
    header = sink.recorder.header
    if header is None or header.era != "modern" or sink.writer.closed:
        return False
    if sink.recorder.probed:  # the client's own connection test already asked (mcp-remote)
        return False
    found = await probe_legacy(plugin, target)
    if found is None or not _succeeded(found[1]):
        return False
    meta = {"variant": PROBE_VARIANT}
    sink.put(sink.recorder.observe("c2s", found[0], sink.clock(), meta))
    sink.put(sink.recorder.observe("s2c", found[1], sink.clock(), meta))
    return True


def _succeeded(data: bytes) -> bool:
    try:
        message = json.loads(data)
    except ValueError:
        return False
    return isinstance(message, dict) and isinstance(message.get("result"), dict)


async def probing_beside(
    sink: Sink, plugin: UpstreamConnector, target: Target, session: Awaitable[None]
) -> None:
    """Run ``session`` and, beside it, the legacy probe (``cassette.runtime.probe``) as
    soon as the cassette's header is out (the era it decides is what the probe is for).

    During the session, not after it: a client that closes its side and soon ends the
    recorder (the Python SDK's stdio client kills it a few seconds after closing stdin)
    would otherwise end it before a slow server's second start had answered, and the
    cassette would lose the probe. Once started, the probe is finished (within its bound)
    even when the session ends or the recording is stopped meanwhile."""
    known = anyio.Event()
    sink.on_header = known.set

    async def probe() -> None:
        await known.wait()
        with anyio.CancelScope(shield=True):
            await record_probe(sink, plugin, target)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(probe)
            await session
            if not known.is_set():  # no era decided: nothing to probe for
                tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        inner = sole_exception(group)  # the session's own error, as it raised it
        if inner is group:
            raise
        inner.__suppress_context__ = True
        raise inner from inner.__cause__
