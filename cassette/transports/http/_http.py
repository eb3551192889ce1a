"""What the HTTP fronts share: header hygiene, DNS-rebinding guards, ASGI plumbing, and
running an ASGI application on a socket we bound ourselves.

Binding the socket here (instead of letting the ASGI server do it) is what lets
``--port 0`` print the real URL before the first request, and a taken port fail with a
message that names it. Signals stay ours: the server's own handlers are turned off and the
session's watcher asks it to exit, so a recording is closed the same way whatever stops it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import socket
import sys
from collections.abc import (
    Awaitable,
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    Sequence,
)
from functools import partial
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

import anyio
import attrs

from cassette.errors import CassetteError, TransportClosedError, TransportError
from cassette.transport import Frame, map_exceptions, normalize_origin

if TYPE_CHECKING:
    from http.cookiejar import Cookie, CookieJar

    import httpx

__all__ = [
    "HOP_BY_HOP",
    "SSE_HEADERS",
    "Asgi",
    "DropConnection",
    "Guard",
    "HttpServer",
    "Inbox",
    "LazyClient",
    "bind",
    "forwardable",
    "header",
    "headers_of",
    "is_loopback_host",
    "origin_allowed",
    "read_body",
    "send_simple",
    "upstream_client",
    "upstream_errors",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]

#: RFC 9110 §7.6.1 connection-specific headers, plus those a proxy must recompute.
HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
_LOOPBACK_NAMES: Final = frozenset({"localhost", "localhost.", "ip6-localhost"})
#: The headers of every event stream a front or proxy answers with: no caching, and no
#: buffering by a reverse proxy in between (each event must reach the client as it comes).
SSE_HEADERS: Final = (
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
)


def is_loopback_host(host: str) -> bool:
    """True for names and addresses that stay on this machine."""
    name = host.strip("[]").lower()
    if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _hostname(value: str) -> str:
    """The host part of a Host header value (``[::1]:8080`` -> ``::1``)."""
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def origin_allowed(
    origin: str | None,
    host_header: str | None,
    bound_host: str,
    allowed_origins: Collection[str] = (),
) -> bool:
    """DNS-rebinding guard: a browser page elsewhere must not reach a loopback server.

    A request with no ``Origin`` comes from a non-browser client and is allowed. An
    ``Origin`` must name this machine, or the host we were told to bind to, or be one of
    ``allowed_origins`` (normalized as ``normalize_origin`` does); the ``Host`` it was
    sent to must name this machine or the bound host whatever the origin.
    """
    allowed_extra = {bound_host.strip("[]").lower()}
    if host_header is not None:
        name = _hostname(host_header).lower()
        if not is_loopback_host(name) and name not in allowed_extra:
            return False
    if origin is None:
        return True
    if allowed_origins and _normalized(origin) in allowed_origins:
        return True
    parts = urlsplit(origin)
    name = (parts.hostname or "").lower()
    return parts.scheme in ("http", "https") and (is_loopback_host(name) or name in allowed_extra)


def _normalized(origin: str) -> str | None:
    try:
        return normalize_origin(origin)
    except ValueError:
        return None


#: Where a request's parsed headers are kept in its ASGI scope (``headers_of``).
_PARSED: Final = "cassette.headers"


def headers_of(scope: Scope) -> Mapping[bytes, Sequence[str]]:
    """Every request header, names lower-cased, values decoded as Latin-1 in the order
    sent. Parsed once per request and kept in its scope, so the guard, the era checks and
    the session lookups share one reading instead of each scanning the raw list."""
    parsed: Mapping[bytes, Sequence[str]] | None = scope.get(_PARSED)
    if parsed is None:
        parsed = scope[_PARSED] = _parse(scope.get("headers", ()))
    return parsed


def _parse(raw: Iterable[tuple[bytes, bytes]]) -> dict[bytes, list[str]]:
    parsed: dict[bytes, list[str]] = {}
    for key, value in raw:
        parsed.setdefault(bytes(key).lower(), []).append(bytes(value).decode("latin-1"))
    return parsed


def header(scope: Scope, name: bytes) -> str | None:
    """One request header's value (first occurrence), decoded as Latin-1."""
    found = headers_of(scope).get(name)
    return found[0] if found else None


