"""Find transport plugins through the ``cassette.transports`` entry-point group, lazily.

Built-in transports register exactly as third-party ones do, so this path runs in every
test. Names are listed from installed metadata without importing anything; a plugin is
imported only when asked for, and a failed import (usually a missing optional dependency)
becomes a ``PluginLoadError`` with an install hint instead of a traceback.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Final, cast

from cassette.errors import (
    DuplicateTransportError,
    PluginLoadError,
    UnknownTransportError,
)
from cassette.transport import Transport

__all__ = ["GROUP", "available", "get_transport", "load_transport"]

GROUP: Final = "cassette.transports"

#: What to install when a built-in transport's optional dependencies are missing.
_INSTALL_HINTS: Final = {
    "streamable-http": "pip install 'cassette-mcp[http]'",
    "sse": "pip install 'cassette-mcp[http]'",
}


@cache
def _registered() -> dict[str, tuple[EntryPoint, ...]]:
    found: dict[str, list[EntryPoint]] = {}
    for ep in entry_points(group=GROUP):
        same = found.setdefault(ep.name, [])
        if all(other.value != ep.value for other in same):
            same.append(ep)
    return {name: tuple(eps) for name, eps in found.items()}


def available() -> list[str]:
    """Names of every installed transport, without importing any of them."""
    return sorted(_registered())


def _dist_name(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return getattr(dist, "name", None) or ep.value


def load_transport(name: str) -> type[Transport]:
    """Import and return the plugin class registered as ``name``."""
    eps = _registered().get(name)
    if not eps:
        installed = ", ".join(available()) or "none"
        raise UnknownTransportError(f"no transport named {name!r}; installed: {installed}")
    if len(eps) > 1:
        claims = " and ".join(f"{_dist_name(ep)} ({ep.value})" for ep in eps)
        raise DuplicateTransportError(
            f"transport name {name!r} is claimed by {claims}; uninstall one of them"
        )
    ep = eps[0]
    try:
        plugin = ep.load()
    except ImportError as exc:
        hint = _INSTALL_HINTS.get(name) or _hint(ep, exc.name)
        missing = f" (missing module {exc.name!r})" if exc.name else ""
        raise PluginLoadError(f"transport {name!r} could not be imported{missing}: {hint}") from exc
    return cast("type[Transport]", plugin)


def _hint(ep: EntryPoint, missing: str | None) -> str:
    """What to install for a third-party plugin that failed to import.

    A plugin names the extra its optional dependencies come with in its entry point
    (``tcp = "cassette_tcp:TcpTransport [fast]"``), so the hint can say exactly that.
    """
    dist = getattr(getattr(ep, "dist", None), "name", None)
    if dist is None:
        return f"reinstall the package that provides {ep.value}"
    if ep.extras:
        return f"pip install '{dist}[{','.join(ep.extras)}]'"
    own = missing is not None and (ep.module + ".").startswith(missing + ".")
    if missing is None or own:
        return f"reinstall {dist} (pip install --force-reinstall {dist})"
    return f"{dist} needs the module {missing!r}: install the package that provides it"


def get_transport(name: str) -> Transport:
    """An instance of the transport registered as ``name``."""
    return load_transport(name)()
