"""``--header 'NAME: VALUE'``: headers every command that reaches a live server over HTTP
sends with each request, their values taken from the environment (``${GITHUB_TOKEN}``).

The same templates may come from ``[tool.cassette] headers`` (a table of names to values);
a name given on the command line replaces the project's. Templates are expanded here, once,
from this process's environment (``cassette.core.headers``): a variable that is not set
is refused before anything is sent or recorded, and no message ever shows a value.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any

from cassette.core.headers import Expanded, HeaderTemplate, expand, parse_headers
from cassette.core.redaction import Redactor
from cassette.errors import UsageError

__all__ = ["header_options", "upstream_headers", "with_header_secrets"]


def header_options(parser: argparse.ArgumentParser, what: str = "the server") -> None:
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        dest="headers",
        help=f"send this header to {what} with every HTTP request (repeatable); VALUE may "
        "name environment variables, expanded when the command runs: 'Authorization: "
        "Bearer ${GITHUB_TOKEN}' (quote it so the shell leaves it alone). Values are never "
        "recorded or printed; the cassette keeps the header names. Also [tool.cassette] "
        "headers",
    )


def templates(
    given: list[str], settings: Mapping[str, Any] | None = None
) -> tuple[HeaderTemplate, ...]:
    """The command line's templates, after the project's (``[tool.cassette] headers``)
    that the command line does not name again."""
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


def upstream_headers(
    args: argparse.Namespace, settings: Mapping[str, Any] | None = None
) -> Expanded | None:
    """The headers ``args`` ask for (and the project's), expanded from the environment;
    ``None`` when there are none. ``settings``: ``[tool.cassette]``, read when not given."""
    given = list(args.headers)
    if settings is None:
        from cassette.store.config import load_settings

        settings = load_settings()
    found = templates(given, settings)
    if not found:
        return None
    return expand(found, os.environ)


def with_header_secrets(redactor: Redactor | None, expanded: Expanded | None) -> Redactor | None:
    """``redactor``, also redacting the header values wherever an upstream echoes them."""
    if redactor is None or expanded is None:
        return redactor
    return redactor.with_literals(expanded.secrets)


def require_auth_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--require-auth",
        action="store_true",
        help="HTTP front: answer a request without a bearer token with 401 and a "
        "WWW-Authenticate challenge naming this front's protected resource metadata (RFC "
        "9728), to test a client's handling of authorization offline. Only the token's "
        "presence is checked, never its validity; without this flag a replay needs no "
        "credentials",
    )
    parser.add_argument(
        "--auth-server",
        action="append",
        default=[],
        metavar="URL",
        help="with --require-auth: an authorization server the metadata lists "
        "(repeatable; default none)",
    )


def require_auth(args: argparse.Namespace, front: str) -> tuple[bool, tuple[str, ...]]:
    """``--require-auth`` and ``--auth-server``, checked: for the streamable HTTP front."""
    from cassette.core.urls import check_http_url

    servers = tuple(check_http_url(url, "--auth-server") for url in args.auth_server)
    if servers and not args.require_auth:
        raise UsageError("--auth-server is for --require-auth")
    if args.require_auth and front != "streamable-http":
        raise UsageError("--require-auth is for the streamable HTTP front (--front http)")
    return bool(args.require_auth), servers
