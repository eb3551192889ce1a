"""Server-sent events, parsed exactly as WHATWG HTML §9.2.6 "interpreting an event stream".

Sans-IO: bytes go in through :meth:`SSEParser.feed`, the events they complete come out, and
:meth:`SSEParser.close` marks the end of the stream. Nothing here reads a socket, sleeps or
imports anything beyond the standard library and attrs, so the same bytes always give the
same events, however they were cut into chunks.

Theory of operation
-------------------
The spec decodes the whole stream as UTF-8 (replacing invalid bytes with U+FFFD, and
stripping one leading BOM), then cuts the text into lines at CRLF, LF or lone CR, then
splits each line at its first colon. This parser does the same steps in a cheaper but
equivalent order: it cuts *bytes* into lines and fields, and decodes only the values it
keeps (event type, data, id), each with ``bytes.decode("utf-8", "replace")``. The order
does not change the result because every byte that steers the parse (CR, LF, ``:``, space,
NUL, the digits and the letters of the field names) is ASCII, and UTF-8 decoding never
carries state across an ASCII byte: an unfinished sequence before it is replaced there and
then, exactly as when that stretch is decoded on its own, and no other bytes decode to an
ASCII character. Python replaces each maximal invalid subpart with one U+FFFD, as the
Encoding Standard does. A character split across chunks is whole by the time its line is
decoded, because lines are assembled from the raw bytes first. Working on bytes also keeps
the bulk operations (``bytes.splitlines``, ``in``, slicing) at one byte per character.

The invariants that make the output independent of chunk boundaries:

* ``_head`` holds the first bytes of the stream while they could still be a BOM
  (EF BB BF, the UTF-8 encoding of U+FEFF); once three bytes are seen, or one that cannot
  belong to a BOM, one BOM is dropped if present and ``_head`` becomes ``None`` for good.
* ``_partial`` holds the bytes of the current line that has not ended yet, as a list of
  pieces joined once, when the line ends, so a long line delivered in many small chunks
  costs linear time. It never holds a CR or an LF.
* ``_after_cr`` is true exactly when the last byte processed was a CR. That CR has already
  ended its line (a CR is a line ending whether or not an LF follows; the LF only decides
  whether it belongs to the same ending), so an LF at the start of the next chunk is the
  second half of a CRLF and is dropped. Because the CR acts at once, an event ended by a
  lone CR is dispatched without waiting for the next byte (the spec warns that buffering
  which waits for a line ending it expects delays dispatch).
* The block buffers (data values, event type, the ``retry`` of this block) describe the
  lines since the last blank line. The last event ID *buffer* is never reset; the last
  event ID *string* (the :attr:`SSEParser.last_event_id` property, what a reconnecting
  client would send as ``Last-Event-ID``) takes the buffer's value at each dispatch,
  including a dispatch that fires nothing because the data buffer is empty.
* The data buffer is kept as a list of the ``data`` values. The spec appends value + LF
  for each and strips one trailing LF at dispatch, which is exactly ``b"\\n".join(values)``;
  "the data buffer is empty" is exactly "the list is empty" (a ``data`` line with an empty
  value still appends an LF, so it fires an event whose data is ``""``).

At the end of the stream whatever block has not been ended by a blank line is discarded,
never dispatched; its bytes, including any truncated character, are never decoded. A CR at
the very end has already acted as a line ending when it was fed, so ``"data: x\\n\\r"``
fires its event before :meth:`SSEParser.close` is called.
"""

from __future__ import annotations

import attrs

__all__ = ["SSEEvent", "SSEParser"]

_BOM = b"\xef\xbb\xbf"

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


def _decimal(digits: bytes) -> int:
    """The value of a string of ASCII digits, however long."""
    if len(digits) <= _INT_PIECE:
        return int(digits)
    digits = digits.lstrip(b"0")
    value = 0
    for start in range(0, len(digits), _INT_PIECE):
        piece = digits[start : start + _INT_PIECE]
        value = value * 10 ** len(piece) + int(piece)
    return value


# Building events without the attrs-generated __init__: it sets each field through
# object.__setattr__ by name, which costs as much as the rest of a dispatch. SSEEvent has
# no validators, converters or post-init hook, so writing the four slots directly makes an
# identical value (tests/unit/test_sse_parser.py checks both).
_new = object.__new__
_set_type = SSEEvent.__dict__["type"].__set__
_set_data = SSEEvent.__dict__["data"].__set__
_set_last_event_id = SSEEvent.__dict__["last_event_id"].__set__
_set_retry = SSEEvent.__dict__["retry"].__set__


