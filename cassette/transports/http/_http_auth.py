"""The MCP authorization flow through a recording proxy, and a replay front that asks for
a token: the proxy presents itself as the protected resource.

Theory of operation
-------------------
A client that runs the MCP authorization flow (OAuth 2.1; protected resource metadata,
RFC 9728; authorization server metadata, RFC 8414) learns where to log in from the
server it talks to. Through a proxy, that server is the proxy: a conforming client
refuses metadata whose ``resource`` is not the URL it connected to. So the proxy

* answers ``/.well-known/oauth-protected-resource`` (and the form suffixed with its MCP
  path) with the upstream's own metadata, ``resource`` rewritten to the proxy's URL; the
  upstream's ``authorization_servers`` and scopes are kept, so the client logs in where
  the upstream's tokens come from, directly, as in production;
* rewrites ``resource_metadata`` in an upstream ``WWW-Authenticate`` to its own metadata
  URL (and remembers the upstream's, to fetch from);
* fetches metadata only from the upstream's own origin (scheme, host and port): a
  challenge that names another origin is never followed, since the proxy would otherwise
  fetch, with the person's network position, whatever URL a server or an attacker in
  between chose; and serves a document only when its ``resource`` names the upstream
  (RFC 9728 section 3.3: the same origin, and the upstream's path or a parent of it, as
  the MCP SDKs compare), so a client is never sent to log in for another resource;
* forwards the token the client obtained (the ``Authorization`` header passes as any
  header does), and records none of it: the metadata exchanges never reach the tap, an
  upstream's refusal is recorded as its status alone (the cutter leaves such a request
  out of the session, ``cassette.core.wire.exchanges``), and header values are never recorded.

The proxy's own URL is read off each request (scheme and ``Host``, which the DNS-rebinding
guard has already admitted), so it is right whatever port was bound.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

import anyio
import attrs

from cassette.transports.http._http import (
    Asgi,
    Guard,
    Receive,
    Scope,
    Send,
    header,
    read_body,
    send_simple,
)

if TYPE_CHECKING:
    import httpx

__all__ = [
    "WELL_KNOWN",
    "AuthFacade",
    "RequireBearer",
    "auth_refusal",
    "challenge",
    "metadata_url",
    "own_url",
    "with_extra",
]

WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
_PARAM: Final = re.compile(r'resource_metadata\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))', re.I)
_METADATA_TIMEOUT: Final = 10.0
_METADATA_LIMIT: Final = 1024 * 1024


def with_extra(
    headers: Iterable[tuple[bytes, bytes]], extra: Mapping[str, str]
) -> list[tuple[str, str]]:
    """The client's headers as ``str`` pairs, those the person recording gave (``extra``)
    in place of any the client sent by the same names."""
    replaced = {name.lower().encode("latin-1") for name in extra}
    kept = [
        (k.decode("latin-1"), v.decode("latin-1")) for k, v in headers if k.lower() not in replaced
    ]
    return [*kept, *extra.items()]


def own_url(scope: Scope, path: str) -> str:
    """This server's URL for ``path``, as the client reached it."""
    scheme = scope.get("scheme", "http")
    host = header(scope, b"host")
    if not host:
        server = scope.get("server") or ("127.0.0.1", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{scheme}://{host}{path}"


def metadata_url(resource: str) -> str:
    """The RFC 9728 metadata URL of ``resource``: the well-known path between the host
    and the resource's path."""
    parts = urlsplit(resource)
    path = "" if parts.path in ("", "/") else parts.path
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{path}"


def metadata_paths(path: str) -> frozenset[str]:
    """The paths a client may ask for the metadata of the resource at ``path``: the
    suffixed form first in RFC 9728, the root form as SDKs fall back to it."""
    suffix = "" if path in ("", "/") else path
    return frozenset({WELL_KNOWN + suffix, WELL_KNOWN})


def challenge(resource_metadata: str) -> bytes:
    """A ``WWW-Authenticate`` value asking for a bearer token, pointing at the metadata."""
    return f'Bearer resource_metadata="{resource_metadata}"'.encode("latin-1")


def auth_refusal(status: int, headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether an upstream answer refuses the request's credentials: any 401, and a 403
    that comes with a ``WWW-Authenticate`` challenge (not enough scope), as opposed to a
    403 for anything else (a refused origin)."""
    if status == 401:
        return True
    return status == 403 and any(bytes(k).lower() == b"www-authenticate" for k, _ in headers)


@attrs.define
class AuthFacade:
    """One recording proxy's face as a protected resource (see the module docstring)."""

    upstream: str
    path: str
    #: the upstream's metadata URL, as its last ``WWW-Authenticate`` named it
    announced: str | None = None

    def answers(self, scope: Scope) -> bool:
        return scope["method"] in ("GET", "HEAD") and scope["path"] in metadata_paths(self.path)

    def rewrite(
        self, scope: Scope, headers: list[tuple[bytes, bytes]]
    ) -> list[tuple[bytes, bytes]]:
        """Response headers with ``resource_metadata`` in any ``WWW-Authenticate`` pointing
        to this proxy's own metadata."""
        ours = metadata_url(own_url(scope, self.path))
        out = []
        for key, value in headers:
            if bytes(key).lower() == b"www-authenticate":
                text = self._rewritten(bytes(value).decode("latin-1"), ours)
                out.append((key, text.encode("latin-1")))
            else:
                out.append((key, value))
        return out

    def _rewritten(self, text: str, ours: str) -> str:
        def swap(match: re.Match[str]) -> str:
            found = match.group(1) if match.group(1) is not None else match.group(2)
            if found and found.startswith(("http://", "https://")):
                self.announced = found.replace('\\"', '"')
            return f'resource_metadata="{ours}"'

        return _PARAM.sub(swap, text)

    def candidates(self) -> list[str]:
        """Where the upstream's metadata may be, in the order a client would look: on the
        upstream's own origin only (an announced URL elsewhere is left out)."""
        announced = self.announced
        found = [announced] if announced and _origin(announced) == _origin(self.upstream) else []
        suffixed = metadata_url(self.upstream)
        parts = urlsplit(self.upstream)
        root = f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}"
        return list(dict.fromkeys([*found, suffixed, root]))

    async def serve(self, scope: Scope, send: Send, client: httpx.AsyncClient) -> None:
        """The upstream's metadata with this proxy as its resource; 404 if it has none.
        Nothing of it is recorded: it describes the login, not the session."""
        for url in self.candidates():
            document = await _fetch(client, url)
            if document is not None and names(document.get("resource"), self.upstream):
                document["resource"] = own_url(scope, self.path)
                body = json.dumps(document).encode()
                if scope["method"] == "HEAD":
                    body = b""
                await send_simple(send, 200, body, b"application/json", _NO_STORE)
                return
        await send_simple(send, 404, b'{"error":"not_found"}', b"application/json")


_NO_STORE: Final = ((b"cache-control", b"no-store"),)
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int] | None:
    """A URL's origin (scheme, host, port), ``None`` for what is not an HTTP(S) URL."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[scheme]


def names(resource: object, upstream: str) -> bool:
    """Whether a metadata document's ``resource`` names ``upstream``: the same origin, and
    a path that is the upstream's or a parent of it, a trailing ``/`` aside (``/`` for
    ``https://host/mcp``, not ``/mc``); no query or fragment."""
    if not isinstance(resource, str) or _origin(resource) is None:
        return False
    if _origin(resource) != _origin(upstream):
        return False
    named, wanted = urlsplit(resource), urlsplit(upstream)
    if named.query or named.fragment:
        return False
    parent = named.path.rstrip("/") + "/"
    return (wanted.path.rstrip("/") + "/").startswith(parent)


