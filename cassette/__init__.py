"""cassette-mcp: record real MCP sessions once, replay them as a server forever.

The public API. Everything here is importable from ``cassette`` directly. The other public
modules are ``cassette.transport`` (the plugin contract), ``cassette.errors``,
``cassette.registry``, ``cassette.testing``, ``cassette.client``, ``cassette.mock``,
``cassette.tools.*``, ``cassette.adapters.mcp_sdk`` and ``cassette.pytest_plugin``; every
other module (``cassette.core``, ``cassette.runtime``, ``cassette.modes``, ``cassette.store``,
``cassette.transports``) is internal and may move, and what they define that a user needs
is exported here, reporting ``cassette`` as its ``__module__``. The sans-IO core
(``Recorder``, ``Replayer``, ``FingerprintMatcher``) takes values and returns values;
``serve`` puts it on any transport (``serve_replay`` for a cassette), ``record`` records
through a transparent proxy, ``open_recording`` and ``open_replay`` do both in-process.

Names are imported on first use (PEP 562), so ``python -m cassette replay`` pays only for
the modules a replay needs: start-up time is part of what a replay costs a test suite.
"""

from __future__ import annotations

from cassette._lazy import lazy_exports
from cassette._version import __version__

#: ``typing.TYPE_CHECKING``, without importing ``typing`` (and ``re`` and ``enum`` with it)
#: before a plain recording's server is spawned (``cassette.transports.stdio._early``): type
#: checkers treat the name as true wherever it comes from
TYPE_CHECKING = False
if TYPE_CHECKING:
    from cassette.core.recording.recorder import Recorder
    from cassette.core.redaction.redactor import Redactor
    from cassette.core.replay.faults import FaultPlan, FaultRule
    from cassette.core.replay.matching import (
        STRATEGIES,
        Candidate,
        FingerprintMatcher,
        Matcher,
        Strategy,
    )
    from cassette.core.replay.misses import MissReport
    from cassette.core.replay.pacing import Pacing
    from cassette.core.replay.replayer import Replayer
    from cassette.core.replay.sessions import ReplayPool, Responder, ResponderPool
    from cassette.core.wire.model import (
        FORMAT_VERSION,
        Event,
        ExitEvent,
        Header,
        HttpEvent,
        MessageEvent,
        RawEvent,
        StderrEvent,
    )
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
        ManifestError,
        NotRecordedError,
        PluginError,
        PluginLoadError,
        ReplayMiss,
        ScenarioError,
        TransportClosedError,
        TransportError,
        UnknownTransportError,
        UsageError,
    )
    from cassette.modes.policy import ModeChoice
    from cassette.modes.runner import ModeOptions, ModeResult, run_mode, run_stdio
    from cassette.registry import available, get_transport, load_transport
    from cassette.runtime.conversation import DeliveryPolicy, ReplayResult
    from cassette.runtime.harness import ClientConnection, open_recording, open_replay
    from cassette.runtime.record import (
        RecordConfig,
        RecordResult,
        record,
        record_http,
        record_proxy,
        record_session,
    )
    from cassette.runtime.replay_pool import ReplayOptions, replay_pool
    from cassette.runtime.serve import (
        replay,
        replay_sessions,
        serve,
        serve_replay,
    )
    from cassette.store.faults import load_fault_plan
    from cassette.store.storage import Cassette, CassetteWriter
    from cassette.transport import (
        CassetteFront,
        ConnectOptions,
        Frame,
        FrameServer,
        FrameStream,
        RecordingFront,
        RecordOptions,
        Reply,
        ServedSession,
        ServeOptions,
        SessionPool,
        Tap,
        Target,
        Transport,
        Upstream,
        UpstreamConnector,
        map_exceptions,
    )
    from cassette.transports.http.sse import SseReplayApp
    from cassette.transports.http.streamable_http import HttpReplayApp

