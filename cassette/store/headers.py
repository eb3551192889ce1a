"""Headers for a live server from the command line and the project's ``[tool.cassette]
headers``, expanded from the environment (``cassette.core.redaction.headers`` does the work).

A name given on the command line replaces the project's. Every front end that reaches a
live server over HTTP (``record --upstream``, ``verify``, ``variant``, ``check``, the
pytest fixture) reads them here, so they all mean the same.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from cassette.core.redaction.headers import Expanded, HeaderTemplate, expand, parse_headers
from cassette.errors import UsageError

__all__ = ["project_headers", "templates"]


def templates(
    given: Sequence[str] | Mapping[str, object], settings: Mapping[str, Any] | None = None
) -> tuple[HeaderTemplate, ...]:
    """``given`` (``NAME: VALUE`` strings, or a table), after the project's
    (``[tool.cassette] headers``) that ``given`` does not name again."""
    ours = parse_headers(given)
    configured = (settings or {}).get("headers")
    if configured is None:
        return ours
    if not isinstance(configured, Mapping):
        raise UsageError(
            '[tool.cassette] headers must be a table, e.g. headers = { Authorization = "Bearer '
            '${TOKEN}" }'
        )
    project = parse_headers(configured, "[tool.cassette] headers")
    named = {t.name.lower() for t in ours}
    return (*(t for t in project if t.name.lower() not in named), *ours)


def project_headers(
    given: Sequence[str] | Mapping[str, object] = (),
    settings: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Expanded | None:
    """The headers asked for, expanded from ``environ`` (default: this process's); ``None``
    when there are none. ``settings``: ``[tool.cassette]``, read when not given."""
    if settings is None:
        from cassette.store.config import load_settings

        settings = load_settings()
    found = templates(given, settings)
    if not found:
        return None
    return expand(found, os.environ if environ is None else environ)
