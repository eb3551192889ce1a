"""Classify one transport frame as JSON-RPC, without trusting it.

A recorder sits between two programs it does not control, so every frame may be anything:
a well-formed request, a server's stray ``print`` on stdout, a 2025-03-26 batch, or bytes
that are not even UTF-8. ``classify`` never raises; it says what the frame is and hands back
the parsed value when there is one. Everything downstream (recorder, replayer, matcher)
branches on ``Kind`` instead of re-inspecting dictionaries.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from cassette.core.wire.kinds import SINGLE_MESSAGES, Kind
from cassette.core.wire.limits import TooDeepError, check_depth

if TYPE_CHECKING:
    from cassette.core.wire.classified import Classified

__all__ = [
    "SINGLE_MESSAGES",
    "Classified",
    "JSONNumber",
    "JSONObject",
    "Kind",
    "RawFrame",
    "classify",
    "classify_parts",
    "classify_value",
    "dumps",
    "dumps_bytes",
    "error_response",
    "fast_json",
    "find_literal",
    "is_request_id",
    "keeping_literals",
    "loads",
    "one_shot",
    "pretty",
]

JSONObject = dict[str, Any]


class JSONNumber(float):
    """A number as a peer wrote it, where a Python number would change it: ``1e400`` (a
    float overflows to infinity), an integer longer than Python converts (4300 digits by
    default), and the ``NaN``/``Infinity`` literals Python's own ``json.dumps`` writes.

    Why: the recorder is transparent, so what a server sent must replay digit for digit,
    and a tool must not crash on, or silently rewrite, a number it merely shows. The value
    is a float (infinity or NaN), so code that asks ``isinstance(x, float)`` still works;
    ``literal`` is the text, and every encoder here writes it back unchanged
    (``keeping_literals``). Two are equal when their texts are."""

    __slots__ = ("literal",)
    literal: str

    def __new__(cls, literal: str) -> JSONNumber:
        try:
            number = float(literal)
        except ValueError:  # an integer past Python's conversion limit
            number = float("-inf") if literal.startswith("-") else float("inf")
        self = super().__new__(cls, number)
        self.literal = literal
        return self

    def __repr__(self) -> str:
        return self.literal

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if isinstance(other, JSONNumber):
            return self.literal == other.literal
        return float.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.literal)

    def __reduce__(self) -> tuple[type[JSONNumber], tuple[str]]:
        return (JSONNumber, (self.literal,))


def _keep_constant(name: str) -> JSONNumber:
    # RFC 8259 has no NaN or Infinity, but Python servers write them (``json.dumps``'s
    # default): a recording keeps them as sent rather than dropping the whole message.
    return JSONNumber(name)


def _keep_float(text: str) -> float:
    """A float literal's value, or the literal itself where a float cannot hold it."""
    number = float(text)
    if number - number == 0.0:  # finite
        return number
    return JSONNumber(text)


def _keep_int(text: str) -> int | JSONNumber:
    try:
        return int(text)
    except ValueError:  # longer than ``sys.get_int_max_str_digits``
        return JSONNumber(text)


#: Stands for a ``JSONNumber`` while the C encoder writes the rest (``keeping_literals``):
#: random per process, so no string a peer sends can look like it.
_LITERAL_MARK: Final = "cassette-literal-" + os.urandom(8).hex() + "-"


@functools.cache
def _marked_pattern() -> re.Pattern[str]:
    """The marks in encoded text, compiled the first time a value holds a literal."""
    return re.compile('"' + re.escape(_LITERAL_MARK) + '([0-9]+)"')


def _marked(value: Any, literals: list[str]) -> Any:
    """``value`` with each ``JSONNumber`` replaced by a numbered mark (``_LITERAL_MARK``)."""
    if isinstance(value, JSONNumber):
        literals.append(value.literal)
        return f"{_LITERAL_MARK}{len(literals) - 1}"
    if isinstance(value, dict):
        return {key: _marked(item, literals) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_marked(item, literals) for item in value]
    return value


def keeping_literals(encode: Callable[[Any], str]) -> Callable[[Any], str]:
    """``encode``, writing each ``JSONNumber`` as its literal. The C encoders write a float
    subclass with float's own ``repr`` (and refuse infinity), so a value holding one is
    encoded with marks in its place, which are then swapped for the literals. Only a value
    the plain encoder refuses pays for that walk."""

    def encoded(value: Any) -> str:
        try:
            return encode(value)
        except ValueError:
            literals: list[str] = []
            marked = _marked(value, literals)
            if not literals:
                raise
            marks = _marked_pattern()
            return marks.sub(lambda match: literals[int(match[1])], encode(marked))

    return encoded


