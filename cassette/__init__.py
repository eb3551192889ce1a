"""cassette-mcp: record real MCP sessions once, replay them as a server forever.

The public API. Everything here is importable from ``cassette`` directly; submodules are
implementation detail unless their docstring says otherwise. The sans-IO core
(``Recorder``, ``Replayer``, ``FingerprintMatcher``) takes values and returns values;
``record``, ``serve_replay``, ``open_recording`` and ``open_replay`` run it on transports.
"""

from cassette._version import __version__
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
from cassette.transport import Frame, FrameStream, Target, Transport, Upstream

__all__ = [
    "FORMAT_VERSION",
    "STRATEGIES",
    "AlreadyPlayedError",
    "Cassette",
    "CassetteError",
    "CassetteExistsError",
    "CassetteFormatError",
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
    "Matcher",
    "MessageEvent",
    "MissReport",
    "NotRecordedError",
    "PluginError",
    "PluginLoadError",
    "RawEvent",
    "RecordResult",
    "Recorder",
    "ReplayMiss",
    "ReplayResult",
    "Replayer",
    "Reply",
    "StderrEvent",
    "Strategy",
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
