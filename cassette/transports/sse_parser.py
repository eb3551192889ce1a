"""Server-sent events, parsed exactly as WHATWG HTML §9.2.6 "interpreting an event stream".

Sans-IO: bytes go in through :meth:`SSEParser.feed`, the events they complete come out, and
:meth:`SSEParser.close` marks the end of the stream. Nothing here reads a socket, sleeps or
imports anything beyond the standard library and attrs, so the same bytes always give the
same events, however they were cut into chunks.

Theory of operation
-------------------
Bytes become text through an incremental UTF-8 decoder with ``errors="replace"``: a
character split across chunks waits inside the decoder until its last byte arrives, and
invalid bytes become U+FFFD exactly as the WHATWG *UTF-8 decode* turns them into it (Python
replaces each maximal invalid subpart, as the Encoding Standard does). Before the first
character is handed on, one leading U+FEFF is dropped; none is dropped later. A BOM whose
bytes arrive in several chunks is still one character by the time it leaves the decoder.

Text is then cut into lines in bulk (``str.replace`` and ``str.split``, no per-character
loop). The invariants that make the result independent of chunk boundaries:

* ``_partial`` holds the text of the current line that has not ended yet, as a list of
  pieces joined once, when the line ends, so a long line delivered in many small chunks
  costs linear time. It never holds a CR or an LF.
* ``_after_cr`` is true exactly when the last character processed was a CR. That CR has
  already ended its line (a CR is a line ending whether or not an LF follows; the LF only
  decides whether it is part of the same ending), so an LF at the start of the next text
  is the second half of a CRLF and is dropped. Because the CR acts at once, an event ended
  by a lone CR is dispatched without waiting for the next byte: the spec warns that
  buffering which waits for an unexpected line ending delays dispatch.
* The block buffers (data lines, event type, the ``retry`` of this block) describe the
  lines since the last blank line. The last event ID *buffer* is never reset; the last
  event ID *string* (the :attr:`SSEParser.last_event_id` property, what a reconnecting
  client would send as ``Last-Event-ID``) takes the buffer's value at each dispatch,
  including a dispatch that fires nothing because the data buffer is empty.
* The data buffer is kept as a list of the ``data`` values. The spec appends value + LF
  for each and strips one trailing LF at dispatch, which is exactly ``"\\n".join(values)``;
  "the data buffer is empty" is exactly "the list is empty" (a ``data`` line with an empty
  value still appends an LF, so it fires an event whose data is ``""``).

At the end of the stream the decoder is flushed (a truncated character becomes U+FFFD),
and whatever block has not been ended by a blank line is discarded, never dispatched. A CR
at the very end has already acted as a line ending, so ``"data: x\\n\\r"`` fires its event.
"""

from __future__ import annotations

import codecs

import attrs

__all__ = ["SSEEvent", "SSEParser"]

_BOM = "\ufeff"

# int() refuses decimal strings longer than sys.get_int_max_str_digits() (4300 by default).
# A longer run of digits is still a valid retry value, so it is converted piecewise.
_INT_PIECE = 4000


@attrs.frozen(slots=True)
class SSEEvent:
    """One dispatched event.

    ``type`` is the event type: ``"message"`` unless an ``event`` field set another one.
    ``data`` is the data buffer with its single trailing LF removed. ``last_event_id`` is
    the parser's last event ID at dispatch, inherited from earlier blocks when this one had
    no valid ``id`` field. ``retry`` is the reconnection time, in milliseconds, set by a
    valid ``retry`` field inside this event's own block (the last one if there were
    several), or ``None`` when the block set none; the stream-wide latest value is
    :attr:`SSEParser.retry`.
    """

    type: str
    data: str
    last_event_id: str
    retry: int | None = None


def _decimal(digits: str) -> int:
    """The value of a string of ASCII digits, however long."""
    if len(digits) <= _INT_PIECE:
        return int(digits)
    digits = digits.lstrip("0")
    value = 0
    for start in range(0, len(digits), _INT_PIECE):
        piece = digits[start : start + _INT_PIECE]
        value = value * 10 ** len(piece) + int(piece)
    return value


