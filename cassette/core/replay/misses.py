"""``MissReport``: why a live request got no recording, in terms a person can act on
(``cassette.core.replay.matching`` explains how a request is matched; it exports this too).

A module of its own because building an attrs class at import costs start-up
instructions (docs/architecture.md, "Speed exceptions", has the figure), and a replay whose requests
are all recorded never makes one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import attrs

if TYPE_CHECKING:
    from cassette.core.words.jsondiff import Difference

__all__ = ["MissReport"]


@attrs.frozen
class MissReport:
    """Why a live request got no recording, in terms a person can act on."""

    kind: Literal["not-recorded", "already-played", "answer-differs", "no-answer"]
    method: str
    #: one line, no trailing period; begins with the method. Often a
    #: ``cassette.core.words.said.Said``, which keeps apart what it quotes of the message
    summary: str
    closest_seq: int | None = None
    diffs: tuple[Difference, ...] = ()

    def told(self, value: Callable[[Any], Any], text: Callable[[str], str]) -> MissReport:
        """The report as a person may read it: the values and names it quotes redacted
        (``value`` for JSON values, ``text`` for the rest), never the words we wrote
        around them (``cassette.core.words.said``). The same report when nothing changed."""
        from cassette.core.words.jsondiff import MISSING, Difference
        from cassette.core.words.said import tell

        def one(found: Any, key: str) -> Any:
            return found if found is MISSING else value({key: found})[key]

        diffs = tuple(
            Difference(d.path, one(d.recorded, _key(d.path)), one(d.received, _key(d.path)))
            for d in self.diffs
        )
        told = attrs.evolve(
            self, summary=tell(self.summary, value, text), method=text(self.method), diffs=diffs
        )
        return self if told == self and told.summary == self.summary else told

    @property
    def closest_line(self) -> int | None:
        """The line of the closest recording in its cassette."""
        return None if self.closest_seq is None else self.closest_seq + 1

    def as_data(self) -> dict[str, Any]:
        """The structured form sent in the JSON-RPC error's ``data``."""
        data: dict[str, Any] = {"kind": self.kind, "method": self.method}
        if self.closest_line is not None:
            data["closestLine"] = self.closest_line
        if self.diffs:
            data["diffs"] = [
                {"path": d.path, "recorded": _plain(d.recorded), "received": _plain(d.received)}
                for d in self.diffs
            ]
        return data


def _key(path: str) -> str:
    """The member name a JSON Pointer ends at (a value is redacted under it)."""
    return path.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")


def _plain(value: Any) -> Any:
    from cassette.core.words.jsondiff import MISSING

    return None if value is MISSING else value
