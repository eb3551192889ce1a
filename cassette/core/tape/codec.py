"""The on-disk shape of a cassette: JSONL in and out (cattrs checks the unusual lines).

Theory of operation
-------------------
A cassette is JSON Lines. Line 1 is the header; every other line is one event. Every line
is a JSON object whose ``kind`` says what it is. Fields that are ``None`` are left out when
writing, so a file reads well in a diff, and readers treat a missing field as ``None``.

Reading is strict about what it knows and lenient about what it does not:

* a header ``format`` newer than ``FORMAT_VERSION`` is refused with an upgrade message;
  older formats are migrated in memory, one version step at a time, forever;
* an event ``kind`` this version does not know is skipped with a warning (a newer writer
  may add kinds without bumping the format), and so are unknown fields;
* a last line with no newline that does not parse is what a crash mid-write leaves behind:
  it is dropped with a warning;
* anything else malformed is a ``CassetteFormatError`` naming ``file:line`` and the fault.

Everything here is pure: bytes or text in, values out. ``storage`` owns the files.

The converter is built on first use, not at import: importing cattrs and generating its
hooks costs a replay tens of milliseconds before its first answer, and a well-formed
cassette never needs it to be read. The common shapes (the header, message, stderr and
exit events) are checked field by field here and built directly; anything unusual takes
the converter's checked way, so both ways accept and refuse the same things. Writing
never needs it: a line is the attrs fields minus their defaults (``_plain``), the same
bytes the converter would give, so a recording never pays for building it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Literal, TypeGuard, cast, get_args, get_origin

import attrs

from cassette.core.tape.fields import meta_problem, redaction_problem, target_problem
from cassette.core.wire.jsonrpc import JSONNumber, dumps, dumps_bytes, loads
from cassette.core.wire.limits import Limits, TooDeepError, current_limits
from cassette.core.wire.model import (
    FORMAT_VERSION,
    Direction,
    Era,
    Event,
    ExitEvent,
    Header,
    HttpEvent,
    MessageEvent,
    RawEvent,
    RecorderInfo,
    StderrEvent,
)
from cassette.errors import CassetteFormatError, CassetteVersionError

if TYPE_CHECKING:
    import cattrs

# ``converter`` is public too, built on first access (the module's ``__getattr__``).
__all__ = [
    "BOMS",
    "EVENT_TYPES",
    "FAST_JSON_FROM",
    "Decoded",
    "decode",
    "decode_lines",
    "encode",
    "encode_line",
    "line_too_long",
    "split_lines",
]

#: Byte order marks, and what a file that starts with one is (a cassette has none).
BOMS: Final = (
    (b"\xef\xbb\xbf", "starts with a UTF-8 byte order mark (U+FEFF)"),
    (b"\xff\xfe", "is UTF-16 text (it starts with a UTF-16 byte order mark)"),
    (b"\xfe\xff", "is UTF-16 text (it starts with a UTF-16 byte order mark)"),
)

EVENT_TYPES: Final[dict[str, type[Event]]] = {
    cls.kind: cls for cls in (MessageEvent, RawEvent, StderrEvent, ExitEvent, HttpEvent)
}


def _json_object(value: Any, _type: Any) -> Any:
    if not isinstance(value, dict):
        raise TypeError(f"expected a JSON object, got {type(value).__name__}")
    return value


def _plain_float(value: Any, _type: Any) -> float:
    # cattrs would accept "1.5" and True; a cassette written by us never has them. A
    # message may hold any number (``JSONNumber``); the cassette's own fields may not.
    if isinstance(value, JSONNumber):
        raise TypeError(f"expected a finite number, got {value.literal}")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return float(value)


def _plain_str(value: Any, _type: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _plain_int(value: Any, _type: Any) -> int:
    if isinstance(value, JSONNumber):
        raise TypeError(f"expected an integer Python can hold, got {value.literal[:40]}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {type(value).__name__}")
    return value


_JSON_OBJECT_TYPES: Final = (dict[str, Any], Mapping[str, Any])


@cache
def _converter() -> cattrs.Converter:
    """The one converter, built the first time something needs it."""
    import cattrs
    from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

    conv = cattrs.Converter()
    conv.register_structure_hook_func(lambda t: t in _JSON_OBJECT_TYPES, _json_object)
    conv.register_structure_hook(float, _plain_float)
    conv.register_structure_hook(str, _plain_str)
    conv.register_structure_hook(int, _plain_int)
    conv.register_unstructure_hook_func(lambda t: t in _JSON_OBJECT_TYPES, lambda value: value)
    for cls in (RecorderInfo, Header, *EVENT_TYPES.values()):
        # ``seq`` is where the value sits in the file; it is never written into it.
        conv.register_unstructure_hook(
            cls,
            make_dict_unstructure_fn(
                cls, conv, _cattrs_omit_if_default=True, seq=override(omit=True)
            ),
        )
        conv.register_structure_hook(
            cls, make_dict_structure_fn(cls, conv, seq=override(omit=True))
        )
    return conv


def __getattr__(name: str) -> Any:
    # ``codec.converter`` stays public without building it at import time.
    if name == "converter":
        return _converter()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# A migration turns a header-plus-events of format N into format N + 1. None exist yet;
# the table is here so the first format change has an obvious place to go.
_MIGRATIONS: Final[dict[int, Callable[[list[dict[str, Any]]], list[dict[str, Any]]]]] = {}


#: Marks a field with no default: always written.
_REQUIRED: Final = object()


_PLANS: Final[dict[type, tuple[tuple[str, object], ...]]] = {}


def _written_fields(cls: type) -> tuple[tuple[str, object], ...]:
    """``cls``'s fields as a line holds them, each with the default that leaves it out."""
    known = _PLANS.get(cls)
    if known is not None:
        return known
    plan = []
    for field in attrs.fields(cls):
        if field.name == "seq":  # where the value sits in the file; never written into it
            continue
        default = field.default
        if default is attrs.NOTHING:
            default = _REQUIRED
        elif isinstance(default, attrs.Factory):  # type: ignore[arg-type]  # attrs' own marker
            default = default.factory()
        plan.append((field.name, default))
    known = _PLANS[cls] = tuple(plan)
    return known


