"""Names a package exports but imports on first use (PEP 562 module ``__getattr__``).

``import cassette`` must stay cheap: a stdio replay pays for every module imported before
its first answer, and most programs use a few names of the public API. A package lists
what it exports in a table (name to defining module); the first access imports that
module and caches the value in the package, so later accesses are plain lookups.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, table: Mapping[str, str], names: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for the lazily imported names."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__
