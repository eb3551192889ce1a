"""The entry points' front door: make sure ``import cassette`` is cassette-mcp's.

Why this package exists: an old, unrelated project on the package index (``cassette``, an
HTTP recorder) is also imported as ``cassette``. With both installed, either it comes
first on ``sys.path`` and shadows ours (as it does beside an editable install), or its
files land in the same ``site-packages/cassette/`` folder and its ``__init__.py``
replaces ours (it was installed after us). Either way ``import cassette`` runs someone
else's code, and an entry point that names ``cassette.cli`` dies with a traceback before
any of our code could explain; a pytest plugin that does so aborts every pytest run in
that environment.

This package's name is ours alone, so the ``cassette`` script and the pytest plugin
start here: they look before they import (nothing of the other package runs), and when
the name is taken they print one line that names the conflict and the fix, and exit
with ``EXIT_CONFLICT``. Looking costs a few ``stat`` calls and no
``importlib.metadata``: start-up time is part of what a replay costs a test suite.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Final

__all__ = ["EXIT_CONFLICT", "conflict", "main"]

#: sysexits' EX_CONFIG: the environment, not the command, is wrong (docs/cli.md).
EXIT_CONFLICT: Final = 78

_NAME: Final = "cassette"


def _foreign_distribution(site: Path) -> str | None:
    """``"cassette 0.3.8"`` if a distribution named exactly ``cassette`` (not ours,
    ``cassette_mcp-*``) has its metadata in ``site``."""
    try:
        names = os.listdir(site)
    except OSError:
        return None
    for name in names:
        for suffix in (".dist-info", ".egg-info"):
            if name.lower().startswith(f"{_NAME}-") and name.endswith(suffix):
                return f"{_NAME} {name[len(_NAME) + 1 : -len(suffix)]}"
            if name.lower() == f"{_NAME}{suffix}":
                return _NAME
    return None


def conflict() -> str | None:
    """The one-line explanation when ``import cassette`` would not be cassette-mcp's own
    package, else ``None``. Finds the package without importing it."""
    from cassette_mcp._install import reinstall_command

    _REINSTALL = reinstall_command()
    spec = importlib.util.find_spec(_NAME)
    if spec is None:
        return f"cassette-mcp: error: no package 'cassette' is importable; fix: {_REINSTALL}"
    if spec.origin is None:  # a namespace package: a folder that lost its __init__.py
        folders = ", ".join(spec.submodule_search_locations or [])
        return (
            f"cassette-mcp: error: the package 'cassette' in {folders} has no __init__.py, "
            "as happens when another package also imported as 'cassette' is uninstalled "
            f"after cassette-mcp; fix: {_REINSTALL}"
        )
    origin = Path(spec.origin)
    package = origin.parent
    foreign = _foreign_distribution(package.parent)
    ours = (
        origin.stem == "__init__"
        and (package / "_version.py").is_file()
        and (package / "cli").is_dir()
    )
    if not ours:
        other = f"'{foreign}'" if foreign else "another package"
        where = package if origin.stem == "__init__" else origin
        return (
            f"cassette-mcp: error: conflict: 'import cassette' finds {other} at {where}, "
            "not cassette-mcp (an unrelated project on the package index is also imported "
            f"as 'cassette'); fix: pip uninstall {_NAME if foreign else '<that package>'}"
        )
    if foreign:
        return (
            f"cassette-mcp: error: conflict: '{foreign}', an unrelated package, is installed "
            f"in {package.parent} and is also imported as 'cassette' (its files replace "
            f"cassette-mcp's); fix: pip uninstall {_NAME} && {_REINSTALL}"
        )
    return None


def _stop_on_conflict() -> None:
    problem = conflict()
    if problem is not None:
        print(problem, file=sys.stderr)
        raise SystemExit(EXIT_CONFLICT)


def main() -> int:
    """The ``cassette`` script: the command line, once ``cassette`` is known to be ours.
    It owns the process: the collector is off until start-up is over, and a serving
    command ends the process itself (``cassette.cli.process``)."""
    collecting = gc.isenabled()
    gc.disable()
    problem = conflict()
    if problem is not None:
        print(problem, file=sys.stderr)
        return EXIT_CONFLICT
    from cassette.transports.stdio import _early

    _early.spawn(sys.argv[1:])  # a plain recording's server boots while we import the rest
    from cassette.cli.process import run

    run(paused_gc=collecting)


def __getattr__(name: str) -> ModuleType:
    """``pytest_plugin``: the module ``cassette.pytest_plugin`` (the ``pytest11`` entry
    point), imported only once the check has passed. A conflict ends pytest with the one
    line and ``EXIT_CONFLICT`` (``SystemExit``, so no traceback) at plugin load."""
    if name == "pytest_plugin":
        _stop_on_conflict()
        import cassette.pytest_plugin

        return cassette.pytest_plugin
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
