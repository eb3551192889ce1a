"""cassette as the client: the direction for server authors.

Replay serves a cassette to a client in place of a server. This package goes the other
way: it speaks to a live server as a client does, to record scenarios written as data
(no client code) and to re-fire a cassette's requests at a changed server and say what
drifted (``verify``). Everything here drives the target through the transports'
``UpstreamConnector`` and records through the runtime's recording machinery, so redaction,
limits and the cassette lock apply as in every recording; nothing imports the official SDK.
"""

from __future__ import annotations

__all__: list[str] = []
