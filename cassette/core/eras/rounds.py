"""``InputRound``: a legacy client answering what a modern recording's ``input_required``
asked for (``cassette.core.eras.bridge`` explains the bridge between the eras).

A module of its own because building an attrs class at import costs start-up
instructions (docs/architecture.md, "Speed exceptions", has the figure), and only a replay that
bridges a modern recording to a legacy client (in ``cassette.core.replay.negotiation``) ever makes
one.
"""

from __future__ import annotations

from typing import Any

import attrs

from cassette.core.wire.jsonrpc import JSONObject

__all__ = ["InputRound"]


@attrs.define
class InputRound:
    """A legacy client answering, as server requests, what one ``input_required`` response
    of a modern recording asked for. Once every request is answered, ``retry`` is the
    2026-07-28 retry the recording holds next: the live request with the client's answers
    as ``inputResponses`` and the recorded ``requestState``."""

    origin: JSONObject  # the live request the recording answered with input_required
    state: object  # the recorded requestState (None: there was none)
    keys: dict[object, str] = attrs.field(factory=dict)  # live server-request id -> key
    answers: dict[str, Any] = attrs.field(factory=dict)

    def answer(self, server_id: object, result: Any) -> bool:
        """Note the client's answer to request ``server_id``; whether all are answered."""
        self.answers[self.keys[server_id]] = result
        return len(self.answers) == len(self.keys)

    def retry(self) -> JSONObject:
        params = self.origin.get("params")
        retried = {**(params if isinstance(params, dict) else {}), "inputResponses": self.answers}
        if self.state is not None:
            retried["requestState"] = self.state
        return {**self.origin, "params": retried}
