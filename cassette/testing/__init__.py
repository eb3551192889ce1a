"""Tools for testing transport plugins: the check-suite and the reference peer.

``check_transport`` (async) and ``check_transport_sync`` run a plugin through every
property the contract in docs/transports.md asks of a transport (the plugin's shape, round
trip, framing, ordering, cancellation, end of stream, error conversion, record/replay) and
raise ``TransportCheckError``, an ``AssertionError`` naming each property that failed and
why. ``ReferencePeer`` is the sans-IO server the exact checks talk to; run it over stdio
with ``python -m cassette.testing.peer`` (``PEER_COMMAND``), or put it behind your own
transport.

    from cassette import Target
    from cassette.testing import check_transport_sync

    def test_my_transport():
        check_transport_sync("my-transport", target=Target(url="tcp://127.0.0.1:9000"))

Names are imported on first use, so running the peer does not load the check-suite.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Final

from cassette._lazy import lazy_exports

if TYPE_CHECKING:
    from cassette.testing._checks import (
        PROPERTIES,
        CheckReport,
        CheckResult,
        ClientFactory,
        TransportCheckError,
        check_transport,
        check_transport_sync,
    )
    from cassette.testing.peer import BANNER, PEER_NAME, ReferencePeer

__all__ = [
    "BANNER",
    "PEER_COMMAND",
    "PEER_NAME",
    "PROPERTIES",
    "CheckReport",
    "CheckResult",
    "ClientFactory",
    "ReferencePeer",
    "TransportCheckError",
    "check_transport",
    "check_transport_sync",
]

#: The reference peer as a stdio server command (``Target(command=PEER_COMMAND)``).
PEER_COMMAND: Final = (sys.executable, "-m", "cassette.testing.peer")

_LAZY: Final = {
    "BANNER": "cassette.testing.peer",
    "PEER_NAME": "cassette.testing.peer",
    "ReferencePeer": "cassette.testing.peer",
    "PROPERTIES": "cassette.testing._checks",
    "CheckReport": "cassette.testing._checks",
    "CheckResult": "cassette.testing._checks",
    "ClientFactory": "cassette.testing._checks",
    "TransportCheckError": "cassette.testing._checks",
    "check_transport": "cassette.testing._checks",
    "check_transport_sync": "cassette.testing._checks",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