class SSEParser:
    """Incremental ``text/event-stream`` parser for one response body.

    Feed it the body's bytes as they arrive, in chunks of any size, and call :meth:`close`
    when the body ends. It is a plain state machine: not thread-safe, never blocking.
    """

    __slots__ = (
        "_after_cr",
        "_at_start",
        "_block_retry",
        "_closed",
        "_data",
        "_decoder",
        "_id_buffer",
        "_last_event_id",
        "_partial",
        "_retry",
        "_type",
    )

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._at_start = True
        self._after_cr = False
        self._partial: list[str] = []
        self._data: list[str] = []
        self._type = ""
        self._block_retry: int | None = None
        self._id_buffer = ""
        self._last_event_id = ""
        self._retry: int | None = None
        self._closed = False

    @property
    def last_event_id(self) -> str:
        """The last event ID string as of the latest dispatch (``""`` until one sets it).

        An ``id`` field counts only once its block has ended with a blank line, so an ``id``
        in a block cut off by the end of the stream never shows here.
        """
        return self._last_event_id

    @property
    def retry(self) -> int | None:
        """The latest reconnection time (ms) set by a valid ``retry`` field, if any.

        Unlike the last event ID, it takes effect as soon as its line is processed, as in
        the spec, even if the block it belongs to is never dispatched.
        """
        return self._retry

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._closed

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Take the next bytes of the stream; return the events they complete, in order."""
        if self._closed:
            raise ValueError("SSEParser.feed() called after close()")
        text = self._decoder.decode(chunk)
        if not text:
            return []
        return self._feed_text(text)

    def close(self) -> list[SSEEvent]:
        """Mark the end of the stream; return the events completed by the final bytes.

        Bytes of a truncated character become U+FFFD; a block with no terminating blank
        line is discarded. Calling it again returns ``[]``.
        """
        if self._closed:
            return []
        self._closed = True
        text = self._decoder.decode(b"", True)
        events = self._feed_text(text) if text else []
        self._partial.clear()
        self._data.clear()
        self._type = ""
        self._block_retry = None
        return events

    def _feed_text(self, text: str) -> list[SSEEvent]:
        if self._at_start:
            self._at_start = False
            if text[0] == _BOM:
                text = text[1:]
                if not text:
                    return []
        if self._after_cr:
            self._after_cr = False
            if text[0] == "\n":
                text = text[1:]
                if not text:
                    return []
        if "\r" in text:
            self._after_cr = text[-1] == "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        tail = lines.pop()
        partial = self._partial
        if not lines:
            partial.append(tail)
            return []
        if partial:
            partial.append(lines[0])
            lines[0] = "".join(partial)
            partial.clear()
        if tail:
            partial.append(tail)
        return self._process_lines(lines)

    def _process_lines(self, lines: list[str]) -> list[SSEEvent]:
        # The hot loop: block state lives in locals and is written back once at the end.
        events: list[SSEEvent] = []
        data = self._data
        event_type = self._type
        block_retry = self._block_retry
        id_buffer = self._id_buffer
        last_event_id = self._last_event_id
        for line in lines:
            if not line:
                last_event_id = id_buffer
                if data:
                    events.append(
                        SSEEvent(event_type or "message", "\n".join(data), id_buffer, block_retry)
                    )
                    data.clear()
                event_type = ""
                block_retry = None
                continue
            colon = line.find(":")
            if colon == 0:
                continue
            if colon < 0:
                field = line
                value = ""
            else:
                field = line[:colon]
                start = colon + 2 if line.startswith(" ", colon + 1) else colon + 1
                value = line[start:]
            if field == "data":
                data.append(value)
            elif field == "event":
                event_type = value
            elif field == "id":
                if "\0" not in value:
                    id_buffer = value
            elif field == "retry" and value.isdigit() and value.isascii():
                block_retry = self._retry = _decimal(value)
        self._type = event_type
        self._block_retry = block_retry
        self._id_buffer = id_buffer
        self._last_event_id = last_event_id
        return events