async def _fetch(client: httpx.AsyncClient, url: str) -> dict[str, object] | None:
    """One metadata document from the upstream: a JSON object, or ``None`` for any other
    answer (absent, not JSON, too large, unreachable, too slow)."""
    import httpx

    try:
        with anyio.fail_after(_METADATA_TIMEOUT):
            response = await client.get(url, headers={"accept": "application/json"})
    except (httpx.HTTPError, TimeoutError):
        return None
    if response.status_code != 200 or len(response.content) > _METADATA_LIMIT:
        return None
    try:
        document = response.json()
    except ValueError:
        return None
    return document if isinstance(document, dict) else None


_FORBIDDEN: Final = (
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Forbidden origin"}}',
    b"application/json",
)
_UNAUTHORIZED: Final = (
    b'{"error":"invalid_token","error_description":"cassette-mcp: this replay was started '
    b'with --require-auth: send any bearer token (it is not checked)"}'
)


class RequireBearer:
    """ASGI middleware in front of a replay app (``--require-auth``): a request to the MCP
    path without a bearer token gets 401 with a challenge naming this front's protected
    resource metadata, which it serves itself (listing ``authorization_servers``, if any).

    It checks that a token is *present*, never that it is valid: a replay has no
    authorization server to ask, and tests run offline. What it lets a test see is a
    client's handling of the challenge: discovery, sending the token it holds."""

    def __init__(
        self,
        app: Asgi,
        path: str,
        bound_host: str,
        authorization_servers: tuple[str, ...] = (),
        allowed_origins: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.path = path
        self.servers = authorization_servers
        self.guard = Guard(bound_host, _FORBIDDEN, allowed_origins=allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] == "OPTIONS":
            await self.app(scope, receive, send)
            return
        metadata = scope["method"] in ("GET", "HEAD") and scope["path"] in metadata_paths(self.path)
        if not metadata and (scope["path"] != self.path or _has_bearer(scope)):
            await self.app(scope, receive, send)
            return
        admitted = await self.guard.admit(scope, receive, send)
        if admitted is None:
            return
        resource = own_url(scope, self.path)
        if metadata:
            document: dict[str, object] = {
                "resource": resource,
                "bearer_methods_supported": ["header"],
            }
            if self.servers:
                document["authorization_servers"] = list(self.servers)
            await send_simple(admitted, 200, json.dumps(document).encode(), b"application/json")
            return
        await read_body(receive)  # the request is refused whole; its body is not wanted
        ask = ((b"www-authenticate", challenge(metadata_url(resource))),)
        await send_simple(admitted, 401, _UNAUTHORIZED, b"application/json", ask)


def _has_bearer(scope: Scope) -> bool:
    value = header(scope, b"authorization") or ""
    scheme, _, token = value.partition(" ")
    return scheme.lower() == "bearer" and bool(token.strip())