def forwardable(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """Headers minus hop-by-hop ones (and those ``Connection`` names)."""
    pairs = [(k.lower(), v) for k, v in headers]
    named = {
        token.strip().lower().encode("latin-1")
        for k, v in pairs
        if k == b"connection"
        for token in v.decode("latin-1").split(",")
    }
    drop = {h.encode() for h in HOP_BY_HOP} | named
    return [(k, v) for k, v in pairs if k not in drop]


#: The largest request body a front accepts (the same limit as a cassette line).
BODY_LIMIT: Final = 64 * 1024 * 1024


async def read_body(
    receive: Receive, limit: int = BODY_LIMIT, send: Send | None = None
) -> bytes | None:
    """The whole request body; ``None`` if the client went away or sent too much (then,
    given ``send``, the client gets 413 with a JSON-RPC error saying the limit)."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            if send is not None:
                text = f"request body over the {limit} byte limit"
                error = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"%s"}}'
                await send_simple(send, 413, error % text.encode(), b"application/json")
            return None
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


async def send_simple(
    send: Send,
    status: int,
    body: bytes = b"",
    content_type: bytes | None = None,
    headers: Iterable[tuple[bytes, bytes]] = (),
) -> None:
    """A complete, non-streaming response."""
    out = list(headers)
    if content_type is not None:
        out.append((b"content-type", content_type))
    out.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": body})


async def lifespan(receive: Receive, send: Send) -> None:
    """Answer the ASGI lifespan protocol: nothing to set up, nothing to tear down."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


#: Response headers a browser page may read (the session id it must send back).
_EXPOSED: Final = b"mcp-session-id, mcp-protocol-version, last-event-id, www-authenticate"


@attrs.frozen
class Guard:
    """The gate every front and proxy app opens with: the DNS-rebinding guard, and CORS
    for the browser origins it admits.

    ``forbidden`` is the 403's body and content type (each app words the refusal in its own
    protocol); ``methods`` what a preflight may ask for; ``allowed_origins`` the origins
    admitted besides this machine's own (``ServeOptions.allowed_origins``).
    """

    bound_host: str
    forbidden: tuple[bytes, bytes]
    methods: bytes = b"GET, POST, DELETE"
    allowed_origins: tuple[str, ...] = ()

    async def admit(self, scope: Scope, receive: Receive, send: Send) -> Send | None:
        """How to answer this request, or ``None`` when it is answered already: lifespan
        events, other scopes (ignored), a foreign ``Origin`` or ``Host`` (403), a CORS
        preflight from an admitted origin (204). The ``Send`` returned adds the CORS
        headers a browser needs to read the answer, when the request came from one."""
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return None
        if scope["type"] != "http":
            return None
        origin = header(scope, b"origin")
        host = header(scope, b"host")
        if not origin_allowed(origin, host, self.bound_host, self.allowed_origins):
            body, content_type = self.forbidden
            await send_simple(send, 403, body, content_type)
            return None
        if origin is None:
            return send
        if scope["method"] == "OPTIONS" and header(scope, b"access-control-request-method"):
            await self._preflight(scope, send, origin)
            return None
        return _with_cors(send, origin)

    async def _preflight(self, scope: Scope, send: Send, origin: str) -> None:
        """A browser asks whether it may send the request: yes, for what it asked."""
        headers = [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-allow-methods", self.methods),
            (b"access-control-max-age", b"600"),
            (b"vary", b"Origin, Access-Control-Request-Headers"),
        ]
        asked = header(scope, b"access-control-request-headers")
        if asked:
            headers.append((b"access-control-allow-headers", asked.encode("latin-1")))
        await send_simple(send, 204, headers=headers)


def _with_cors(send: Send, origin: str) -> Send:
    """``send``, with this app's CORS headers in place of any the answer carried (a
    proxy's upstream may have its own: the browser talks to us)."""
    ours = [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-expose-headers", _EXPOSED),
        (b"vary", b"Origin"),
    ]

    async def cors_send(message: Message) -> None:
        if message["type"] == "http.response.start":
            kept = [
                (k, v)
                for k, v in message.get("headers", ())
                if not bytes(k).lower().startswith(b"access-control-")
            ]
            message = {**message, "headers": [*kept, *ours]}
        await send(message)

    return cors_send


def upstream_client(*, jar: bool = True) -> httpx.AsyncClient:
    """The HTTP client every proxy and upstream uses to reach a live server: verified
    against the system's CA store (what the user's machine trusts, not a bundled copy), and
    with no read timeout, since an SSE stream may rightly stay quiet for long.

    ``jar=False`` keeps no cookies: a recording proxy relays many clients' sessions over
    one client, so a jar would hand one client's cookies to another's requests; each
    client keeps its own, and the proxy forwards exactly the ``Cookie`` header it sent."""
    import ssl

    import httpx

    return httpx.AsyncClient(
        verify=ssl.create_default_context(),
        timeout=httpx.Timeout(30, read=None),
        cookies=None if jar else _no_jar(),
    )


def _no_jar() -> CookieJar:
    """A cookie jar that stores nothing and returns nothing."""
    from http.cookiejar import CookieJar, CookiePolicy

    class Refuse(CookiePolicy):
        netscape = True
        rfc2965 = False
        hide_cookie2 = False

        def set_ok(self, cookie: Cookie, request: Any) -> bool:
            return False

        def return_ok(self, cookie: Cookie, request: Any) -> bool:
            return False

        def domain_return_ok(self, domain: str, request: Any) -> bool:
            return False

        def path_return_ok(self, path: str, request: Any) -> bool:
            return False

    return CookieJar(policy=Refuse())


def upstream_errors(
    where: str,
) -> dict[type[BaseException], Callable[[BaseException], CassetteError]]:
    """What ``map_exceptions`` turns httpx's errors into at an upstream's boundary: a bad
    URL is a ``TransportError``, everything else on the wire a ``TransportClosedError``
    (the connection cannot carry on), each naming ``where``."""
    import httpx

    return {
        httpx.InvalidURL: lambda exc: TransportError(f"{where}: {exc}"),
        httpx.HTTPError: lambda exc: TransportClosedError(f"{where}: {exc}"),
    }


class Inbox:
    """The frames an HTTP upstream has received for its client, in order, and why they
    ended: ``receive`` gives the next one, and once the feeding side has closed, raises the
    ``_error`` that closed it (an unreachable server, a lost stream) or ``EndOfStream``."""

    def __init__(self) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[Frame](float("inf"))
        self._error: TransportError | None = None

    async def receive(self) -> Frame:
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            if self._error is not None:
                raise self._error from None
            raise anyio.EndOfStream from None

    def _fail(self, error: TransportError) -> None:
        """The feeding side cannot go on: the reader hears ``error`` after what arrived,
        instead of waiting forever for what cannot come."""
        if self._error is None:
            self._error = error
        self._send.close()


class LazyClient:
    """``upstream_client()``, made on first use and closed once: a proxy or a front that
    never sends anything upstream never opens a connection pool. Call it for the client;
    a test may hand it one of its own (``client``, e.g. on an in-process transport).
    ``jar``: whether it keeps cookies (``upstream_client``; a recording proxy keeps none)."""

    __slots__ = ("_client", "_jar")

    def __init__(self, client: httpx.AsyncClient | None = None, *, jar: bool = True) -> None:
        self._client = client
        self._jar = jar

    @property
    def opened(self) -> bool:
        return self._client is not None

    def __call__(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = upstream_client(jar=self._jar)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket; a taken port is a ``TransportError`` that names it."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    with map_exceptions({OSError: partial(_unbindable, host, port)}):
        try:
            if sys.platform != "win32":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            # Accepted connections inherit this (Linux): without it a response written as
            # headers then body waits ~40 ms for the client's delayed ACK (Nagle).
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.bind((host.strip("[]"), port))
            sock.listen(128)
        except OSError:
            sock.close()
            raise
    sock.setblocking(False)
    return sock


def _unbindable(host: str, port: int, exc: BaseException) -> TransportError:
    errno = exc.errno if isinstance(exc, OSError) else None
    strerror = exc.strerror if isinstance(exc, OSError) else exc
    reason = "is taken" if errno in (98, 48, 10048) else f"cannot be bound ({strerror})"
    return TransportError(f"port {port} on {host} {reason}")


def url_of(sock: socket.socket, path: str) -> str:
    """The URL a bound socket serves ``path`` at."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"


class DropConnection(Exception):
    """Raised by an app, after its response started, to cut the client's connection: the
    only way ASGI has. ``HttpServer`` keeps uvicorn from logging it as a failure."""


def _not_a_drop(record: logging.LogRecord) -> bool:
    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, DropConnection)


class HttpServer:
    """Runs an ASGI app with uvicorn on a socket we own, until ``stop`` is called."""

    def __init__(self, app: Asgi, sock: socket.socket) -> None:
        import uvicorn

        logging.getLogger("uvicorn.error").addFilter(_not_a_drop)  # once: same filter

        class _Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield  # signals belong to the session; it calls stop()

        config = uvicorn.Config(
            app, log_level="warning", lifespan="on", access_log=False, timeout_graceful_shutdown=2
        )
        self._server = _Server(config)
        self._sock = sock

    async def serve(self) -> None:
        try:
            await self._server.serve(sockets=[self._sock])
        finally:
            self._sock.close()

    def stop(self) -> None:
        self._server.should_exit = True

    @property
    def started(self) -> bool:
        return bool(self._server.started)


async def wait_for_disconnect(receive: Receive, done: anyio.Event) -> None:
    """Set ``done`` when the client goes away (an SSE response runs until then)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            done.set()
            return
