"""Names a package exports but imports on first use (PEP 562 module ``__getattr__``).

``import cassette`` must stay cheap: a stdio replay pays for every module imported before
its first answer, and most programs use a few names of the public API. A package lists
what it exports in a table (name to defining module); the first access imports that
module and caches the value in the package, so later accesses are plain lookups.

A public package also gives what it exports a public home: a class or function defined
in an internal module (``cassette.core.replay.replayer``) reports the package that exports it
(``cassette``) as its ``__module__``, so reprs, tracebacks, pickles and documentation show
the path a user imports, not one that may move (httpx does the same). An attrs class has
its annotations resolved first, in its own module, so that cattrs and ``attrs.fields``
still know its field types after the move.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from types import FunctionType

TYPE_CHECKING = False  # not ``typing``'s: see ``cassette/__init__.py``
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = ["PUBLIC_MODULES", "TABLES", "is_public", "lazy_exports", "publish"]

#: The modules a user imports from; every other module of the package is internal.
PUBLIC_MODULES: Final = frozenset(
    {
        "cassette",
        "cassette.adapters.mcp_sdk",
        "cassette.client",
        "cassette.errors",
        "cassette.mock",
        "cassette.pytest_plugin",
        "cassette.registry",
        "cassette.testing",
        "cassette.transport",
        "cassette.transport.plugin",
        "cassette.transport.serving",
        "cassette.transport.speed",
    }
)


#: Every package's table of lazily imported names, by package: what the public-API test
#: compares with the package's ``__all__`` and its ``TYPE_CHECKING`` imports.
TABLES: Final[dict[str, Mapping[str, str]]] = {}


def is_public(module: str) -> bool:
    """Whether ``module`` is one a user imports from (the toolbox's modules,
    ``cassette.tools.check`` and the rest, are too)."""
    if module in PUBLIC_MODULES:
        return True
    parts = module.split(".")
    return parts[:2] == ["cassette", "tools"] and not any(p.startswith("_") for p in parts)


def publish(value: Any, package: str, *, resolve: bool = True) -> Any:
    """``value``, re-homed in ``package`` when it is a class or function of ours that an
    internal module defines; anything else (constants, aliases, a foreign class) as is.
    ``resolve=False`` skips resolving an attrs class's annotations, for a class whose
    annotations name types imported for type checking only (a start-up cost: docs/
    architecture.md, "Speed exceptions", has the figure)."""
    if not isinstance(value, (type, FunctionType)):
        return value
    home = getattr(value, "__module__", None)
    if not isinstance(home, str) or not home.startswith("cassette.") or is_public(home):
        return value
    if resolve and isinstance(value, type):
        _resolve_annotations(value)
    value.__module__ = package
    return value


def _resolve_annotations(cls: type) -> None:
    """Resolve an attrs class's string annotations while its own module still names them
    (after the move they would be looked up in ``package``). A name imported only for
    type checking cannot be resolved, here or later: such a class keeps its strings."""
    import contextlib

    import attrs

    if attrs.has(cls):
        with contextlib.suppress(NameError, TypeError):
            attrs.resolve_types(cls)


def lazy_exports(
    package: str, table: Mapping[str, str], names: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for the lazily imported names."""
    namespace = sys.modules[package].__dict__
    public = is_public(package)
    TABLES[package] = table

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        if public:
            value = publish(value, package)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__
