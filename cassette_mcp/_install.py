"""What to type to reinstall cassette-mcp, for the install that is running.

The name-clash check (``cassette_mcp``) says it when ``import cassette`` finds someone
else's package. ``pip`` records how a distribution was installed in its
``direct_url.json``: a checkout installed with ``-e`` (or from a folder) says so, and the
hint then names the folder (``.`` when it is the working directory). Standard library only.

Its twin: ``cassette._install`` reads the same record for the library's install hints.
This module cannot import it (when the check runs, ``cassette`` may be the other package)
and the library never imports the front door, so ``_checkout`` is written in both;
``tests/unit/test_install_hints.py`` feeds both the same records and fails when they
disagree.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Final

__all__ = ["reinstall_command"]

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


def reinstall_command() -> str:
    """The reinstall that repairs a name clash, for this install."""
    found = _checkout()
    if found is None:
        return f"pip install --force-reinstall --no-deps {_DIST}"
    folder, editable = found
    return f"pip install --force-reinstall --no-deps {'-e ' if editable else ''}{folder}"
