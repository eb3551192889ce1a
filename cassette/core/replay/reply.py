"""What a responder sends back for one client message: the value every front delivers.

It lives apart from the replayer so that the transport contract (``cassette.transport``),
which names it in its Protocols, loads no part of the replay machinery: a plugin author's
``import cassette.transport`` stays small.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from cassette.core.replay.matching import MissReport
    from cassette.core.wire.exchanges import Exchange

__all__ = ["Reply"]


@attrs.define(slots=True)
class Reply:
    """What to send back, in order, and the miss that produced an error, if one did.

    ``metas`` runs parallel to ``messages``: the transport facts each message was recorded
    with (``None`` for messages the replay made up, such as a miss error), so a network
    front can route it to the stream it travelled on. ``exchange`` is the recording that
    answered, when one did; its ``meta`` and ``status`` tell a front how it was answered.

    Treat it as a value (``attrs.evolve`` makes a changed copy), though it is not frozen:
    one is built for every message a replay answers, and a frozen attrs class sets each
    of these sixteen fields through ``object.__setattr__``, which made building it several
    times what a plain slotted class costs (docs/architecture.md, "Speed exceptions", has the
    figure).
    """

    messages: tuple[Any, ...] = ()
    miss: MissReport | None = None
    metas: tuple[Mapping[str, Any] | None, ...] = ()
    exchange: Exchange | None = None
    #: the live id of the client request these messages belong to (None: unrelated)
    origin: object = None
    #: live ids of server requests whose answers the replay now waits for
    awaiting: tuple[object, ...] = ()
    #: things a person should know that are not misses (a differing client answer)
    warnings: tuple[str, ...] = ()
    #: recorded time offsets of ``messages``, for pacing
    times: tuple[float, ...] = ()
    #: whether the response to ``origin`` is among ``messages`` (its HTTP stream may end)
    responded: bool = False
    #: the recorded time the messages follow from (the client message, or its answer)
    since: float | None = None
    #: more for ``origin`` follows on its own (a live server's answer, ``new_episodes``):
    #: a front that holds the request's stream keeps it open until a reply ``responded``
    pending: bool = False
    #: the recording has no answer for ``origin``: the runtime starts its answer deadline,
    #: and fails it (``Responder.give_up``) unless the client cancels it first
    unanswered: bool = False
    #: the recorded server exited here: the front ends the session after these messages
    closes: bool = False
    #: drop the client's connection here, without an answer (a fault plan's disconnect):
    #: a frame stream closes as for ``closes``, an HTTP front cuts the request's connection
    drops: bool = False
    #: the HTTP status to answer with where the era rules change the recorded one (a
    #: legacy client of a modern recording, a refused era); ``None``: the exchange's own
    status: int | None = None
    #: the responder refused its client's era (``-32022``): a network front keeps no
    #: session for a client it cannot serve
    refuses_era: bool = False


def _reply(messages: Sequence[Any], metas: Sequence[Mapping[str, Any] | None] = ()) -> Reply:
    return Reply(tuple(messages), None, tuple(metas) or (None,) * len(messages))
