"""``Classified``: a frame's kind with its decoded value, what
``cassette.core.wire.jsonrpc.classify`` returns (``cassette.core.wire.jsonrpc`` exports it too).

A module of its own because building an attrs class at import costs start-up
instructions (docs/architecture.md, "Speed exceptions", has the figure), and a stdio replay
classifies its frames as plain values (``classify_parts``): only the HTTP fronts, the recorder and
the tools build one.
"""

from __future__ import annotations

from typing import Any

import attrs

from cassette.core.wire.kinds import SINGLE_MESSAGES, Kind

__all__ = ["Classified"]


@attrs.define(slots=True)
class Classified:
    """A frame's kind plus the decoded value (``None`` for ``NOT_JSON``). A value, not
    frozen: one is built for every frame, and a frozen class's fields cost
    ``object.__setattr__`` each (see ``cassette.core.replay.reply.Reply``)."""

    kind: Kind
    value: Any = None
    #: why a ``NOT_JSON`` frame was refused, when that is worth telling its sender
    problem: str | None = None

    @property
    def is_message(self) -> bool:
        """True for a single JSON-RPC message (what a cassette stores as an object)."""
        return self.kind in SINGLE_MESSAGES