class SSEParser:
    """Incremental ``text/event-stream`` parser for one response body.

    Feed it the body's bytes as they arrive, in chunks of any size, and call :meth:`close`
    when the body ends. It is a plain state machine: not thread-safe, never blocking.
    """

    __slots__ = (
        "_after_cr",
        "_block_retry",
        "_closed",
        "_data",
        "_head",
        "_id_buffer",
        "_last_event_id",
        "_partial",
        "_retry",
        "_type",
        "_type_cache",
    )

    def __init__(self) -> None:
        # Bytes seen so far while they could still be the start of a BOM; None once the
        # start of the stream is settled.
        self._head: bytes | None = b""
        self._after_cr = False
        self._partial: list[bytes] = []
        self._data: list[bytes] = []
        self._type = b""
        # The last event type seen and its text, so a repeated type is decoded once.
        self._type_cache = (b"message", "message")
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
        if type(chunk) is not bytes:
            chunk = bytes(chunk)  # a bytearray or memoryview could change under us
        if self._head is not None:
            chunk = self._settle_start(self._head, chunk)
        if self._after_cr and chunk:
            self._after_cr = False
            if chunk[0] == 10:  # LF: the second half of a CRLF already acted on
                chunk = chunk[1:]
        if not chunk:
            return []
        if b"\n" not in chunk and b"\r" not in chunk:
            # The middle of a long line: keep the chunk itself, copy nothing yet.
            self._partial.append(chunk)
            return []
        # bytes.splitlines breaks at exactly CRLF, LF and lone CR, and leaves no empty
        # string after a final line ending.
        lines = chunk.splitlines()
        last = chunk[-1]
        if last == 13:  # CR: a line ending now; an LF next would be its second half
            self._after_cr = True
            tail = b""
        elif last == 10:
            tail = b""
        else:
            tail = lines.pop()
        partial = self._partial
        if partial:
            partial.append(lines[0])
            lines[0] = b"".join(partial)
            partial.clear()
        if tail:
            partial.append(tail)
        return self._process_lines(lines)

    def _settle_start(self, head: bytes, chunk: bytes) -> bytes:
        """Strip one leading BOM, waiting while the bytes so far could still be one."""
        chunk = head + chunk
        if len(chunk) < 3 and _BOM.startswith(chunk):
            self._head = chunk
            return b""
        self._head = None
        return chunk[3:] if chunk[:3] == _BOM else chunk

    def close(self) -> list[SSEEvent]:
        """Mark the end of the stream; discard any block not ended by a blank line.

        Nothing can be dispatched here: a final CR has already ended its line when it was
        fed. It returns ``[]`` so that callers can treat the end like any other feed, and
        calling it again is harmless.
        """
        self._closed = True
        self._head = None
        self._partial.clear()
        self._data.clear()
        self._type = b""
        self._block_retry = None
        return []

    def _process_lines(self, lines: list[bytes]) -> list[SSEEvent]:  # noqa: PLR0912, PLR0915
        # The hot loop, kept in one function because a call per line or per event would
        # cost more than the work itself. Block state lives in locals, written back once
        # at the end; the usual spellings of the fields take exact fast paths first.
        events: list[SSEEvent] = []
        data = self._data
        event_type = self._type
        block_retry = self._block_retry
        id_buffer = self._id_buffer
        last_event_id = self._last_event_id
        type_raw, type_text = self._type_cache
        for line in lines:
            if not line:
                last_event_id = id_buffer
                if data:
                    if not event_type:
                        kind = "message"
                    elif event_type == type_raw:
                        kind = type_text
                    else:
                        type_raw = event_type
                        kind = type_text = event_type.decode("utf-8", "replace")
                    raw = data[0] if len(data) == 1 else b"\n".join(data)
                    event = _new(SSEEvent)
                    _set_type(event, kind)
                    _set_data(event, raw.decode("utf-8", "replace"))
                    _set_last_event_id(event, id_buffer)
                    _set_retry(event, block_retry)
                    events.append(event)
                    data.clear()
                event_type = b""
                block_retry = None
                continue
            # Each fast path fixes where the first colon is and whether one space follows.
            head = line[:6]
            if head == b"data: ":
                data.append(line[6:])
                continue
            if head == b"event:":
                event_type = line[7:] if line[6:7] == b" " else line[6:]
                continue
            if line[:4] == b"id: ":
                if b"\0" not in line:
                    id_buffer = line[4:].decode("utf-8", "replace")
                continue
            # The general rule. A comment has field b"" and a line without a colon has
            # value b"": both fall through the comparisons below as the spec requires.
            field, _, value = line.partition(b":")
            if value[:1] == b" ":
                value = value[1:]
            if field == b"data":
                data.append(value)
            elif field == b"event":
                event_type = value
            elif field == b"id":
                if b"\0" not in value:
                    id_buffer = value.decode("utf-8", "replace")
            elif field == b"retry" and value.isdigit():  # bytes: ASCII 0-9 only, not empty
                block_retry = self._retry = _decimal(value)
        self._type = event_type
        self._block_retry = block_retry
        self._id_buffer = id_buffer
        self._last_event_id = last_event_id
        self._type_cache = (type_raw, type_text)
        return events
