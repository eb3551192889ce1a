"""The live server a client-side tool talks to: a command (stdio) or a URL.

One value for ``verify``, the scenarios runner and the pytest fixture, so "a command
line or a URL, over which transport" is decided in one place: a command is spawned over
``stdio``; a URL is reached over ``streamable-http`` unless ``transport`` names another
plugin (``sse`` for a legacy HTTP+SSE server's event stream).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from cassette.errors import UsageError
from cassette.transport import Target

__all__ = ["ServerTarget"]

_SCHEMES = ("http://", "https://")


def _argv(value: Sequence[str]) -> tuple[str, ...]:
    return tuple(value)


def _transport(name: str | None) -> str | None:
    return "streamable-http" if name == "http" else name  # the short name people type


def _env(value: Mapping[str, str] | None) -> Mapping[str, str] | None:
    return None if value is None else dict(value)


@attrs.frozen(kw_only=True)
class ServerTarget:
    """A server to reach: ``command`` (argv) or ``url``, with what it needs to run.

    ``env`` is added to this process's environment for a command; ``headers`` go with
    every HTTP request to a URL (credentials: they are never written to a cassette)."""

    command: tuple[str, ...] = attrs.field(default=(), converter=_argv)
    url: str | None = None
    transport: str | None = attrs.field(default=None, converter=_transport)
    env: Mapping[str, str] | None = attrs.field(default=None, converter=_env)
    cwd: str | None = None
    headers: Mapping[str, str] | None = attrs.field(default=None, converter=_env)

    def __attrs_post_init__(self) -> None:
        if bool(self.command) == (self.url is not None):
            raise UsageError("a server is either a command or a URL (not both, not neither)")
        if self.url is not None and not self.url.startswith(_SCHEMES):
            raise UsageError(f"a server URL needs http:// or https://, not {self.url!r}")

    @classmethod
    def of(
        cls, server: Sequence[str | os.PathLike[str]] | str, *, transport: str | None = None
    ) -> ServerTarget:
        """A command line (a list) or a URL (a string)."""
        if isinstance(server, str):
            return cls(url=server, transport=transport)
        return cls(command=tuple(os.fspath(a) for a in server), transport=transport)

    @property
    def transport_name(self) -> str:
        """The transport plugin that reaches it."""
        if self.transport is not None:
            return self.transport
        return "stdio" if self.command else "streamable-http"

    @property
    def is_url(self) -> bool:
        return self.url is not None

    def target(self) -> Target:
        """What the transport plugin's ``connect`` takes."""
        return Target(
            command=self.command, url=self.url, env=self.env, cwd=self.cwd, headers=self.headers
        )

    def describe(self) -> str:
        """One line for a person (the command as typed, or the URL)."""
        if self.url is not None:
            return self.url
        import shlex

        return shlex.join(self.command)

    def as_data(self) -> dict[str, Any]:
        return {"command": list(self.command), "url": self.url, "transport": self.transport_name}
