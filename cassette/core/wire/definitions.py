"""What a tool definition must be, as MCP says: its name, and its JSON Schemas.

Shared by ``cassette check`` (a live server's tools) and ``cassette mock --validate`` (a
manifest's): one rule set, so both report a problem the same way. Schemas are validated
with ``jsonschema`` (the ``tools`` extra) against the draft each declares in ``$schema``
(2020-12 when none is declared); without it only the shape is checked.
"""

from __future__ import annotations

import re
from typing import Any, Final

import attrs

__all__ = ["TOOL_NAME", "Issue", "schema_checker", "schema_issues"]

#: The tool names MCP recommends (SEP-986): 1-128 of A-Z a-z 0-9 _ . -
TOOL_NAME: Final = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


@attrs.frozen
class Issue:
    """One finding: ``severity`` is ``error`` or ``warning``."""

    severity: str
    message: str


def schema_checker() -> Any:
    """The ``jsonschema`` module, or ``None`` when the ``tools`` extra is not installed."""
    try:
        import jsonschema  # type: ignore[import-untyped]
    except ImportError:
        return None
    return jsonschema


def schema_issues(jsonschema: Any, where: str, schema: Any, *, required: bool) -> list[Issue]:
    """What is wrong with a tool's input or output schema (``where`` names it): missing,
    not an object, not ``"type": "object"``, or (with ``jsonschema``) not a valid schema of
    the draft it declares."""
    if schema is None:
        return [Issue("error", f"{where} is missing")] if required else []
    if not isinstance(schema, dict):
        return [Issue("error", f"{where} is not a JSON object")]
    out: list[Issue] = []
    if schema.get("type") != "object":
        out.append(Issue("error", f'{where} must have "type": "object"'))
    if jsonschema is None:
        return out
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        path = "/" + "/".join(str(p) for p in exc.path) if exc.path else ""
        out.append(Issue("error", f"{where} is not a valid {cls.__name__}: {path} {exc.message}"))
    return out
