"""What to type to install an extra, for the install that is running.

A hint that says ``pip install 'cassette-mcp[http]'`` fails in a checkout before a
release is on the index (and would install a second copy beside the checkout after one).
``pip`` records how a distribution was installed in its ``direct_url.json``: a checkout
installed with ``-e`` (or from a folder) says so, and the hint then names the folder
(``.`` when it is the working directory); an install from a git repository (the README's
way until a release is published) says which repository and commit, and the hint names
them, since the index's name would find nothing or another version.

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


def _record() -> dict[str, object] | None:
    """pip's ``direct_url.json`` for cassette-mcp, or ``None`` when there is none (an
    install from the index) or it does not read."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        text = distribution(_DIST).read_text("direct_url.json")
    except (PackageNotFoundError, OSError):
        return None
    try:
        data = json.loads(text or "null")
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _checkout() -> tuple[str, bool] | None:
    """The folder cassette-mcp was installed from and whether ``-e`` was used, or
    ``None`` when it came from the index (or nothing says)."""
    data = _record()
    if data is None:
        return None
    url = data.get("url")
    info = data.get("dir_info")
    if not isinstance(url, str) or not url.startswith("file://") or not isinstance(info, dict):
        return None
    folder = Path(url.removeprefix("file://"))
    return _shown(folder), bool(info.get("editable"))


def _vcs() -> str | None:
    """``git+URL@COMMIT`` when cassette-mcp was installed from a repository (the way to
    install it before a release is on the index), else ``None``. The commit is the one
    installed, so an extra added by this hint matches the code that is running."""
    data = _record()
    info = data.get("vcs_info") if data is not None else None
    url = data.get("url") if data is not None else None
    if not isinstance(info, dict) or not isinstance(url, str) or not _quotable(url):
        return None
    vcs = info.get("vcs")
    if not isinstance(vcs, str) or not vcs.isalpha():
        return None
    commit = info.get("commit_id")
    pinned = f"@{commit}" if isinstance(commit, str) and commit.isalnum() else ""
    return f"{vcs}+{url}{pinned}"


def _quotable(url: str) -> bool:
    """A URL that can stand inside the hint's single quotes as it is."""
    return bool(url) and "'" not in url and not any(c.isspace() for c in url)


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
        source = _vcs()
        at = f" @ {source}" if source else ""
        return f"pip install '{_DIST}[{extra}]{at}'"
    folder, editable = found
    return f"pip install {'-e ' if editable else ''}'{folder}[{extra}]'"
