"""Time as values: how long each wait may last, and when recorded gaps are reproduced.

Sans-IO like the rest of the core: the current time is passed in, never read, so the
rules are tested with plain numbers and the runtime decides how to wait. (Reproducing
recorded delays is ``cassette.core.replay.pacing``'s: a replay that does not pace never builds it.)

* ``Deadlines`` keeps the server requests a replay waits on, each with the moment the
  client's answer is due; the runtime asks which are overdue and fails them
  (``Replayer.expire``), so a client that never answers cannot hang a session.
"""

from __future__ import annotations

import math
from typing import Final

from cassette.core.wire.ids import IdKey, id_key

__all__ = [
    "ANSWER_TIMEOUT",
    "HANDSHAKE_TIMEOUT",
    "SHUTDOWN_GRACE",
    "STOP_BOUND",
    "STOP_GRACE",
    "STOP_KILL_AFTER",
    "UPSTREAM_TIMEOUT",
    "Deadlines",
]

#: Seconds a replay waits for the client's answer to a server request before failing the
#: request that waited (the live server would have waited too; a test must not hang).
ANSWER_TIMEOUT: Final = 30.0
#: Seconds an HTTP recording proxy waits for the upstream to start answering (then 504).
UPSTREAM_TIMEOUT: Final = 60.0
#: Seconds a live server may take to start and answer its handshake (``new_episodes``).
HANDSHAKE_TIMEOUT: Final = 30.0
#: Seconds a recorded server gets to end by itself once its client has finished (the
#: MCP shutdown's grace); then the proxy ends it (``Upstream.aclose``).
SHUTDOWN_GRACE: Final = 5.0
#: Seconds a recorded server gets to end by itself once the recorder was asked to stop
#: (SIGTERM, Ctrl-C, a harness giving up), then after SIGTERM before SIGKILL: short enough
#: to be done before whoever asked gives up on us (the TypeScript SDK kills 2 s after its
#: SIGTERM), with the server's exit recorded.
STOP_GRACE: Final = 1.0
STOP_KILL_AFTER: Final = 0.5
#: The longest a stop may take, its server's last words and exit recorded included.
STOP_BOUND: Final = STOP_GRACE + STOP_KILL_AFTER + 1.0


class Deadlines:
    """Server requests awaiting the client's answer, each due ``timeout`` seconds after it
    was sent. Times are whatever clock the caller passes (the runtime: anyio's)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._due: dict[IdKey, tuple[float, object]] = {}

    def __len__(self) -> int:
        return len(self._due)

    def start(self, server_id: object, now: float) -> None:
        """``server_id`` was sent at ``now``; its answer is due ``timeout`` later."""
        self._due[id_key(server_id)] = (now + self.timeout, server_id)

    def clear(self, server_id: object) -> None:
        """``server_id`` was answered (or given up on): no deadline any more."""
        self._due.pop(id_key(server_id), None)

    def overdue(self, now: float) -> list[object]:
        """The ids whose answer is late at ``now``, oldest first; they are forgotten."""
        late = sorted((k for k, (due, _) in self._due.items() if due <= now), key=self._when)
        return [self._due.pop(key)[1] for key in late]

    def _when(self, key: IdKey) -> float:
        return self._due[key][0]

    def remaining(self, now: float) -> float:
        """Seconds from ``now`` until the next deadline (``inf`` with none)."""
        if not self._due:
            return math.inf
        return max(0.0, min(due for due, _ in self._due.values()) - now)