def _plain(value: Any) -> dict[str, Any]:
    """A header or event as a JSON object, fields at their default left out: what the
    converter writes, without building it. Writing is every recording's hot path, and the
    converter (importing cattrs, generating code per class) cost a recording tens of
    milliseconds at its first line, which is the client's ``initialize`` answer.
    tests/unit/test_codec.py holds the two equal."""
    body: dict[str, Any] = {}
    for name, default in _written_fields(type(value)):
        item = getattr(value, name)
        if default is not _REQUIRED and item == default:
            continue
        body[name] = _plain(item) if attrs.has(type(item)) else item
    return body


def _message_body(event: MessageEvent) -> dict[str, Any]:
    """``_plain`` for a message event, spelled out: nearly every line a recording writes
    is one, and the general walk costs it more per line (docs/architecture.md, "Speed exceptions",
    has the figure)."""
    body: dict[str, Any] = {"kind": "message", "t": event.t, "dir": event.dir}
    body["message"] = event.message
    if event.meta is not None:
        body["meta"] = event.meta
    if event.redacted is not None:
        body["redacted"] = event.redacted
    return body


def _unstructure(value: Header | Event) -> dict[str, Any]:
    if type(value) is MessageEvent:
        return _message_body(value)
    body = _plain(value)
    if isinstance(value, Header):
        # Keep `format` right after `kind` so `head -1` shows the version first.
        fmt = body.pop("format", FORMAT_VERSION)
        return {"kind": "header", "format": fmt, **body}
    return {"kind": value.kind, **body}


def encode(value: Header | Event) -> dict[str, Any]:
    """The JSON object a header or event is stored as."""
    return _unstructure(value)


def encode_line(value: Header | Event) -> bytes:
    """One cassette line, newline included, as UTF-8."""
    return dumps_bytes(_unstructure(value)) + b"\n"


