"""A live message as a person may see it: what a replay session redacts before it tells.

On a redacted cassette a live message is redacted with the policy the runtime handed over
(the built-in rules when none was) and the header's named variables before any part of it
can be shown (a miss, a warning), so a live secret never reaches a log. A request is
matched as it came: redacted positions of the recording are wildcards, so matching does
not depend on it, and a request the recording holds (most) is never redacted. The
header's patterns are never compiled. What a miss tells (the client's error, the miss
line, the run's summary) passes the runtime's policy on any cassette, since a miss is
printed.

The redactor is built when first needed: a clean session needs none, and its module with
the rule tables is a share of a replay's start-up. One ``Shown`` per session, shared by
the replayer and the era-and-variant authority (``cassette.core.replay.negotiation``), which both
tell of live messages.

Invariants: on a redacted cassette no live message reaches a miss or a warning
unredacted; a clean cassette's messages are never walked unless a miss is told.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from cassette.core.replay.prepared import check_redaction
from cassette.core.replay.replay_parts import env_values
from cassette.core.wire.jsonrpc import JSONObject

if TYPE_CHECKING:
    from cassette.core.redaction.redactor import RedactionSession, Redactor
    from cassette.core.replay.misses import MissReport
    from cassette.core.wire.model import Recording

__all__ = ["Shown", "ShownPolicy"]

#: The policy a person-facing description of a live message passes (a miss, a warning,
#: the error a miss sends the client), made when first needed: the runtime hands over
#: the redaction gate's (``cassette.store.gate.display``), which the core cannot build.
ShownPolicy = Callable[[], "Redactor"]


class Shown:
    """One session's way of showing live messages (see the module docstring).
    ``literals``: the values of the variables a redacted cassette names (``None``: the
    cassette is not redacted)."""

    __slots__ = ("_policy", "_session", "literals")

    def __init__(
        self, literals: tuple[str, ...] | None = None, policy: ShownPolicy | None = None
    ) -> None:
        self.literals = literals
        self._policy = policy
        self._session: RedactionSession | None = None

    @classmethod
    def of(
        cls,
        recording: Recording,
        environ: Mapping[str, str] | None,
        policy: ShownPolicy | None,
    ) -> Shown:
        """How a session of ``recording`` shows live messages; a malformed ``redaction``
        member of its header is refused (``check_redaction``)."""
        info = recording.header.redaction
        if info is None:
            return cls(None, policy)
        check_redaction(recording)
        return cls(tuple(env_values(info, environ)), policy)

    def message(self, message: JSONObject, raw: str | None = None) -> JSONObject:
        """``message`` as a person may see it: redacted with the built-in rules on a
        redacted cassette (``raw``, its text, lets a clean one skip the walk)."""
        if self.literals is None:
            return message
        return self._redactor().message(message, None, raw)[0]

    def described(self, message: JSONObject, raw: str | None) -> JSONObject:
        """``message`` as a miss tells it: ``message``, and on a cassette recorded without
        redaction, through the policy the runtime handed over all the same."""
        if self.literals is None and self._policy is not None:
            return self._redactor().message(message, None, raw)[0]
        return self.message(message, raw)

    def told(self, report: MissReport) -> MissReport:
        """``report`` as the client is told it, which may reach a log: the values it quotes
        redacted through the runtime's policy, on any cassette; never our words."""
        if self._policy is None and self.literals is None:
            return report
        redactor = self._redactor()
        return report.told(redactor.value, redactor.text)

    def _redactor(self) -> RedactionSession:
        """This session's redactor (the policy the runtime handed over, else the built-in
        rules, and the recording's named variables), made on first use."""
        if self._session is None:
            if self._policy is not None:
                policy = self._policy().with_literals(self.literals or ())
            else:
                from cassette.core.redaction.redactor import Redactor

                policy = Redactor(literals=self.literals or ())
            self._session = policy.session()
        return self._session
