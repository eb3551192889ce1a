"""``Paused``: an exchange stopped where the recording shows the server waiting for the
client (``cassette.core.replay.playback`` explains the play).

A module of its own because building an attrs class at import costs start-up
instructions (docs/architecture.md, "Speed exceptions", has the figure), and only a recording whose
server asks the client something (sampling, elicitation, roots) ever pauses.
"""

from __future__ import annotations

import attrs

from cassette.core.wire.exchanges import Exchange, Item
from cassette.core.wire.jsonrpc import JSONObject

__all__ = ["Paused"]


@attrs.define(eq=False)  # compared by identity: no __eq__ to build at import
class Paused:
    """An exchange stopped where the recording shows the server waiting for the client."""

    exchange: Exchange
    live: JSONObject  # the live client message that started the exchange
    rest: list[Item]  # what follows the client's answer in the recording
    answer: JSONObject  # the client's answer as recorded
    request: JSONObject  # the server request as sent live (with its live id)
    ids: dict[object, int]  # recorded server-request id -> live id, for this exchange
    answer_t: float = 0.0  # when the client's answer was recorded (pacing resumes there)