class Decoded:
    """What reading produced: the header, the events, and warnings for a person."""

    __slots__ = ("events", "header", "warnings")

    def __init__(self, header: Header, events: list[Event], warnings: list[str]) -> None:
        self.header = header
        self.events = events
        self.warnings = warnings


def _explain(exc: BaseException, type_: Any) -> str:
    """One reason a field was refused, in words a person fixing the file can use."""
    if isinstance(exc, KeyError):
        return "required field missing"
    if get_origin(type_) is Literal:
        return "must be one of " + ", ".join(dumps(a) for a in get_args(type_))
    if isinstance(exc, TypeError | ValueError):
        return str(exc)
    from cattrs.v import format_exception

    return format_exception(exc, type_)


def _describe(exc: BaseException) -> str:
    import cattrs

    if isinstance(exc, cattrs.BaseValidationError):
        parts = cattrs.transform_error(exc, path="$", format_exception=_explain)
        # "reason @ $.dir" -> "dir: reason"
        return "; ".join(
            f"{where.removeprefix('$.')}: {why}" if where != "$" else why
            for why, _, where in (p.rpartition(" @ ") for p in parts)
        )
    return str(exc)


#: Below this many bytes a cassette is parsed by the standard library even with the
#: ``fast`` extra: importing orjson costs more than it saves on a small cassette, and a
#: replay's start-up is the same either way near this size (docs/architecture.md, "Speed
#: exceptions", has the figures); most cassettes a test suite replays are smaller.
FAST_JSON_FROM: Final = 96 * 1024


def _parse_json(raw: bytes, source: str, lineno: int, fast: bool, limit: int) -> Any:
    """One line's JSON, nested no deeper than ``limit`` levels per message."""
    try:
        # one level more than a message: the event object around it; text, not bytes,
        # takes the standard library's path (``jsonrpc.loads``)
        return loads(raw if fast else raw.decode("utf-8"), limit + 1)
    except TooDeepError as exc:
        raise CassetteFormatError(
            source, lineno, f"JSON nested deeper than the limit of {limit} levels per message"
        ) from exc
    except UnicodeDecodeError as exc:
        raise CassetteFormatError(source, lineno, f"not UTF-8 ({exc.reason})") from exc
    except ValueError as exc:
        raise CassetteFormatError(source, lineno, f"not JSON ({exc})") from exc
    except RecursionError as exc:
        raise CassetteFormatError(source, lineno, "JSON nested too deeply") from exc


def _header(obj: Any, source: str) -> Header:
    if not isinstance(obj, dict) or obj.get("kind") != "header":
        raise CassetteFormatError(
            source, 1, 'line 1 must be the cassette header (an object with "kind": "header")'
        )
    fmt = obj.get("format")
    if isinstance(fmt, bool) or not isinstance(fmt, int) or fmt < 1:
        raise CassetteFormatError(source, 1, f"header has no valid format version: {fmt!r}")
    if fmt > FORMAT_VERSION:
        raise CassetteVersionError(
            source,
            1,
            f"cassette format {fmt} is newer than this cassette-mcp reads (up to "
            f"{FORMAT_VERSION}); upgrade cassette-mcp the way you installed it",
        )
    header = _plain_header(obj) or _converted_header(obj, source)
    problem = target_problem(header.target) or redaction_problem(header.redaction)
    if problem is not None:
        raise CassetteFormatError(source, 1, f"bad header: {problem}")
    return header


def _converted_header(obj: dict[str, Any], source: str) -> Header:
    conv = _converter()
    import cattrs

    try:
        header: Header = conv.structure(obj, Header)
    except (cattrs.BaseValidationError, TypeError, ValueError, KeyError) as exc:
        raise CassetteFormatError(source, 1, f"bad header: {_describe(exc)}") from exc
    return header


_ERAS: Final = frozenset(("legacy", "modern"))


