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
    from cassette.core.replayer import Replayer, Reply
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
    from cassette.registry import available, get_transport, load_transport
    from cassette.runtime.session import (
        ClientConnection,
        RecordResult,
        ReplayResult,
        open_recording,
        open_replay,
        record,
        replay,
        serve_replay,
    )
    from cassette.store.storage import Cassette, CassetteWriter
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
    "Cassette": "cassette.store.storage",
    "CassetteError": "cassette.errors",
    "CassetteExistsError": "cassette.errors",
    "CassetteFormatError": "cassette.errors",
    "CassetteNotFoundError": "cassette.errors",
    "CassetteVersionError": "cassette.errors",
    "CassetteWriter": "cassette.store.storage",
    "ClientConnection": "cassette.runtime.session",
    "DuplicateTransportError": "cassette.errors",
    "EraError": "cassette.errors",
    "Event": "cassette.core.model",
    "ExitEvent": "cassette.core.model",
    "FORMAT_VERSION": "cassette.core.model",
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
    "RecordResult": "cassette.runtime.session",
    "Recorder": "cassette.core.recorder",
    "ReplayMiss": "cassette.errors",
    "ReplayResult": "cassette.runtime.session",
    "Replayer": "cassette.core.replayer",
    "Reply": "cassette.core.replayer",
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
    "open_recording": "cassette.runtime.session",
    "open_replay": "cassette.runtime.session",
    "record": "cassette.runtime.session",
    "replay": "cassette.runtime.session",
    "serve_replay": "cassette.runtime.session",
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
