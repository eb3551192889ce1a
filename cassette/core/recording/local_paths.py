"""The recording machine's own folders, written the way every machine can share them.

Theory of operation
-------------------
A server's stderr and the stray lines it prints on stdout carry absolute paths: a
traceback names ``/home/ada/src/project/server.py``, a log line its cache under
``/home/ada/.cache``. Kept as they are, a committed cassette tells who recorded it (the
user name in the home folder) and changes whenever anyone records it again from another
checkout, so a re-record that changed nothing rewrites those lines.

So the recorder writes those lines as the header already writes the command line
(``cassette.runtime.record.portable_argv``): a path under the project's folder (the
folder of the nearest pyproject.toml, else the working directory) relative to it, a path
under the home folder as ``~/...``. The project comes first, since it usually lies under
the home folder. Messages are never touched: what a server answers is what a client
gets, and a replay must give the same.

A folder is replaced only where it stands as a whole path: not preceded by a character
that would make it part of a longer path (``/x/home/ada``), and followed by the end of a
path component (a separator, a quote, a blank, ``:``...), so ``/home/ada2`` is not
``/home/ada`` with a ``2``. A file system's root (``/``, ``C:\\``) is never replaced: it
would match every path. Both spellings of a Windows folder (``\\`` and
``/``) are replaced.

Sans-IO: the folders are values the runtime reads once and passes in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

__all__ = ["LocalPaths"]

#: What may continue a path component: a folder followed by one of these is not the folder.
_NAME: Final = r"[\w.~-]"
#: The smallest number of components a folder must have to be replaced (not a root).
_SHORTEST: Final = 1


def _components(folder: str) -> int:
    return len([part for part in re.split(r"[\\/]", folder) if part and not part.endswith(":")])


def _spellings(folders: Iterable[str]) -> list[str]:
    """Each folder without a trailing separator, with its ``/`` spelling if it has ``\\``;
    longest first, so a folder inside another is replaced before it."""
    out: set[str] = set()
    for folder in folders:
        bare = folder.rstrip("\\/")
        if _components(bare) < _SHORTEST:
            continue
        out.add(bare)
        if "\\" in bare:
            out.add(bare.replace("\\", "/"))
    return sorted(out, key=len, reverse=True)


class LocalPaths:
    """The project's folder and the home folder (each in every spelling this machine
    gives it, e.g. as found and as resolved), and how text is written without them."""

    __slots__ = ("_pattern", "home", "project")

    def __init__(self, project: Iterable[str] = (), home: Iterable[str] = ()) -> None:
        self.project = tuple(project)
        self.home = tuple(home)
        mine, theirs = _spellings(self.project), _spellings(self.home)
        alternatives = [
            *(f"(?P<p{i}>{re.escape(f)})" for i, f in enumerate(mine)),
            *(f"(?P<h{i}>{re.escape(f)})" for i, f in enumerate(theirs)),
        ]
        # a whole path: no name character before it; after it, a separator and more of
        # the path, or the end of the component
        self._pattern = (
            re.compile(
                rf"(?<!{_NAME})(?:{'|'.join(alternatives)})"
                rf"(?:(?P<sep>[\\/])(?={_NAME})|(?!{_NAME}))"
            )
            if alternatives
            else None
        )

    def portable(self, text: str) -> str:
        """``text`` with the folders written as ``~/...`` and project-relative paths."""
        if self._pattern is None:
            return text
        return self._pattern.sub(_replacement, text)


def _replacement(match: re.Match[str]) -> str:
    found = match.groupdict()
    which = next(name for name, value in found.items() if value is not None and name != "sep")
    separator = found["sep"] or ""
    if which.startswith("p"):
        return "" if separator else "."  # ``/repo/src/x.py`` -> ``src/x.py``; ``/repo`` -> ``.``
    return "~" + separator
