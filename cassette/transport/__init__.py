"""The public contract between cassette-mcp and a transport plugin.

Three modules, by who reads them:

* ``cassette.transport.plugin``: what a plugin implements (frames, options, streams, the
  capabilities a transport declares); a plugin author reads it alone;
* ``cassette.transport.serving``: what the runtime hands a network front (the
  ``SessionPool`` and its ``ServedSession``), and the ``CassetteFront`` that takes it;
* ``cassette.transport.speed``: the optional speed-ups a stream may offer (``Drainable``,
  ``Eager``, ``Pushing``, ``Stoppable``), each with its reason.

This package exports all of them, as it always has: ``from cassette.transport import
Frame, ServeOptions`` is how a plugin imports the contract. The serving and speed-up
names are imported on first use, so a plugin that only moves frames loads
``cassette.transport.plugin`` alone. docs/transports.md is the full contract;
``cassette.testing.check_transport`` checks a plugin against it, and
``cassette.registry.register`` puts a plugin in the registry for a test without installing
it. The words (session, front, frame, ...) are defined in docs/architecture.md's glossary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cassette._origins import DEFAULT_HOST, normalize_origin
from cassette.core.replay.reply import Reply
from cassette.errors import TransportClosedError, TransportError, map_exceptions
from cassette.transport.plugin import (
    ConnectOptions,
    Frame,
    FrameServer,
    FrameStream,
    Handler,
    Ready,
    RecordingFront,
    SecretTap,
    ServeOptions,
    Tap,
    Transport,
    Upstream,
    UpstreamConnector,
)

if TYPE_CHECKING:
    from cassette._record_options import RecordOptions
    from cassette._upstream import Exited, SideEvent, SideEventHandler, StderrLine, Target
    from cassette.core.wire.classified import Classified
    from cassette.core.wire.jsonrpc import RawFrame, dumps_bytes
    from cassette.core.wire.model import Recording
    from cassette.transport.serving import (
        CassetteFront,
        Emit,
        Outgoing,
        ServedSession,
        SessionPool,
    )
    from cassette.transport.speed import DRAIN_DEADLINE, Drainable, Eager, Pushing, Stoppable

__all__ = [
    "DEFAULT_HOST",
    "DRAIN_DEADLINE",
    "CassetteFront",
    "Classified",
    "ConnectOptions",
    "Drainable",
    "Eager",
    "Emit",
    "Exited",
    "Frame",
    "FrameServer",
    "FrameStream",
    "Handler",
    "Outgoing",
    "Pushing",
    "RawFrame",
    "Ready",
    "RecordOptions",
    "Recording",
    "RecordingFront",
    "Reply",
    "SecretTap",
    "ServeOptions",
    "ServedSession",
    "SessionPool",
    "SideEvent",
    "SideEventHandler",
    "StderrLine",
    "Stoppable",
    "Tap",
    "Target",
    "Transport",
    "TransportClosedError",
    "TransportError",
    "Upstream",
    "UpstreamConnector",
    "dumps_bytes",
    "map_exceptions",
    "normalize_origin",
]

# ``RecordOptions`` and the values of reaching a live server (``Target``, its side events)
# are built on first use (a replay never records), ``Recording`` too (the model's module is
# not needed to write a plugin's streams), and the serving and speed-up Protocols (a plugin
# that only moves frames never needs them).
if not TYPE_CHECKING:
    from cassette._lazy import lazy_exports, publish

    # defined inside, exported here; Reply's annotations name types imported for type
    # checking only, so there is nothing to resolve (and this runs on a replay's start-up)
    publish(Reply, __name__, resolve=False)
    publish(normalize_origin, __name__)

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "Classified": "cassette.core.wire.classified",
            **dict.fromkeys(("RawFrame", "dumps_bytes"), "cassette.core.wire.jsonrpc"),
            **dict.fromkeys(
                ("Exited", "SideEvent", "SideEventHandler", "StderrLine", "Target"),
                "cassette._upstream",
            ),
            "RecordOptions": "cassette._record_options",
            "Recording": "cassette.core.wire.model",
            **dict.fromkeys(
                ("CassetteFront", "Emit", "Outgoing", "ServedSession", "SessionPool"),
                "cassette.transport.serving",
            ),
            **dict.fromkeys(
                ("DRAIN_DEADLINE", "Drainable", "Eager", "Pushing", "Stoppable"),
                "cassette.transport.speed",
            ),
        },
        [*globals(), *__all__],
    )
