"""The delivery policy's values: how replies reach a client, how a serving ended, and
what a front uses of a client session.

Kept apart from ``cassette.runtime.conversation`` so the fault overlay
(``cassette.runtime.faults``), which the conversation's pool applies, can name them
without importing the conversation, and so a replay without a fault plan never imports
the overlay or the fault rules (names used only in annotations are imported for type
checkers alone).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from cassette.core.wire.deadlines import ANSWER_TIMEOUT
from cassette.core.wire.limits import DEFAULT_MAX_BYTES
from cassette.transport import Frame, ServedSession

if TYPE_CHECKING:
    import anyio

    from cassette.core.replay.faults import FaultPlan
    from cassette.core.replay.misses import MissReport
    from cassette.core.replay.pacing import Pacing
    from cassette.core.replay.reply import Reply
    from cassette.core.wire.classified import Classified

__all__ = ["AnswersAtOnce", "DeliveryPolicy", "ReplayResult", "RuntimeServedSession", "Say"]

Say = Callable[[str], None]


@attrs.frozen(kw_only=True, eq=False)  # compared by identity: no __eq__ to build at import
class DeliveryPolicy:
    """How replies reach a client, on every front.

    ``on_miss`` hears each request nothing could answer, ``on_warning`` each thing a person
    should know that is not a miss (a client answer that differs from the recording);
    ``answer_timeout`` is how long a replayed server request waits for the client's answer;
    ``pacing`` reproduces recorded gaps between server messages (``None``: none);
    ``max_message_bytes`` is the largest client message answered. ``faults`` is a fault
    plan laid over whatever answers (docs/faults.md), and ``on_fault`` hears each fault
    as it is injected: a test that fails because of one can say which. ``on_finish``
    gets each result of a serving as it is known (``cassette.serve``), also when the
    serving ends by cancellation: the policy owns the end summary as it owns the misses.
    """

    on_miss: Say | None = None
    on_warning: Say | None = None
    answer_timeout: float = ANSWER_TIMEOUT
    pacing: Pacing | None = None
    max_message_bytes: int = DEFAULT_MAX_BYTES
    faults: FaultPlan | None = None
    on_fault: Say | None = None
    on_finish: Callable[[ReplayResult], None] | None = None

    def finishing(self, on_finish: Callable[[ReplayResult], None] | None) -> DeliveryPolicy:
        """This policy, with ``on_finish`` hearing the results when one is given (an
        options value's own ``on_finish``, which the value forms of our entry points keep)."""
        return self if on_finish is None else attrs.evolve(self, on_finish=on_finish)


@attrs.frozen
class ReplayResult:
    """How a replay ended: every miss it answered with an error, and their summary.
    ``exit_code`` is set when a fault plan made the server exit."""

    misses: tuple[MissReport, ...]
    summary: str
    exit_code: int | None = None


class RuntimeServedSession(ServedSession, Protocol):
    """A served session (``cassette.transport.ServedSession``) as the runtime's own frame
    loop and fault overlay drive it (a ``PolicyServedSession``, or the fault overlay over one):
    the contract's methods, and what only the runtime uses on top of them."""

    @property
    def changed(self) -> anyio.Event: ...

    def paces(self, reply: Reply) -> bool: ...

    def result(self) -> ReplayResult: ...

    def end_of_input(self) -> Reply:
        """The client's input ended (stdio's end of file, or any frame stream's): what
        the server still sends it then, written before the stream closes."""
        ...


@runtime_checkable
class AnswersAtOnce(Protocol):
    """A served session that can answer a frame without awaiting (optional; the runtime
    checks it with ``isinstance``, never a concrete class).

    Why: a replay's answer needs no waiting unless a live fallback or pacing is in play,
    and a frame loop that calls a plain function spares a coroutine per message; a
    ``Pushing`` stream's callback can only call one (docs/architecture.md, "Speed
    exceptions"). A session without it (the fault overlay) is awaited through
    ``receive``, whatever it wraps."""

    @property
    def always_at_once(self) -> bool:
        """Whether every reply comes without waiting (no live fallback, no pacing): then
        frames may be answered from a stream's reader callback."""
        ...

    def receive_now(self, frame: Frame, classified: Classified | None = None) -> Reply | None:
        """``receive`` where it needs no waiting, else ``None`` (then await ``receive``)."""
        ...

    def receive_data_now(
        self,
        data: bytes,
        meta: Mapping[str, Any] | None = None,
        classified: Classified | None = None,
    ) -> Reply | None:
        """``receive_now`` of a frame's two fields, as a ``Pushing`` stream hands them."""
        ...
