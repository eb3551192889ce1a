"""What to type to install an extra, for the install that is running.

A hint that says ``pip install 'cassette-mcp[http]'`` fails in a checkout before a
release is on the index (and would install a second copy beside the checkout after one).
``pip`` records how a distribution was installed in its ``direct_url.json``: a checkout
installed with ``-e`` (or from a folder) says so, and the hint then names the folder
(``.`` when it is the working directory).

Its twin: ``cassette_mcp._install`` reads the same record to say how to reinstall when
``import cassette`` finds someone else's package. The front door cannot import this module
(the package it would import from may be the other one) and the library never imports the
front door, so ``_checkout`` is written in both; ``tests/unit/test_install_hints.py``
feeds both the same records and fails when they disagree.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Final

__all__ = ["install_command"]

_DIST: Final = "cassette-mcp"


def _checkout() -> tuple[str, bool] | None:
    """The folder cassette-mcp was installed from and whether ``-e`` was used, or
    ``None`` when it came from the index (or nothing says)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        text = distribution(_DIST).read_text("direct_url.json")
    except (PackageNotFoundError, OSError):
        return None
    try:
        data = json.loads(text or "null")
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    url = data.get("url")
    info = data.get("dir_info")
    if not isinstance(url, str) or not url.startswith("file://") or not isinstance(info, dict):
        return None
    folder = Path(url.removeprefix("file://"))
    return _shown(folder), bool(info.get("editable"))


def _shown(folder: Path) -> str:
    try:
        same = os.path.samefile(folder, Path.cwd())
    except OSError:
        same = False
    return "." if same else str(folder)


def install_command(extra: str) -> str:
    """``pip install 'cassette-mcp[EXTRA]'``, or ``pip install -e '.[EXTRA]'`` for a
    checkout."""
    found = _checkout()
    if found is None:
        return f"pip install '{_DIST}[{extra}]'"
    folder, editable = found
    return f"pip install {'-e ' if editable else ''}'{folder}[{extra}]'"
