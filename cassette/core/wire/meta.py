"""The members of ``meta``: the transport facts a frame carries and an event keeps.

One table, read by every writer and reader of a member (the recorder, the HTTP fronts
and proxies, the replay's routing, the codec's checks, the commands): a member is named
here once, and a typo is an import error, not a key nothing reads. docs/cassette-format.md
describes what each recorded member means; ``cassette.core.tape.fields`` checks their types
when a cassette is read.

Recorded in a cassette (an event's ``meta``):

=============  ===========  ==================================================================
member         type         what it says
=============  ===========  ==================================================================
``stream``     string       the HTTP exchange the frame travelled on (``post-N``, ``get-N``)
``session``    integer      the client session's ordinal in the recording (HTTP)
``sse``        boolean      the frame arrived as a server-sent event
``event_id``   string       the SSE last-event-id when the event was dispatched
``event``      string       the SSE event type, when it was not ``message``
``retry``      integer      the SSE ``retry`` field the server sent
``synthetic``  string       an answer the recorder made in the server's place
``late``       boolean      a server's answer that came after the recorder's
``variant``    string       the variant session the event belongs to
``probe``      string       the recorder's probe the event belongs to
``start``      integer      the later server start the event belongs to
=============  ===========  ==================================================================

A frame's facts that are never recorded (``cassette.transport.Frame.meta``):
``oversized`` (the line was over the size limit and dropped: its length), ``headers`` (an
HTTP front: the client's request headers a live leg carries on, credentials included),
``in_reply_to`` (a live upstream's server-sent event: the id of the request whose stream
carried it).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "EVENT",
    "EVENT_ID",
    "HEADERS",
    "IN_REPLY_TO",
    "LATE",
    "OVERSIZED",
    "PROBE",
    "RETRY",
    "SESSION",
    "SSE",
    "START",
    "STREAM",
    "SYNTHETIC",
    "VARIANT",
]

STREAM: Final = "stream"
SESSION: Final = "session"
SSE: Final = "sse"
EVENT_ID: Final = "event_id"
EVENT: Final = "event"
RETRY: Final = "retry"
SYNTHETIC: Final = "synthetic"
LATE: Final = "late"
VARIANT: Final = "variant"
PROBE: Final = "probe"
START: Final = "start"

OVERSIZED: Final = "oversized"
HEADERS: Final = "headers"
IN_REPLY_TO: Final = "in_reply_to"