def _plain_header(obj: dict[str, Any]) -> Header | None:
    """The header built directly when every field already has the converter's type."""
    recorder, target = obj.get("recorder"), obj.get("target", {})
    era, version = obj.get("era"), obj.get("protocol_version")
    redaction, fmt = obj.get("redaction"), obj["format"]
    transport, started = obj.get("transport"), obj.get("started_at")
    if (
        type(transport) is not str
        or type(started) is not str
        or type(recorder) is not dict
        or type(recorder.get("name")) is not str
        or type(recorder.get("version")) is not str
        or type(target) is not dict
        or (era is not None and (type(era) is not str or era not in _ERAS))
        or (version is not None and type(version) is not str)
        or (redaction is not None and type(redaction) is not dict)
    ):
        return None
    info = RecorderInfo(recorder["name"], recorder["version"])
    return Header(transport, info, started, target, cast(Era, era), version, redaction, fmt)


def _event(obj: Any, source: str, lineno: int, warnings: list[str]) -> Event | None:
    if not isinstance(obj, dict):
        raise CassetteFormatError(
            source, lineno, f"an event must be a JSON object, got {type(obj).__name__}"
        )
    kind = obj.get("kind")
    plain = _PLAIN.get(kind) if isinstance(kind, str) else None
    if plain is not None:
        fast = plain(obj, lineno - 1)
        if fast is not None:
            return _checked_meta(fast, source, lineno)
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        if not isinstance(kind, str):
            raise CassetteFormatError(source, lineno, 'event has no "kind"')
        if kind == "header":
            raise CassetteFormatError(source, lineno, "a second header")
        warnings.append(f"{source}:{lineno}: skipped unknown event kind {kind!r}")
        return None
    conv = _converter()
    import cattrs

    try:
        event: Event = conv.structure(obj, cls)
    except (cattrs.BaseValidationError, TypeError, ValueError, KeyError) as exc:
        raise CassetteFormatError(source, lineno, f"bad {kind} event: {_describe(exc)}") from exc
    return _checked_meta(_stamp_seq(event, lineno - 1), source, lineno)


def _checked_meta(event: Event, source: str, lineno: int) -> Event:
    """The event, if the ``meta`` members readers rely on have their types (``fields``)."""
    meta = getattr(event, "meta", None)
    if meta:
        problem = meta_problem(meta)
        if problem is not None:
            raise CassetteFormatError(source, lineno, f"bad {event.kind} event: {problem}")
    return event


_DIRECTIONS: Final = frozenset(("c2s", "s2c"))


def _plain_message(obj: dict[str, Any], seq: int) -> MessageEvent | None:
    """The common event, built without the converter when every field is already the type
    the converter would accept unchanged; ``None`` sends anything else the checked way.

    Most of a cassette is message events, and loading one through cattrs costs several
    times the JSON parse. The checks here are the converter's, so both ways agree.
    """
    t, direction, message = obj.get("t"), obj.get("dir"), obj.get("message")
    meta = obj.get("meta")
    if "redacted" in obj:
        return None  # rare: the converter checks the list
    if (
        not isinstance(t, (float, int))
        or isinstance(t, (bool, JSONNumber))
        or type(direction) is not str  # a dict or list here would not even hash
        or direction not in _DIRECTIONS
        or type(message) is not dict
        or (meta is not None and type(meta) is not dict)
    ):
        return None
    return MessageEvent(float(t), cast(Direction, direction), message, meta, seq)


def _number(value: Any) -> TypeGuard[float | int]:
    return isinstance(value, (float, int)) and not isinstance(value, (bool, JSONNumber))


def _plain_stderr(obj: dict[str, Any], seq: int) -> StderrEvent | None:
    t, text = obj.get("t"), obj.get("text")
    if not _number(t) or type(text) is not str:
        return None
    return StderrEvent(float(t), text, seq)


def _plain_exit(obj: dict[str, Any], seq: int) -> ExitEvent | None:
    t, code = obj.get("t"), obj.get("code", False)  # required, though it may be null
    if not _number(t) or (code is not None and type(code) is not int):
        return None
    return ExitEvent(float(t), code, seq)


