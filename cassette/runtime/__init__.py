"""The async glue between the sans-IO core and the transports: one serve path.

* ``serve`` puts any responder on any front (``cassette.runtime.serve``), under the one
  delivery policy (``DeliveryPolicy``, applied by a ``PolicyServedSession`` per client session);
* ``record_session`` and ``record_proxy`` record through a transparent proxy
  (``cassette.runtime.record``);
* ``open_recording``, ``open_replay`` and ``ClientConnection`` are the harness API.

Options are values (``RecordConfig``, ``ServeOptions``, ``DeliveryPolicy``,
``ReplayOptions``); the short forms (``record``, ``record_http``, ``replay``,
``serve_replay``) call the same functions with the default options.

Names are imported on first use, so a replay pays only for the modules it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from cassette._lazy import lazy_exports

if TYPE_CHECKING:
    from cassette.core.replay.pacing import Pacing
    from cassette.core.wire.deadlines import ANSWER_TIMEOUT
    from cassette.runtime.conversation import (
        DeliveryPolicy,
        Fallback,
        FallbackFactory,
        PolicyServedSession,
        PolicySessionPool,
        ReplayResult,
    )
    from cassette.runtime.frames import serve_frames
    from cassette.runtime.harness import ClientConnection, open_recording, open_replay
    from cassette.runtime.record import (
        RecordConfig,
        RecordResult,
        print_err,
        proxy,
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

__all__ = [
    "ANSWER_TIMEOUT",
    "ClientConnection",
    "DeliveryPolicy",
    "Fallback",
    "FallbackFactory",
    "Pacing",
    "PolicyServedSession",
    "PolicySessionPool",
    "RecordConfig",
    "RecordResult",
    "ReplayOptions",
    "ReplayResult",
    "open_recording",
    "open_replay",
    "print_err",
    "proxy",
    "record",
    "record_http",
    "record_proxy",
    "record_session",
    "replay",
    "replay_pool",
    "replay_sessions",
    "serve",
    "serve_frames",
    "serve_replay",
]

_LAZY: Final = {
    "ANSWER_TIMEOUT": "cassette.core.wire.deadlines",
    "Pacing": "cassette.core.replay.pacing",
    "PolicyServedSession": "cassette.runtime.conversation",
    "DeliveryPolicy": "cassette.runtime.conversation",
    "Fallback": "cassette.runtime.conversation",
    "FallbackFactory": "cassette.runtime.conversation",
    "ReplayResult": "cassette.runtime.conversation",
    "PolicySessionPool": "cassette.runtime.conversation",
    "ClientConnection": "cassette.runtime.harness",
    "open_recording": "cassette.runtime.harness",
    "open_replay": "cassette.runtime.harness",
    "RecordConfig": "cassette.runtime.record",
    "RecordResult": "cassette.runtime.record",
    "print_err": "cassette.runtime.record",
    "proxy": "cassette.runtime.record",
    "record": "cassette.runtime.record",
    "record_http": "cassette.runtime.record",
    "record_proxy": "cassette.runtime.record",
    "record_session": "cassette.runtime.record",
    "ReplayOptions": "cassette.runtime.replay_pool",
    "replay": "cassette.runtime.serve",
    "replay_pool": "cassette.runtime.replay_pool",
    "replay_sessions": "cassette.runtime.serve",
    "serve": "cassette.runtime.serve",
    "serve_frames": "cassette.runtime.frames",
    "serve_replay": "cassette.runtime.serve",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