def find_literal(value: Any, at: str = "") -> tuple[str, str] | None:
    """The JSON Pointer and text of the first ``JSONNumber`` in ``value``, if any: where a
    format that cannot hold one exactly (a mock manifest, TOML) must refuse, and say where."""
    if isinstance(value, JSONNumber):
        return at, value.literal
    items: Any = ()
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    for key, item in items:
        step = str(key).replace("~", "~0").replace("/", "~1")
        found = find_literal(item, f"{at}/{step}")
        if found is not None:
            return found
    return None


def pretty(value: Any, *, indent: int | None = 2, ensure_ascii: bool = True) -> str:
    """``json.dumps(value, indent=...)`` for a person to read, numbers as they were sent."""
    encoder = json.JSONEncoder(indent=indent, ensure_ascii=ensure_ascii, allow_nan=False)
    return keeping_literals(encoder.encode)(value)


def one_shot(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """``encoder.encode``, with its C encoder built once. Why: ``encode`` builds a new C
    encoder (and a closure) on each call, a large part of encoding a small answer (the
    speed-exceptions table in docs/architecture.md has the figure), which a replay does
    for every message it sends. Where Python has no C encoder, or the
    encoder keeps state between calls (``check_circular``, ``indent``), ``encode`` itself."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None or encoder.check_circular or encoder.indent is not None:
        return encoder.encode
    ascii_only = encoder.ensure_ascii
    strings = json.encoder.encode_basestring_ascii if ascii_only else json.encoder.encode_basestring
    c_encode = make(
        None,
        encoder.default,
        strings,
        None,
        encoder.key_separator,
        encoder.item_separator,
        encoder.sort_keys,
        encoder.skipkeys,
        encoder.allow_nan,
    )

    def encode(value: Any) -> str:
        return "".join(c_encode(value, 0))

    return encode


_decoder = json.JSONDecoder(parse_constant=_keep_constant, parse_float=_keep_float)
#: Reads integers one by one, keeping those too long for ``int``: tried only after the
#: plain decoder refused a text, so an ordinary message pays no call per integer.
_long_int_decoder = json.JSONDecoder(
    parse_constant=_keep_constant, parse_float=_keep_float, parse_int=_keep_int
)
_raw_decode = _decoder.raw_decode
_JSON_SPACE: Final = " \t\n\r"


def _decode(text: str) -> Any:
    """``json.loads`` with the ``_decoder``, skipping its Python layers for a text that
    starts with its value (every frame): ``decode`` runs two whitespace expressions around
    ``raw_decode``. The same value and the same errors. A text the decoder refuses is
    read once more keeping over-long integers (``_long_int_decoder``)."""
    try:
        if not text or text[0] in _JSON_SPACE:
            return _decoder.decode(text)
        value, end = _raw_decode(text)  # inline: this runs for every line and every frame
        if end != len(text):
            extra = text[end:].lstrip(_JSON_SPACE)
            if extra:
                raise json.JSONDecodeError("Extra data", text, len(text) - len(extra))
        return value
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        try:
            return _long_int_decoder.decode(text)
        except ValueError:
            raise exc from None


_encode = keeping_literals(
    one_shot(
        json.JSONEncoder(
            ensure_ascii=False, separators=(",", ":"), check_circular=False, allow_nan=False
        )
    )
)
_encode_ascii = keeping_literals(
    one_shot(json.JSONEncoder(separators=(",", ":"), check_circular=False, allow_nan=False))
)


def is_request_id(value: object) -> bool:
    """JSON-RPC ids are strings or integers; ``bool`` is an int in Python but not in JSON."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def classify_value(value: object) -> Kind:  # noqa: PLR0911 (one return per rule reads best)
    """Classify an already-decoded JSON value."""
    if isinstance(value, list):
        return Kind.BATCH if value else Kind.INVALID
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        return Kind.INVALID
    method = value.get("method")
    if isinstance(method, str):
        if "id" not in value:
            return Kind.NOTIFICATION
        return Kind.REQUEST if is_request_id(value["id"]) else Kind.INVALID
    if "result" in value and "error" not in value:
        return Kind.RESPONSE if is_request_id(value.get("id")) else Kind.INVALID
    if isinstance(value.get("error"), dict) and "result" not in value:
        # An error may carry a null id when the server could not read the request's id.
        msg_id = value.get("id")
        return Kind.ERROR if msg_id is None or is_request_id(msg_id) else Kind.INVALID
    return Kind.INVALID


def is_answer(value: object) -> bool:
    """A response or an error response: what ends a request."""
    return classify_value(value) in (Kind.RESPONSE, Kind.ERROR)


def classify(data: bytes | str) -> Classified:
    """Decode and classify one frame; never raises."""
    from cassette.core.wire.classified import Classified  # a stdio replay never builds one

    kind, value, problem, _ = classify_parts(data)
    return Classified(kind, value, problem)


def classify_parts(data: bytes | str) -> tuple[Kind, Any, str | None, str | None]:
    """``classify`` as plain values, with the frame's text (``None`` when it is not
    UTF-8): what a replay asks of every frame, without building a ``Classified`` or
    decoding the bytes a second time (docs/architecture.md, "Speed exceptions", has the figure)."""
    try:
        check_depth(data)  # before parsing: Python's parser would recurse that deep
    except TooDeepError as exc:
        return Kind.NOT_JSON, None, f"JSON {exc}", None
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return Kind.NOT_JSON, None, None, None
    else:
        text = data
    try:
        value = _decode(text)
    except (ValueError, RecursionError):
        return Kind.NOT_JSON, None, None, text
    return classify_value(value), value, None, text


def dumps(value: Any) -> str:
    """Compact JSON with non-ASCII kept as is: the shape every MCP SDK writes."""
    return _encode(value)


class RawFrame:
    """Bytes a front writes as they are, where a message would go: what a fault plan's
    ``malformed`` frame sends (a JSON-RPC message cannot be malformed). It classifies as
    ``Kind.INVALID``."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __repr__(self) -> str:
        return f"RawFrame({self.data!r})"


def dumps_bytes(value: Any) -> bytes:
    """``dumps`` as UTF-8; a lone surrogate (legal in a JSON escape, not in UTF-8) is kept
    as its ``\\uXXXX`` escape instead, so what was read is exactly what reads back. A
    ``RawFrame`` is its bytes, unchanged."""
    if isinstance(value, RawFrame):
        return value.data
    text = _encode(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _encode_ascii(value).encode("ascii")


def loads(text: str | bytes, depth_limit: int | None = None) -> Any:
    """JSON, numbers Python cannot hold kept as ``JSONNumber`` (``NaN`` and ``Infinity``
    too, as Python's ``json.dumps`` writes them); nesting deeper than ``depth_limit``
    (default: the process's) is refused (``TooDeepError``).

    With the ``fast`` extra installed, bytes are parsed by orjson where its answer is
    exactly the standard library's (``fast_json``); everything else takes the standard
    library's path, with its errors."""
    check_depth(text, depth_limit)
    if isinstance(text, bytes):
        fast = _fast[0] if _fast else _find_fast()
        if fast is not None and _NINETEEN_DIGITS not in text.translate(_DIGITS_ONLY):
            try:
                return fast(text)
            except ValueError:
                pass  # a lone surrogate, infinity, not JSON: the stdlib decides, and says why
        return _decode(text.decode("utf-8"))
    return _decode(text)


#: A run of 19 digits: an integer that may not fit in 64 bits, which orjson would turn
#: into a float where the standard library keeps it exact. Anywhere in the line (inside a
#: string too): a false alarm only costs the standard library's parse. Looked for by
#: mapping every digit to ``0`` and everything else to a space, then a plain substring
#: search: two passes in C (a regular expression cost more than orjson saved).
_DIGITS_ONLY: Final = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
_NINETEEN_DIGITS: Final = b"0" * 19
_fast: list[Callable[[bytes], Any] | None] = []  # orjson.loads or None: an import, cached


def _find_fast() -> Callable[[bytes], Any] | None:
    """orjson's parser when the ``fast`` extra is installed (looked up once). orjson
    refuses what the standard library would give differently (a lone surrogate, NaN, a
    number past a double), keeps the last of duplicate keys at the first one's place as
    the standard library does (a test holds that), and makes a float of a big integer:
    ``_NINETEEN_DIGITS`` keeps those from it.

    Whether a cassette is parsed by it at all is the caller's choice, passed as a value:
    the codec gives ``loads`` text, not bytes, when told not to (``fast=False``); the
    store decides, from the cassette's size and the ``CASSETTE_FAST_JSON`` switch it reads
    from the environment (``cassette.store.config.fast_json_enabled``)."""
    fast: Callable[[bytes], Any] | None = None
    try:
        import orjson
    except ImportError:
        pass
    else:
        fast = orjson.loads
    _fast[:] = [fast]
    return fast


def fast_json() -> bool:
    """Whether orjson is there to parse cassettes (the ``fast`` extra is installed)."""
    return (_fast[0] if _fast else _find_fast()) is not None


def error_response(
    msg_id: object, code: int, message: str, data: object | None = None
) -> JSONObject:
    """Build a JSON-RPC error response object."""
    error: JSONObject = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
#: Implementation-defined server error used for a replay miss (JSON-RPC reserves
#: -32000..-32099 for servers). Documented in docs/replay.md.
REPLAY_MISS: Final = -32099


if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        """``Classified``, built on first use (``cassette.core.wire.classified``)."""
        if name != "Classified":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from cassette.core.wire.classified import Classified

        return Classified