#: The kinds with a direct way in (see ``_plain_message``).
_PLAIN: Final[dict[str, Callable[[dict[str, Any], int], Event | None]]] = {
    "message": _plain_message,
    "stderr": _plain_stderr,
    "exit": _plain_exit,
}


def _stamp_seq(event: Event, seq: int) -> Event:
    """Stamp an event with its file position (frozen, so this makes a copy)."""
    object.__setattr__(event, "seq", seq)  # fresh object from structure(): safe to stamp
    return event


def decode(
    data: bytes, source: str, *, fast: bool | None = None, limits: Limits | None = None
) -> Decoded:
    """Read a whole cassette from bytes; ``source`` names it in errors and warnings.
    ``fast`` and ``limits`` as for ``decode_lines``; ``fast`` ``None``: by size alone
    (``FAST_JSON_FROM``)."""
    if fast is None:
        fast = len(data) >= FAST_JSON_FROM
    return decode_lines(split_lines(data), source, fast=fast, limits=limits)


def split_lines(data: bytes) -> list[bytes]:
    """``data``'s lines, each with its newline (the last may lack one); only ``\\n`` ends
    a line, as a file's ``readline`` sees it."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _first_line(raw: bytes | None, source: str, fast: bool, depth: int) -> Header:
    """The header line, or why it is not one."""
    if raw is None or not raw.strip():
        raise CassetteFormatError(source, 1, "empty cassette: no header line")
    for mark, what in BOMS:
        if raw.startswith(mark):
            reason = f"the file {what}; a cassette is UTF-8 without one"
            raise CassetteFormatError(source, 1, reason)
    try:
        first = _parse_json(raw, source, 1, fast, depth)
    except CassetteFormatError:
        if not raw.endswith(b"\n"):
            raise CassetteFormatError(
                source, 1, "the header line is cut off: the recorder stopped while writing it"
            ) from None
        raise
    return _header(first, source)


def decode_lines(
    lines: Iterable[bytes],
    source: str,
    limit: int | None = None,
    *,
    fast: bool = True,
    limits: Limits | None = None,
) -> Decoded:
    """Read a cassette line by line (each line with its newline; only the last may lack
    it). A line longer than ``limit`` bytes (default: ``limits.line_limit``) is an error
    naming it: the reader holds one line at a time, so memory is bounded by the limit.
    ``limits`` (default: the run's, ``current_limits``) also bounds each message's
    nesting. ``fast`` False keeps orjson out (``FAST_JSON_FROM``); the events are the same
    either way."""
    chosen = current_limits() if limits is None else limits
    bound = chosen.line_limit if limit is None else limit
    depth = chosen.max_depth
    warnings: list[str] = []
    events: list[Event] = []
    numbered = enumerate(lines, start=1)
    first = next(numbered, (1, None))[1]
    _check_length(first, bound, source, 1)
    header = _first_line(first, source, fast, depth)
    for lineno, raw in numbered:
        _check_length(raw, bound, source, lineno)
        if not raw.strip():
            continue
        try:
            obj = _parse_json(raw, source, lineno, fast, depth)
        except CassetteFormatError:
            # One write carries a whole line and its newline, so only a write cut short by
            # a crash leaves an unterminated last line; complete JSON there is no cut-off.
            if not raw.endswith(b"\n"):
                warnings.append(
                    f"{source}:{lineno}: dropped a last line cut off mid-write "
                    "(the recorder was stopped while writing it)"
                )
                break
            raise
        event = _event(obj, source, lineno, warnings)
        if event is not None:
            events.append(event)
    return Decoded(header, events, warnings)


def _check_length(raw: bytes | None, limit: int, source: str, lineno: int) -> None:
    if raw is not None and len(raw) > limit:
        raise line_too_long(source, lineno, limit)


def line_too_long(source: str, lineno: int, limit: int) -> CassetteFormatError:
    """The error for a line over the reader's limit, saying how to raise it."""
    return CassetteFormatError(
        source,
        lineno,
        f"line longer than {limit} bytes, the limit for one message and its event "
        "(raise it with --max-message-bytes, or max-message-bytes in [tool.cassette])",
    )
