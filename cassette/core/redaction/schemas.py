"""Which JSON Schema governs which part of a message, as the server declared it.

Redaction must not break a schema (``cassette.core.redaction.redactor``), so whoever redacts a
session (the recorder, ``redact -o``, the scanner) follows it with a ``SchemaBook``:
``tools/list`` results teach it each tool's ``inputSchema`` and ``outputSchema``; a
``tools/call`` request is governed by its tool's input schema at ``/params/arguments``,
and its result by the output schema at ``/result/structuredContent``; a server's
``elicitation/create`` request names the form (``requestedSchema``) the client's answer
fills at ``/result/content``. And where a secret must be replaced by a value a schema
allows (a number, an enum member), the sentinels below choose it: fixed values, the
same for every secret. Pure: messages in, schemas out.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from cassette.core.wire.ids import id_key

__all__ = [
    "SchemaBook",
    "number_sentinel",
    "resolved",
    "schema_item",
    "schema_property",
    "string_sentinel",
]

Schemas = dict[tuple[str, ...], Any]


def _params(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


class SchemaBook:
    """The schemas one session has declared so far (see the module docstring)."""

    def __init__(self) -> None:
        self.tools: dict[str, tuple[Any, Any]] = {}
        self._open: dict[object, tuple[str, str]] = {}  # (dir, stream, id) -> (method, tool)
        self._forms: dict[object, Any] = {}

    def schemas(self, direction: str, message: dict[str, Any], stream: object = None) -> Schemas:
        """The schemas that govern parts of ``message`` (call before redacting it)."""
        method = message.get("method")
        if "id" not in message:
            return {}
        if isinstance(method, str):
            return self._request(direction, method, message, stream)
        other = "s2c" if direction == "c2s" else "c2s"
        key = (other, stream, *id_key(message.get("id")))
        if direction == "c2s":
            form = self._forms.pop(key, None)
            return {("result", "content"): form} if isinstance(form, dict) else {}
        asked = self._open.pop(key, ("", ""))
        if asked[0] == "tools/list":
            self._learn(message.get("result"))
        found = self.tools.get(asked[1]) if asked[0] == "tools/call" else None
        if found and isinstance(found[1], dict):
            return {("result", "structuredContent"): found[1]}
        return {}

    def _request(
        self, direction: str, method: str, message: dict[str, Any], stream: object
    ) -> Schemas:
        key = (direction, stream, *id_key(message.get("id")))
        params = _params(message)
        if method == "elicitation/create":
            self._forms[key] = params.get("requestedSchema")
            return {}
        if method not in ("tools/call", "tools/list"):
            return {}
        name = params.get("name")
        tool = name if isinstance(name, str) else ""
        self._open[key] = (method, tool)
        found = self.tools.get(tool)
        if method == "tools/call" and found and isinstance(found[0], dict):
            return {("params", "arguments"): found[0]}
        return {}

    def _learn(self, result: object) -> None:
        tools = result.get("tools") if isinstance(result, dict) else None
        for tool in tools if isinstance(tools, list) else ():
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                self.tools[tool["name"]] = (tool.get("inputSchema"), tool.get("outputSchema"))


# -- sentinels: values a schema allows, standing for a secret --------------------------


def resolved(schema: Any) -> Any:
    """The schema itself, or the first ``anyOf``/``oneOf`` branch that is an object schema
    (enough to choose a sentinel; a cassette never needs a full validator)."""
    if not isinstance(schema, dict):
        return None
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            for branch in branches:
                if isinstance(branch, dict) and branch.get("type") != "null":
                    return {**schema, **branch}
    return schema


def schema_property(schema: Any, key: str) -> Any:
    schema = resolved(schema)
    if schema is None:
        return None
    props = schema.get("properties")
    if isinstance(props, dict) and isinstance(props.get(key), dict):
        return props[key]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def schema_item(schema: Any, index: int) -> Any:
    if schema is None:
        return None
    schema = resolved(schema)
    if schema is None:
        return None
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index]
    items = schema.get("items")
    return items if isinstance(items, dict) else None


def number_sentinel(value: int | float, schema: Any) -> int | float:
    """A fixed number of the same kind that the schema allows: never the secret."""
    schema = schema if isinstance(schema, dict) else {}
    members = [m for m in schema.get("enum", ()) if isinstance(m, int | float)]
    if members:
        return members[0]
    integer = isinstance(value, int) or schema.get("type") == "integer"
    low = schema.get("minimum")
    exclusive = schema.get("exclusiveMinimum")
    sentinel: float = 0
    if isinstance(low, int | float) and not isinstance(low, bool):
        sentinel = max(sentinel, low) if low > 0 else low
    if isinstance(exclusive, int | float) and not isinstance(exclusive, bool):
        sentinel = max(sentinel, exclusive + 1)
    high = schema.get("maximum")
    if isinstance(high, int | float) and not isinstance(high, bool) and sentinel > high:
        sentinel = high
    return math.ceil(sentinel) if integer else float(sentinel)


_FORMAT_SENTINELS: Final = {
    "email": "redacted@example.invalid",
    "uri": "https://redacted.invalid/",
    "url": "https://redacted.invalid/",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "time": "00:00:00Z",
    "uri-reference": "https://redacted.invalid/",
    "iri": "https://redacted.invalid/",
    "idn-email": "redacted@example.invalid",
    "hostname": "redacted.invalid",
    "ipv4": "192.0.2.0",
    "ipv6": "2001:db8::",
}


#: formats whose sentinel names the placeholder's rule and number
#: (``redacted-key-2@example.invalid``): two secrets are told apart, and nothing of either
#: is in it
_NUMBERED_FORMATS: Final = {
    "email": "redacted-{}-{}@example.invalid",
    "idn-email": "redacted-{}-{}@example.invalid",
    "uri": "https://redacted-{}-{}.invalid/",
    "url": "https://redacted-{}-{}.invalid/",
    "uri-reference": "https://redacted-{}-{}.invalid/",
    "iri": "https://redacted-{}-{}.invalid/",
    "hostname": "redacted-{}-{}.invalid",
}
#: the rule a sentinel's bare number belongs to: values under secret names, which is
#: what typed sentinels stand for (a number from another rule could repeat one of these)
_SENTINEL_RULE: Final = "key"


def _key_number(holder: str) -> int | None:
    from cassette.core.redaction.redacted import numbered_placeholder

    found = numbered_placeholder(holder)
    return found[1] if found is not None and found[0] == _SENTINEL_RULE else None


def _numbered(example: str, number: int | None, fits: Callable[[str], bool]) -> str:
    """``example`` with its last characters the ``key`` placeholder's ``number``
    (``ak_0000000000000003``), when the schema still allows that; else ``example``, the
    same for every secret. Either way nothing of the secret is in it."""
    digits = str(number) if number is not None else ""
    if not digits or len(digits) > len(example):
        return example
    candidate = example[: len(example) - len(digits)] + digits
    return candidate if fits(candidate) else example


def _patterned(holder: str, pattern: str, shortest: Any, longest: Any) -> str | None:
    """The placeholder if ``pattern`` allows it, else an example of the pattern
    (``cassette.core.redaction.sentinels``) numbered as the placeholder is where the pattern allows,
    within the schema's lengths; ``None`` if neither."""
    from cassette.core.redaction.sentinels import pattern_allows, pattern_example

    low = shortest if isinstance(shortest, int) else 0
    high = longest if isinstance(longest, int) else None

    def fits(text: str) -> bool:
        return len(text) >= low and (high is None or len(text) <= high)

    number = _key_number(holder)
    for candidate in (holder, pattern_example(pattern), pattern_example(pattern, low)):
        if candidate is None or not fits(candidate):
            continue
        if candidate == holder:
            if pattern_allows(pattern, holder):
                return holder
            continue
        return _numbered(candidate, number, lambda t: fits(t) and pattern_allows(pattern, t))
    return None


