"""``RecordOptions``, exported by ``cassette.transport`` and built on first use.

Building an attrs class at import costs start-up instructions (docs/architecture.md, "Speed
exceptions", has the figure); a replay, which never records, imports ``cassette.transport`` and so
paid for it on every start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from cassette._origins import DEFAULT_HOST, _origins
from cassette.core.wire.limits import DEFAULT_MAX_BYTES

__all__ = ["RecordOptions"]

Ready = Callable[[str], None]  # as ``cassette.transport.Ready``


@attrs.frozen(kw_only=True)
class RecordOptions:
    """How a recording proxy serves its clients: as ``ServeOptions`` (``allowed_origins``
    included), ``upstream_timeout``, the seconds the upstream may take to start answering
    a request before the client gets an error in its place (``None``: the transport's
    default), and ``era``."""

    host: str = DEFAULT_HOST
    port: int = 0
    max_message_bytes: int = DEFAULT_MAX_BYTES
    on_ready: Ready | None = None
    upstream_timeout: float | None = None
    allowed_origins: tuple[str, ...] = attrs.field(default=(), converter=_origins)
    #: the era to record in: ``auto`` (the client chooses), ``legacy`` or ``modern`` (the
    #: other era's opening is answered by the proxy, ``cassette.core.eras.bridge.era_refusal``)
    era: str = "auto"
    #: headers the proxy adds to every request it forwards upstream (credentials given by
    #: the person recording, ``Target.headers``); never recorded. A header the client sent
    #: itself with the same name is replaced.
    headers: Mapping[str, str] | None = None
