"""Find transport plugins through the ``cassette.transports`` entry-point group, lazily.

Built-in transports register exactly as third-party ones do, so this path runs in every
test. Names are listed from installed metadata without importing anything; a plugin is
imported only when asked for, and a failed import (usually a missing optional dependency)
becomes a ``PluginLoadError`` with an install hint instead of a traceback.

Start-up: ``importlib.metadata`` costs about as much to import as anyio itself (it pulls
in ``email``, ``zipfile`` and ``csv``), which would be a large part of a replay's time to
its first answer. So ``load_transport`` first reads the ``entry_points.txt`` files beside
``sys.path`` as text (a couple of milliseconds) and, when exactly one distribution claims
the name, imports that object directly. Anything else (no claim found, two claims, a
failed import, listing) goes through ``importlib.metadata``, which owns the semantics and
the messages; the quick read only ever answers the one unambiguous case.

A test can put a plugin in the registry without installing a distribution:
``with register("fake", FakeTransport): ...`` makes ``"fake"`` a transport name everywhere
one is taken (``serve_replay(transport="fake")``, ``check_transport("fake")``) until the
block ends. Such a registration is found before the installed ones.
"""

from __future__ import annotations

import importlib
import os
import sys
from functools import cache
from types import TracebackType
from typing import TYPE_CHECKING, Final, cast

from cassette.errors import (
    DuplicateTransportError,
    PluginLoadError,
    UnknownTransportError,
    UsageError,
)
from cassette.transport import Transport, UpstreamConnector

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = [
    "ALIASES",
    "GROUP",
    "INTERNAL",
    "Registration",
    "available",
    "canonical",
    "get_connector",
    "get_transport",
    "load_transport",
    "register",
    "unknown_transport",
]

GROUP: Final = "cassette.transports"

#: Short names a person may use for a transport, everywhere a name is taken (the CLI's
#: ``--front``/``--transport``, ``serve_replay(transport=...)``, ``record(transport=...)``,
#: ``serve_mock(front=...)``): ``http`` is what people call streamable HTTP. Resolved
#: before the lookup, so a plugin registering one of these names is never chosen by it.
ALIASES: Final = {"http": "streamable-http"}


#: Transports reached only in the process that made them (``MemoryTransport``, what
#: ``open_replay`` serves on): a person can name no use for one, so no message offers it.
INTERNAL: Final = frozenset({"memory"})


def canonical(name: str) -> str:
    """The registered name ``name`` stands for (an alias resolved, anything else as is)."""
    return ALIASES.get(name, name)


#: The extra to install when a built-in transport's optional dependencies are missing
#: (the command for the running install: ``cassette._install``).
_INSTALL_HINTS: Final = {"streamable-http": "http", "sse": "http"}


@cache
def _registered() -> dict[str, tuple[EntryPoint, ...]]:
    from importlib.metadata import entry_points

    found: dict[str, list[EntryPoint]] = {}
    for ep in entry_points(group=GROUP):
        same = found.setdefault(ep.name, [])
        if all(other.value != ep.value for other in same):
            same.append(ep)
    return {name: tuple(eps) for name, eps in found.items()}


#: Plugins registered in this process (``register``), by name: found before installed ones.
_IN_PROCESS: dict[str, type[Transport]] = {}


class Registration:
    """A plugin registered in this process. Leaving its ``with`` block, or ``unregister``,
    takes it out again; the block gives the plugin class."""

    def __init__(self, name: str, plugin: type[Transport]) -> None:
        self.name = name
        self.plugin = plugin

    def unregister(self) -> None:
        """Take the plugin out of the registry (again: nothing happens)."""
        if _IN_PROCESS.get(self.name) is self.plugin:
            del _IN_PROCESS[self.name]

    def __enter__(self) -> type[Transport]:
        return self.plugin

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.unregister()


def register(name: str, plugin: type[Transport], *, replace: bool = False) -> Registration:
    """Register ``plugin`` (a class, as an entry point names it) as transport ``name`` in
    this process, without installing anything: for tests. A name another plugin already
    has is a ``DuplicateTransportError``, unless ``replace`` lets this one stand in for an
    installed plugin until it is unregistered; an alias (``http``) is a ``UsageError``."""
    if name in ALIASES:
        raise UsageError(f"{name!r} is short for {ALIASES[name]!r}: register another name")
    if name in _IN_PROCESS:
        raise DuplicateTransportError(f"transport name {name!r} is already registered here")
    if not replace and name in _registered():
        raise DuplicateTransportError(
            f"transport name {name!r} is installed; pass replace=True to stand in for it"
        )
    _IN_PROCESS[name] = plugin
    return Registration(name, plugin)


