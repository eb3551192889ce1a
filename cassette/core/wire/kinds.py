"""What a frame is, as far as JSON-RPC 2.0 is concerned (``Kind``); exported by
``cassette.core.wire.jsonrpc``, which classifies frames, and used by ``Classified`` beside it.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = ["SINGLE_MESSAGES", "Kind"]


class Kind(enum.Enum):
    """What a frame is, as far as JSON-RPC 2.0 is concerned."""

    REQUEST = "request"
    NOTIFICATION = "notification"
    RESPONSE = "response"
    ERROR = "error"
    BATCH = "batch"
    INVALID = "invalid"  # parsed as JSON but is not a JSON-RPC message
    NOT_JSON = "not-json"  # not JSON at all (or not UTF-8)


#: The kinds of a single JSON-RPC message (``Classified.is_message``).
SINGLE_MESSAGES: Final = frozenset({Kind.REQUEST, Kind.NOTIFICATION, Kind.RESPONSE, Kind.ERROR})
