"""Authenticated MCP servers built with the official SDK's auth support, for recording tests.

    auth_server.py bearer PORT            streamable HTTP on 127.0.0.1:PORT/mcp; the one
                                          token it accepts is $FIXTURE_BEARER_TOKEN
    auth_server.py oauth AS_PORT PORT     an OAuth 2.1 authorization server on
                                          127.0.0.1:AS_PORT (dynamic registration, PKCE,
                                          approves every request at once) and the MCP
                                          server on 127.0.0.1:PORT/mcp, a protected
                                          resource whose tokens that server issues

A port may be 0 (the system picks one). Both print ``auth fixture ready:`` and then, for
each server, ``listening on 127.0.0.1:PORT`` (the authorization server's first) once every
socket listens: a socket bound and listening before its server runs holds connections in
its backlog, so that line is true at once. The tool ``whoami`` answers with the token it
was called with, as a careless server might: a recording must redact it.
"""

from __future__ import annotations

import os
import secrets
import socket
import sys
import time
from typing import Any

import anyio
import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenVerifier,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette

SCOPE = "mcp:tools"


class FixedToken(TokenVerifier):
    """Accepts one token, the one this process was given in its environment."""

    def __init__(self, token: str) -> None:
        self.token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        if not secrets.compare_digest(token, self.token):
            return None
        return AccessToken(token=token, client_id="fixture", scopes=[SCOPE])


class Provider:
    """An in-memory authorization server that approves every authorization request."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.tokens: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = f"ac_{secrets.token_urlsafe(24)}"
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        token = f"at_{secrets.token_urlsafe(32)}"
        assert client.client_id is not None
        self.tokens[token] = AccessToken(
            token=token,
            client_id=client.client_id,
            scopes=authorization_code.scopes,
            expires_at=int(time.time()) + 3600,
            resource=authorization_code.resource,
        )
        return OAuthToken(
            access_token=token,
            token_type="Bearer",
            expires_in=3600,
            scope=" ".join(authorization_code.scopes),
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> None:
        return None

    async def exchange_refresh_token(self, *args: Any) -> OAuthToken:
        raise NotImplementedError

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.tokens.get(token)

    async def revoke_token(self, token: object) -> None:
        return None


class ProviderVerifier(TokenVerifier):
    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    async def verify_token(self, token: str) -> AccessToken | None:
        return await self.provider.load_access_token(token)


def mcp_app(port: int, verifier: TokenVerifier, issuer: str) -> Starlette:
    server = MCPServer(
        "auth-fixture",
        version="1.0.0",
        token_verifier=verifier,
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(issuer),
            resource_server_url=AnyHttpUrl(f"http://127.0.0.1:{port}/mcp"),
            required_scopes=[SCOPE],
            validate_token_resource=False,  # tokens name the URL the client used: the proxy's
        ),
    )

    @server.tool()
    def echo(message: str) -> str:
        """Echo the message back."""
        return f"Echo: {message}"

    @server.tool()
    def whoami() -> str:
        """Say which token called (a careless server leaking a credential)."""
        token = get_access_token()
        return f"called with {token.token if token else 'nothing'}"

    return server.streamable_http_app()


def bound(port: int) -> socket.socket:
    """A listening loopback socket on ``port`` (0: any free one)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    return sock


async def serve(app: Any, sock: socket.socket) -> None:
    config = uvicorn.Config(app, log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


async def main(argv: list[str]) -> None:
    apps: list[tuple[Any, socket.socket]] = []
    if argv[0] == "bearer":
        sock = bound(int(argv[1]))
        port = sock.getsockname()[1]
        verifier = FixedToken(os.environ["FIXTURE_BEARER_TOKEN"])
        apps.append((mcp_app(port, verifier, "http://127.0.0.1:9/"), sock))
    else:
        as_sock, sock = bound(int(argv[1])), bound(int(argv[2]))
        issuer = f"http://127.0.0.1:{as_sock.getsockname()[1]}"
        provider = Provider()
        routes = create_auth_routes(
            provider,  # type: ignore[arg-type]
            AnyHttpUrl(issuer),
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
            ),
        )
        apps.append((Starlette(routes=routes), as_sock))
        apps.append((mcp_app(sock.getsockname()[1], ProviderVerifier(provider), issuer), sock))
    ports = " ".join(f"listening on 127.0.0.1:{s.getsockname()[1]}" for _, s in apps)
    print(f"auth fixture ready: {ports}", flush=True)
    async with anyio.create_task_group() as tg:
        for app, at in apps:
            tg.start_soon(serve, app, at)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