def unknown_transport(name: str) -> str:
    """The one line refusing ``name``: the public transport most likely meant (an alias
    included), and the public ones installed, each alias beside its transport."""
    from cassette.core.words.suggest import did_you_mean

    public = [n for n in available() if n not in INTERNAL]
    short = {full: alias for alias, full in ALIASES.items()}
    listed = ", ".join(f"{n} (or {short[n]})" if n in short else n for n in public) or "none"
    guess = did_you_mean(name, [*public, *(a for a, full in ALIASES.items() if full in public)])
    return f"no transport named {name!r}{guess}; installed: {listed}"


def available() -> list[str]:
    """Names of every installed transport, and of those registered in this process,
    without importing any of them."""
    return sorted({*_registered(), *_IN_PROCESS})


def _dist_name(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return getattr(dist, "name", None) or ep.value


def _entry_point_texts() -> list[str]:
    """The text of every ``entry_points.txt`` that mentions our group, one per
    distribution name (the first on ``sys.path`` wins, as ``importlib.metadata`` has it)."""
    texts: list[str] = []
    seen: set[str] = set()
    header = f"[{GROUP}]"
    for folder in sys.path:
        try:
            entries = os.scandir(folder or ".")
        except OSError:
            continue
        with entries:
            for entry in entries:
                stem, dot, suffix = entry.name.rpartition(".")
                if not dot or suffix not in ("dist-info", "egg-info"):
                    continue
                dist = stem.split("-")[0].lower().replace("-", "_").replace(".", "_")
                if dist in seen:
                    continue
                data = _read(os.path.join(entry.path, "entry_points.txt"))
                if data is None:
                    continue
                text = data.decode("utf-8", "replace")
                seen.add(dist)
                if header in text:
                    texts.append(text)
    return texts


def _read(path: str) -> bytes | None:
    """The bytes of the file at ``path`` (``None``: it cannot be read), through the
    descriptor calls: a replay reads one per installed distribution on every start, and
    a file object costs more than the read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    chunks: list[bytes] = []
    try:
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks)


def _quick_claims(name: str) -> list[str]:
    """Object references (``module:attr``) claiming ``name`` in our group, read as text."""
    claims: list[str] = []
    for text in _entry_point_texts():
        inside = False
        for raw in text.splitlines():
            line = raw.strip()
            if line.startswith("["):
                inside = line == f"[{GROUP}]"
            elif inside and "=" in line:
                key, _, value = line.partition("=")
                if key.strip() == name:
                    claims.append(value.strip())
    return claims


def _quick_load(name: str) -> type[Transport] | None:
    """The plugin when exactly one plain ``module:attr`` claims ``name``, else ``None``."""
    claims = set(_quick_claims(name))
    if len(claims) != 1:
        return None
    value = claims.pop()
    module, colon, attr = value.partition(":")
    if not colon or "[" in value or not module.strip() or not attr.strip():
        return None
    try:
        found: object = importlib.import_module(module.strip())
        for part in attr.strip().split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None  # the full path says what went wrong, with its hint
    return cast("type[Transport]", found)


def load_transport(name: str) -> type[Transport]:
    """Import and return the plugin class registered as ``name`` (or an alias of it)."""
    name = canonical(name)
    here = _IN_PROCESS.get(name)
    if here is not None:
        return here
    quick = _quick_load(name)
    if quick is not None:
        return quick
    eps = _registered().get(name)
    if not eps:
        raise UnknownTransportError(unknown_transport(name))
    if len(eps) > 1:
        claims = " and ".join(f"{_dist_name(ep)} ({ep.value})" for ep in eps)
        raise DuplicateTransportError(
            f"transport name {name!r} is claimed by {claims}; uninstall one of them"
        )
    ep = eps[0]
    try:
        plugin = ep.load()
    except ImportError as exc:
        extra = _INSTALL_HINTS.get(name)
        hint = _hint(ep, exc.name) if extra is None else _install(extra)
        missing = f" (missing module {exc.name!r})" if exc.name else ""
        raise PluginLoadError(f"transport {name!r} could not be imported{missing}: {hint}") from exc
    return cast("type[Transport]", plugin)


def _install(extra: str) -> str:
    from cassette._install import install_command

    return install_command(extra)


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


def get_connector(transport: str | Transport) -> UpstreamConnector:
    """The transport (by name, or as given) as an ``UpstreamConnector``, or a
    ``UsageError`` saying it cannot reach a live server."""
    plugin = get_transport(transport) if isinstance(transport, str) else transport
    if not isinstance(plugin, UpstreamConnector):
        raise UsageError(f"transport {plugin.name!r} cannot reach a live server")
    return plugin
