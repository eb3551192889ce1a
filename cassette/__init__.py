"""cassette-mcp: record real MCP sessions once, replay them as a server forever.

The public API. Everything here is importable from ``cassette`` directly; submodules are
implementation detail unless their docstring says otherwise. The sans-IO core
(``Recorder``, ``Replayer``, ``FingerprintMatcher``) takes values and returns values;
``serve`` puts it on any transport (``serve_replay`` for a cassette), ``record`` records
through a transparent proxy, ``open_recording`` and ``open_replay`` do both in-process.

Names are imported on first use (PEP 562), so ``python -m cassette replay`` pays only for
the modules a replay needs: start-up time is part of what a replay costs a test suite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cassette._lazy import lazy_exports
from cassette._version import __version__

if TYPE_CHECKING:
    from cassette.core.faults import FaultPlan, FaultRule
    from cassette.core.matching import STRATEGIES, FingerprintMatcher, Matcher, MissReport, Strategy
    from cassette.core.model import (
        FORMAT_VERSION,
        Event,
        ExitEvent,
        Header,
        HttpEvent,
        MessageEvent,
        RawEvent,
        StderrEvent,
    )
    from cassette.core.recorder import Recorder
    from cassette.core.replayer import Replayer
    from cassette.core.reply import Reply
    from cassette.errors import (
        AlreadyPlayedError,
        CassetteError,
        CassetteExistsError,
        CassetteFormatError,
        CassetteNotFoundError,
        CassetteVersionError,
        DuplicateTransportError,
        EraError,
        FaultExit,
        NotRecordedError,
        PluginError,
        PluginLoadError,
        ReplayMiss,
        TransportClosedError,
        TransportError,
        UnknownTransportError,
        UsageError,
    )
    from cassette.registry import available, get_transport, load_transport
    from cassette.runtime.conversation import DeliveryPolicy, ReplayResult
    from cassette.runtime.harness import ClientConnection, open_recording, open_replay
    from cassette.runtime.record import RecordResult, record
    from cassette.runtime.serve import replay, serve, serve_replay
    from cassette.store.storage import Cassette, CassetteWriter
    from cassette.transport import (
        CassetteFront,
        ConnectOptions,
        Frame,
        FrameServer,
        FrameStream,
        RecordingFront,
        RecordOptions,
        ServeOptions,
        Tap,
        Target,
        Transport,
        Upstream,
        UpstreamConnector,
    )

_LAZY: dict[str, str] = {
    "AlreadyPlayedError": "cassette.errors",
    "Cassette": "cassette.store.storage",
    "CassetteError": "cassette.errors",
    "CassetteExistsError": "cassette.errors",
    "CassetteFormatError": "cassette.errors",
    "CassetteNotFoundError": "cassette.errors",
    "CassetteVersionError": "cassette.errors",
    "CassetteWriter": "cassette.store.storage",
    "ClientConnection": "cassette.runtime.harness",
    "DuplicateTransportError": "cassette.errors",
    "EraError": "cassette.errors",
    "Event": "cassette.core.model",
    "ExitEvent": "cassette.core.model",
    "FORMAT_VERSION": "cassette.core.model",
    "FaultExit": "cassette.errors",
    "FaultPlan": "cassette.core.faults",
    "FaultRule": "cassette.core.faults",
    "FingerprintMatcher": "cassette.core.matching",
    "Frame": "cassette.transport",
    "FrameStream": "cassette.transport",
    "Header": "cassette.core.model",
    "HttpEvent": "cassette.core.model",
    "Matcher": "cassette.core.matching",
    "MessageEvent": "cassette.core.model",
    "MissReport": "cassette.core.matching",
    "NotRecordedError": "cassette.errors",
    "PluginError": "cassette.errors",
    "PluginLoadError": "cassette.errors",
    "RawEvent": "cassette.core.model",
    "RecordResult": "cassette.runtime.record",
    "Recorder": "cassette.core.recorder",
    "ReplayMiss": "cassette.errors",
    "ReplayResult": "cassette.runtime.conversation",
    "Replayer": "cassette.core.replayer",
    "Reply": "cassette.core.reply",
    "STRATEGIES": "cassette.core.matching",
    "StderrEvent": "cassette.core.model",
    "Strategy": "cassette.core.matching",
    "Target": "cassette.transport",
    "Tap": "cassette.transport",
    "Transport": "cassette.transport",
    "CassetteFront": "cassette.transport",
    "RecordingFront": "cassette.transport",
    "TransportClosedError": "cassette.errors",
    "TransportError": "cassette.errors",
    "UnknownTransportError": "cassette.errors",
    "Upstream": "cassette.transport",
    "UsageError": "cassette.errors",
    "available": "cassette.registry",
    "get_transport": "cassette.registry",
    "load_transport": "cassette.registry",
    "open_recording": "cassette.runtime.harness",
    "open_replay": "cassette.runtime.harness",
    "record": "cassette.runtime.record",
    "replay": "cassette.runtime.serve",
    "serve_replay": "cassette.runtime.serve",
    "serve": "cassette.runtime.serve",
    "DeliveryPolicy": "cassette.runtime.conversation",
    "ConnectOptions": "cassette.transport",
    "ServeOptions": "cassette.transport",
    "RecordOptions": "cassette.transport",
    "FrameServer": "cassette.transport",
    "UpstreamConnector": "cassette.transport",
}


__all__ = [
    "FORMAT_VERSION",
    "STRATEGIES",
    "AlreadyPlayedError",
    "Cassette",
    "CassetteError",
    "CassetteExistsError",
    "CassetteFormatError",
    "CassetteFront",
    "CassetteNotFoundError",
    "CassetteVersionError",
    "CassetteWriter",
    "ClientConnection",
    "ConnectOptions",
    "DeliveryPolicy",
    "DuplicateTransportError",
    "EraError",
    "Event",
    "ExitEvent",
    "FaultExit",
    "FaultPlan",
    "FaultRule",
    "FingerprintMatcher",
    "Frame",
    "FrameServer",
    "FrameStream",
    "Header",
    "HttpEvent",
    "Matcher",
    "MessageEvent",
    "MissReport",
    "NotRecordedError",
    "PluginError",
    "PluginLoadError",
    "RawEvent",
    "RecordOptions",
    "RecordResult",
    "Recorder",
    "RecordingFront",
    "ReplayMiss",
    "ReplayResult",
    "Replayer",
    "Reply",
    "ServeOptions",
    "StderrEvent",
    "Strategy",
    "Tap",
    "Target",
    "Transport",
    "TransportClosedError",
    "TransportError",
    "UnknownTransportError",
    "Upstream",
    "UpstreamConnector",
    "UsageError",
    "__version__",
    "available",
    "get_transport",
    "load_transport",
    "open_recording",
    "open_replay",
    "record",
    "replay",
    "serve",
    "serve_replay",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