_LAZY: dict[str, str] = {
    "AlreadyPlayedError": "cassette.errors",
    "Candidate": "cassette.core.replay.matching",
    "Cassette": "cassette.store.storage",
    "CassetteError": "cassette.errors",
    "CassetteExistsError": "cassette.errors",
    "CassetteFormatError": "cassette.errors",
    "CassetteFront": "cassette.transport",
    "CassetteNotFoundError": "cassette.errors",
    "CassetteVersionError": "cassette.errors",
    "CassetteWriter": "cassette.store.storage",
    "ClientConnection": "cassette.runtime.harness",
    "ConnectOptions": "cassette.transport",
    "DeliveryPolicy": "cassette.runtime.conversation",
    "DuplicateTransportError": "cassette.errors",
    "EraError": "cassette.errors",
    "Event": "cassette.core.wire.model",
    "ExitEvent": "cassette.core.wire.model",
    "FORMAT_VERSION": "cassette.core.wire.model",
    "FaultExit": "cassette.errors",
    "FaultPlan": "cassette.core.replay.faults",
    "FaultRule": "cassette.core.replay.faults",
    "FingerprintMatcher": "cassette.core.replay.matching",
    "Frame": "cassette.transport",
    "FrameServer": "cassette.transport",
    "FrameStream": "cassette.transport",
    "Header": "cassette.core.wire.model",
    "HttpEvent": "cassette.core.wire.model",
    "HttpReplayApp": "cassette.transports.http.streamable_http",
    "ManifestError": "cassette.errors",
    "Matcher": "cassette.core.replay.matching",
    "MessageEvent": "cassette.core.wire.model",
    "MissReport": "cassette.core.replay.misses",
    "ModeChoice": "cassette.modes.policy",
    "ModeOptions": "cassette.modes.runner",
    "ModeResult": "cassette.modes.runner",
    "NotRecordedError": "cassette.errors",
    "Pacing": "cassette.core.replay.pacing",
    "PluginError": "cassette.errors",
    "PluginLoadError": "cassette.errors",
    "RawEvent": "cassette.core.wire.model",
    "RecordConfig": "cassette.runtime.record",
    "RecordOptions": "cassette.transport",
    "RecordResult": "cassette.runtime.record",
    "Recorder": "cassette.core.recording.recorder",
    "Redactor": "cassette.core.redaction.redactor",
    "RecordingFront": "cassette.transport",
    "ReplayMiss": "cassette.errors",
    "ReplayOptions": "cassette.runtime.replay_pool",
    "ReplayResult": "cassette.runtime.conversation",
    "ReplayPool": "cassette.core.replay.sessions",
    "Replayer": "cassette.core.replay.replayer",
    "Reply": "cassette.transport",
    "Responder": "cassette.core.replay.sessions",
    "ResponderPool": "cassette.core.replay.sessions",
    "STRATEGIES": "cassette.core.replay.matching",
    "ScenarioError": "cassette.errors",
    "ServeOptions": "cassette.transport",
    "ServedSession": "cassette.transport",
    "SessionPool": "cassette.transport",
    "SseReplayApp": "cassette.transports.http.sse",
    "StderrEvent": "cassette.core.wire.model",
    "Strategy": "cassette.core.replay.matching",
    "Tap": "cassette.transport",
    "Target": "cassette.transport",
    "Transport": "cassette.transport",
    "TransportClosedError": "cassette.errors",
    "TransportError": "cassette.errors",
    "UnknownTransportError": "cassette.errors",
    "Upstream": "cassette.transport",
    "UpstreamConnector": "cassette.transport",
    "UsageError": "cassette.errors",
    "available": "cassette.registry",
    "get_transport": "cassette.registry",
    "load_fault_plan": "cassette.store.faults",
    "load_transport": "cassette.registry",
    "map_exceptions": "cassette.transport",
    "open_recording": "cassette.runtime.harness",
    "open_replay": "cassette.runtime.harness",
    "record": "cassette.runtime.record",
    "record_http": "cassette.runtime.record",
    "record_proxy": "cassette.runtime.record",
    "record_session": "cassette.runtime.record",
    "replay": "cassette.runtime.serve",
    "replay_pool": "cassette.runtime.replay_pool",
    "replay_sessions": "cassette.runtime.serve",
    "run_mode": "cassette.modes.runner",
    "run_stdio": "cassette.modes.runner",
    "serve": "cassette.runtime.serve",
    "serve_replay": "cassette.runtime.serve",
}


__all__ = [
    "FORMAT_VERSION",
    "STRATEGIES",
    "AlreadyPlayedError",
    "Candidate",
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
    "HttpReplayApp",
    "ManifestError",
    "Matcher",
    "MessageEvent",
    "MissReport",
    "ModeChoice",
    "ModeOptions",
    "ModeResult",
    "NotRecordedError",
    "Pacing",
    "PluginError",
    "PluginLoadError",
    "RawEvent",
    "RecordConfig",
    "RecordOptions",
    "RecordResult",
    "Recorder",
    "RecordingFront",
    "Redactor",
    "ReplayMiss",
    "ReplayOptions",
    "ReplayPool",
    "ReplayResult",
    "Replayer",
    "Reply",
    "Responder",
    "ResponderPool",
    "ScenarioError",
    "ServeOptions",
    "ServedSession",
    "SessionPool",
    "SseReplayApp",
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
    "load_fault_plan",
    "load_transport",
    "map_exceptions",
    "open_recording",
    "open_replay",
    "record",
    "record_http",
    "record_proxy",
    "record_session",
    "replay",
    "replay_pool",
    "replay_sessions",
    "run_mode",
    "run_stdio",
    "serve",
    "serve_replay",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
