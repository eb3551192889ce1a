"""Old import paths kept for one release: a module that moved warns once, then forwards.

``cassette.session`` and friends were flat modules until 0.2; user code may import them.
Each old path is now a two-line module that calls ``moved``: importing it issues a
``DeprecationWarning`` naming the new home (attributed to the importing line, not to
importlib's machinery, so the default filters show it in the user's own code and in
their test runs), and every attribute is looked up in the new module.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["moved"]

#: The release that drops the old paths.
REMOVED_IN = "0.3"


def moved(old: str, new: str) -> Callable[[str], Any]:
    """Warn that ``old`` moved to ``new``; return ``old``'s module ``__getattr__``."""
    warnings.warn(
        f"{old} moved to {new}; import from there (the old path goes in {REMOVED_IN})",
        DeprecationWarning,
        stacklevel=_importer_level(),
    )

    def __getattr__(name: str) -> Any:
        value = getattr(importlib.import_module(new), name)
        setattr(sys.modules[old], name, value)
        return value

    return __getattr__


def _importer_level() -> int:
    """The ``stacklevel`` of the first frame outside this module, the old module and the
    import system: the line that wrote the import."""
    level = 1
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name == __file__ or name.startswith("<frozen importlib") or level <= 2):
            return level
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return 2