def _format_sentinel(holder: str, fmt: str) -> str:
    from cassette.core.redaction.redacted import EMAIL_RULE, numbered_placeholder

    found = numbered_placeholder(holder)
    if found is not None and fmt in ("email", "idn-email") and found[0] == EMAIL_RULE:
        return holder  # a personal-data placeholder is an address already
    if found is not None and fmt in _NUMBERED_FORMATS:
        return _NUMBERED_FORMATS[fmt].format(*found)
    number = _key_number(holder)
    if fmt == "uuid" and number is not None and number < 10**12:
        return f"00000000-0000-0000-0000-{number:012d}"
    return _FORMAT_SENTINELS[fmt]


def string_sentinel(holder: str, schema: Any) -> str:
    """The placeholder, unless the schema forbids it: then a fixed string it allows."""
    schema = schema if isinstance(schema, dict) else {}
    members = [m for m in schema.get("enum", ()) if isinstance(m, str)]
    const, fmt = schema.get("const"), schema.get("format")
    longest, shortest = schema.get("maxLength"), schema.get("minLength")
    fixed: str | None = None
    if members:
        fixed = members[0]
    elif isinstance(const, str):
        fixed = const
    elif isinstance(fmt, str) and fmt in _FORMAT_SENTINELS:
        fixed = _format_sentinel(holder, fmt)
    elif isinstance(schema.get("pattern"), str) and (
        (found := _patterned(holder, schema["pattern"], shortest, longest)) is not None
    ):
        fixed = found
    elif (
        schema.get("pattern") is not None
        or isinstance(longest, int)
        or (isinstance(shortest, int) and len(holder) < shortest)
    ):
        size = shortest if isinstance(shortest, int) and shortest > 0 else 1
        if isinstance(longest, int):
            size = min(max(size, min(len(holder), longest)), longest)
        fixed = ("0" if schema.get("pattern") is not None else "*") * size
    return holder if fixed is None else fixed
