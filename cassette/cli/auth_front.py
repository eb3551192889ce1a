"""``replay --require-auth``: an HTTP front that asks for a bearer token, so a client's
handling of authorization can be tested offline (``cassette.transports._http_auth``).

Kept apart from ``cassette.cli.headers`` so a replay imports nothing that expands or
redacts credentials.
"""

from __future__ import annotations

import argparse

from cassette.errors import UsageError

__all__ = ["require_auth", "require_auth_options"]


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
    servers: tuple[str, ...] = ()
    if args.auth_server:  # a plain replay imports no URL checks
        from cassette.core.urls import check_http_url

        servers = tuple(check_http_url(url, "--auth-server") for url in args.auth_server)
    if servers and not args.require_auth:
        raise UsageError("--auth-server is for --require-auth")
    if args.require_auth and front != "streamable-http":
        raise UsageError("--require-auth is for the streamable HTTP front (--front http)")
    return bool(args.require_auth), servers
