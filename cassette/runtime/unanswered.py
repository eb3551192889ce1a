"""``NoAnswer``: the deadline of a client request the recording never answered.

A module of its own because building an attrs class at import costs start-up
instructions (docs/architecture.md, "Speed exceptions", has the figure), and only a recording that
leaves a request unanswered sets such a deadline (``cassette.runtime.conversation``).
"""

from __future__ import annotations

import attrs

__all__ = ["NoAnswer"]


@attrs.frozen  # a value: a deadline's key (``Deadlines`` keys by it)
class NoAnswer:
    """A deadline for a client request the recording never answered (server request ids
    are the server's own sequence: this keeps the two apart)."""

    request_id: object
