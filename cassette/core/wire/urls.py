"""The URLs a person gives for an HTTP server, checked once, before anything listens.

``record --upstream localhost:3001/mcp`` used to be read as a path with no host, printed
back as ``http://127.0.0.1:407533001/mcp``, and hang; ``ftp://`` was taken. A URL is
checked here as a whole (scheme, host, port) and refused with what is wrong and, where the
fix is plain, what was probably meant.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from cassette.errors import UsageError

__all__ = ["check_http_url"]


def check_http_url(url: str, option: str) -> str:
    """``url`` if it is an ``http://`` or ``https://`` URL with a host and a valid port;
    otherwise a ``UsageError`` naming ``option``."""
    try:
        parts = urlsplit(url)
        port = parts.port  # a port that is not a number from 0 to 65535 raises here
    except ValueError as exc:
        raise UsageError(f"{option}: {url!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        hint = ""
        if "://" not in url:
            hint = f" (did you mean http://{url}?)"
        raise UsageError(f"{option}: {url!r} is not an http:// or https:// URL{hint}")
    if not parts.hostname:
        raise UsageError(f"{option}: {url!r} names no host")
    if port == 0:
        raise UsageError(f"{option}: {url!r} names port 0, which no server listens on")
    return url
