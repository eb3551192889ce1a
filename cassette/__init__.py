"""cassette-mcp: record real MCP sessions once, replay them as a server forever.

The public API. Everything here is importable from ``cassette`` directly; submodules are
implementation detail unless their docstring says otherwise. The sans-IO core
(``Recorder``, ``Replayer``, ``FingerprintMatcher``) takes values and returns values;
``record``, ``serve_replay``, ``open_recording`` and ``open_replay`` run it on transports.

Names are imported on first use (PEP 562), so ``python -m cassette replay`` pays only for
the modules a replay needs: start-up time is part of what a replay costs a test suite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cassette._lazy import lazy_exports
from cassette._version import __version__

if TYPE_CHECKING:
    from cassette.errors import (
        AlreadyPlayedError,
        CassetteError,
        CassetteExistsError,
        CassetteFormatError,
        CassetteNotFoundError,
        CassetteVersionError,
        DuplicateTransportError,
        EraError,
        NotRecordedError,
        PluginError,
        PluginLoadError,
        ReplayMiss,
        TransportClosedError,
        TransportError,
        UnknownTransportError,
        UsageError,
    )
    from cassette.matching import STRATEGIES, FingerprintMatcher, Matcher, MissReport, Strategy
    from cassette.model import (
        FORMAT_VERSION,
        Event,
        ExitEvent,
        Header,
        HttpEvent,
        MessageEvent,
        RawEvent,
        StderrEvent,
    )
    from cassette.recorder import Recorder
    from cassette.registry import available, get_transport, load_transport
    from cassette.replayer import Replayer, Reply
    from cassette.session import (
        ClientConnection,
        RecordResult,
        ReplayResult,
        open_recording,
        open_replay,
        record,
        replay,
        serve_replay,
    )
    from cassette.storage import Cassette, CassetteWriter
    from cassette.transport import (
        CassetteFront,
        Frame,
        FrameStream,
        RecordingFront,
        Tap,
        Target,
        Transport,
        Upstream,
    )

_LAZY: dict[str, str] = {
    "AlreadyPlayedError": "cassette.errors",
    "Cassette": "cassette.storage",
    "CassetteError": "cassette.errors",
    "CassetteExistsError": "cassette.errors",
    "CassetteFormatError": "cassette.errors",
    "CassetteNotFoundError": "cassette.errors",
    "CassetteVersionError": "cassette.errors",
    "CassetteWriter": "cassette.storage",
    "ClientConnection": "cassette.session",
    "DuplicateTransportError": "cassette.errors",
    "EraError": "cassette.errors",
    "Event": "cassette.model",
    "ExitEvent": "cassette.model",
    "FORMAT_VERSION": "cassette.model",
    "FingerprintMatcher": "cassette.matching",
    "Frame": "cassette.transport",
    "FrameStream": "cassette.transport",
    "Header": "cassette.model",
    "HttpEvent": "cassette.model",
    "Matcher": "cassette.matching",
    "MessageEvent": "cassette.model",
    "MissReport": "cassette.matching",
    "NotRecordedError": "cassette.errors",
    "PluginError": "cassette.errors",
    "PluginLoadError": "cassette.errors",
    "RawEvent": "cassette.model",
    "RecordResult": "cassette.session",
    "Recorder": "cassette.recorder",
    "ReplayMiss": "cassette.errors",
    "ReplayResult": "cassette.session",
    "Replayer": "cassette.replayer",
    "Reply": "cassette.replayer",
    "STRATEGIES": "cassette.matching",
    "StderrEvent": "cassette.model",
    "Strategy": "cassette.matching",
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
    "open_recording": "cassette.session",
    "open_replay": "cassette.session",
    "record": "cassette.session",
    "replay": "cassette.session",
    "serve_replay": "cassette.session",
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
    "DuplicateTransportError",
    "EraError",
    "Event",
    "ExitEvent",
    "FingerprintMatcher",
    "Frame",
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
    "RecordResult",
    "Recorder",
    "RecordingFront",
    "ReplayMiss",
    "ReplayResult",
    "Replayer",
    "Reply",
    "StderrEvent",
    "Strategy",
    "Tap",
    "Target",
    "Transport",
    "TransportClosedError",
    "TransportError",
    "UnknownTransportError",
    "Upstream",
    "UsageError",
    "__version__",
    "available",
    "get_transport",
    "load_transport",
    "open_recording",
    "open_replay",
    "record",
    "replay",
    "serve_replay",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
