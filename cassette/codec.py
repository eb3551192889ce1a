"""The on-disk shape of a cassette: one cattrs converter, JSONL in and out.

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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, get_args, get_origin

import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.v import format_exception

from cassette.errors import CassetteFormatError, CassetteVersionError
from cassette.jsonrpc import dumps, dumps_bytes, loads
from cassette.model import (
    FORMAT_VERSION,
    Event,
    ExitEvent,
    Header,
    HttpEvent,
    MessageEvent,
    RawEvent,
    RecorderInfo,
    StderrEvent,
)

__all__ = ["EVENT_TYPES", "Decoded", "converter", "decode", "encode", "encode_line"]

converter: Final = cattrs.Converter()

EVENT_TYPES: Final[dict[str, type[Event]]] = {
    cls.kind: cls for cls in (MessageEvent, RawEvent, StderrEvent, ExitEvent, HttpEvent)
}


def _json_object(value: Any, _type: Any) -> Any:
    if not isinstance(value, dict):
        raise TypeError(f"expected a JSON object, got {type(value).__name__}")
    return value


def _plain_float(value: Any, _type: Any) -> float:
    # cattrs would accept "1.5" and True; a cassette written by us never has them.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return float(value)


def _plain_str(value: Any, _type: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _plain_int(value: Any, _type: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {type(value).__name__}")
    return value


_JSON_OBJECT_TYPES: Final = (dict[str, Any], Mapping[str, Any])
converter.register_structure_hook_func(lambda t: t in _JSON_OBJECT_TYPES, _json_object)
converter.register_structure_hook(float, _plain_float)
converter.register_structure_hook(str, _plain_str)
converter.register_structure_hook(int, _plain_int)
converter.register_unstructure_hook_func(lambda t: t in _JSON_OBJECT_TYPES, lambda value: value)


def _register(cls: type[Any]) -> None:
    # ``seq`` is where the value sits in the file; it is never written into it.
    converter.register_unstructure_hook(
        cls,
        make_dict_unstructure_fn(
            cls, converter, _cattrs_omit_if_default=True, seq=override(omit=True)
        ),
    )
    converter.register_structure_hook(
        cls, make_dict_structure_fn(cls, converter, seq=override(omit=True))
    )


for _cls in (RecorderInfo, Header, *EVENT_TYPES.values()):
    _register(_cls)

# A migration turns a header-plus-events of format N into format N + 1. None exist yet;
# the table is here so the first format change has an obvious place to go.
_MIGRATIONS: Final[dict[int, Callable[[list[dict[str, Any]]], list[dict[str, Any]]]]] = {}


def _unstructure(value: Header | Event) -> dict[str, Any]:
    body: dict[str, Any] = converter.unstructure(value)
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
    return format_exception(exc, type_)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, cattrs.BaseValidationError):
        parts = cattrs.transform_error(exc, path="$", format_exception=_explain)
        # "reason @ $.dir" -> "dir: reason"
        return "; ".join(
            f"{where.removeprefix('$.')}: {why}" if where != "$" else why
            for why, _, where in (p.rpartition(" @ ") for p in parts)
        )
    return str(exc)


def _parse_json(raw: bytes, source: str, lineno: int) -> Any:
    try:
        return loads(raw)
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
            f"{FORMAT_VERSION}); upgrade: pip install --upgrade cassette-mcp",
        )
    try:
        header = converter.structure(obj, Header)
    except (cattrs.BaseValidationError, TypeError, ValueError, KeyError) as exc:
        raise CassetteFormatError(source, 1, f"bad header: {_describe(exc)}") from exc
    return header


def _event(obj: Any, source: str, lineno: int, warnings: list[str]) -> Event | None:
    if not isinstance(obj, dict):
        raise CassetteFormatError(
            source, lineno, f"an event must be a JSON object, got {type(obj).__name__}"
        )
    kind = obj.get("kind")
    if kind == "message":
        fast = _plain_message(obj, lineno - 1)
        if fast is not None:
            return fast
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        if not isinstance(kind, str):
            raise CassetteFormatError(source, lineno, 'event has no "kind"')
        if kind == "header":
            raise CassetteFormatError(source, lineno, "a second header")
        warnings.append(f"{source}:{lineno}: skipped unknown event kind {kind!r}")
        return None
    try:
        event: Event = converter.structure(obj, cls)
    except (cattrs.BaseValidationError, TypeError, ValueError, KeyError) as exc:
        raise CassetteFormatError(source, lineno, f"bad {kind} event: {_describe(exc)}") from exc
    return _stamp_seq(event, lineno - 1)


_DIRECTIONS: Final = frozenset(("c2s", "s2c"))


def _plain_message(obj: dict[str, Any], seq: int) -> MessageEvent | None:
    """The common event, built without the converter when every field is already the type
    the converter would accept unchanged; ``None`` sends anything else the checked way.

    Most of a cassette is message events, and loading one through cattrs costs several
    times the JSON parse. The checks here are the converter's, so both ways agree.
    """
    t, direction, message = obj.get("t"), obj.get("dir"), obj.get("message")
    meta = obj.get("meta")
    if (
        not isinstance(t, (float, int))
        or isinstance(t, bool)
        or direction not in _DIRECTIONS
        or type(message) is not dict
        or (meta is not None and type(meta) is not dict)
    ):
        return None
    return MessageEvent(float(t), direction, message, meta, seq)


def _stamp_seq(event: Event, seq: int) -> Event:
    """Stamp an event with its file position (frozen, so this makes a copy)."""
    object.__setattr__(event, "seq", seq)  # fresh object from structure(): safe to stamp
    return event


def decode(data: bytes, source: str) -> Decoded:
    """Read a whole cassette from bytes; ``source`` names it in errors and warnings."""
    lines = data.split(b"\n")
    complete = data.endswith(b"\n")
    if complete:
        lines.pop()
    if not lines or not lines[0].strip():
        raise CassetteFormatError(source, 1, "empty cassette: no header line")
    warnings: list[str] = []
    last = len(lines)
    try:
        first = _parse_json(lines[0], source, 1)
    except CassetteFormatError:
        if last == 1 and not complete:
            raise CassetteFormatError(
                source, 1, "the header line is cut off: the recorder stopped while writing it"
            ) from None
        raise
    header = _header(first, source)
    events: list[Event] = []
    for index in range(1, last):
        raw = lines[index]
        lineno = index + 1
        if not raw.strip():
            continue
        try:
            obj = _parse_json(raw, source, lineno)
        except CassetteFormatError:
            # One write carries a whole line and its newline, so only a write cut short by
            # a crash leaves an unterminated last line; complete JSON there is no cut-off.
            if lineno == last and not complete:
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
