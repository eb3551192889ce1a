"""``Pacing``: recorded delays between server messages, reproduced (``cassette replay
--pace recorded``).

Sans-IO like the rest of the core: it turns recorded times into delays and the runtime
waits them. A module of its own because building an attrs class at import costs start-up
instructions (docs/architecture.md, "Speed exceptions", has the figure), and a replay that does not
pace (the default) never needs it.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

__all__ = ["Pacing"]


@attrs.frozen
class Pacing:
    """Reproduce recorded delays between server messages: ``scale`` times each recorded gap,
    but never more than ``cap`` seconds per gap."""

    scale: float = 1.0
    cap: float = 5.0

    def delay(self, gap: float) -> float:
        """The wait for one recorded gap (negative gaps, from clock skew, are none)."""
        return min(max(gap, 0.0) * self.scale, self.cap)

    def delays(self, times: Sequence[float], since: float) -> list[float]:
        """The wait before each message recorded at ``times``, the first counted from
        ``since`` (the client message they answer)."""
        out: list[float] = []
        last = since
        for t in times:
            out.append(self.delay(t - last))
            last = t
        return out
