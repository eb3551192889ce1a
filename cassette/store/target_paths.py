"""A recorded server's command line and folder, written so that a cassette starts its
server again on any machine and from any folder.

Theory of operation
-------------------
The recorder writes the header's ``target`` for people who commit cassettes: a path
under the project (the folder of the nearest pyproject.toml at or above the folder the
recording was made in, else that folder itself) relative to the project, one under the
home folder as ``~/...``, anything else as typed (``portable_argv``). Paths typed
relative stay relative to the folder the recording was made in, so the header also
names that folder (``cwd``): relative to the cassette's own folder when both lie in the
project (the two travel together in a checkout), else ``~/...`` or absolute
(``portable_cwd``).

``variant``, ``verify`` and ``check`` start the server from that header
(``cassette.client.launch``) with ``startable``: the recorded folder found again from
the cassette's folder, and the server run in it, as it ran when recorded, so a path typed
relative to it means what it meant then; an argument the recorder made relative to the
project (it was absolute) is made absolute again. A header of an older version names no folder:
its paths are taken relative to the cassette's project (the nearest pyproject.toml at or
above the cassette, else at or above the working directory, else the working directory),
as they were written.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["portable_argv", "portable_cwd", "project_root", "startable", "startable_argv"]


def _root_of(folder: Path) -> Path:
    """The project a recording made in ``folder`` belongs to: the folder of the nearest
    pyproject.toml at or above it, else ``folder`` itself."""
    from cassette.store.config import find_pyproject

    found = find_pyproject(folder)
    return found.parent if found is not None else folder


def portable_argv(argv: Sequence[str], root: Path | None = None) -> list[str]:
    """``argv`` as a committed cassette should show it, the same on every machine: a path
    under the project (``root``: the folder of the nearest pyproject.toml, else the working
    directory) relative to it, one under the home folder as ``~/...``."""
    if root is None:
        root = _root_of(Path.cwd())
    home = Path.home()
    out = []
    for arg in argv:
        path = Path(arg)
        if not path.is_absolute():
            out.append(arg)
        elif path.is_relative_to(root):
            out.append(path.relative_to(root).as_posix() or ".")
        elif path.is_relative_to(home):
            out.append("~/" + path.relative_to(home).as_posix())
        else:
            out.append(arg)
    return out


def portable_cwd(folder: str | os.PathLike[str], tape: str | os.PathLike[str]) -> str:
    """The folder a recording of the cassette ``tape`` was made in, as its header names
    it: relative to the cassette's folder when both lie in the recording's project (a
    checkout moves them together), else under the home folder as ``~/...``, else
    absolute."""
    here = Path(os.path.abspath(folder))
    beside = Path(os.path.abspath(tape)).parent
    root = _root_of(here)
    if here.is_relative_to(root) and beside.is_relative_to(root):
        return Path(os.path.relpath(here, beside)).as_posix()
    home = Path.home()
    if here.is_relative_to(home):
        return ("~/" + here.relative_to(home).as_posix()).rstrip("/")
    return here.as_posix()


def project_root(near: Path | None = None) -> Path:
    """The folder of the nearest pyproject.toml at or above ``near`` (a cassette's
    folder), else at or above the working directory, else the working directory: where
    ``portable_argv`` made the paths of a header that names no folder relative to."""
    from cassette.store.config import find_pyproject

    found = find_pyproject(near) if near is not None else None
    found = found if found is not None else find_pyproject()
    return found.parent if found is not None else Path.cwd()


def startable_argv(argv: Sequence[str], near: Path | None = None) -> list[str]:
    """A header's command line (``portable_argv`` wrote it) as a command to start: ``~/``
    is the home folder again, and an argument that names a path under the project
    (relative to the folder of the nearest pyproject.toml at or above ``near``, the
    cassette's folder, else the working directory) is made absolute, so the server starts
    from wherever the command runs. Other arguments are left as written."""
    return _absolute(argv, project_root(near))


def _absolute(argv: Sequence[str], root: Path, ran_in: Path | None = None) -> list[str]:
    """``argv`` with ``~/`` expanded and each relative argument that names a path under
    ``root`` made absolute, except those that name one in ``ran_in``, the folder the
    server runs in, where they mean what they meant when it was recorded."""
    out = []
    for arg in argv:
        if arg.startswith("~/") or arg == "~":
            out.append(os.fspath(Path(arg).expanduser()))
            continue
        plain = arg[:1] in ("", "-") or Path(arg).is_absolute()
        if plain or (ran_in is not None and (ran_in / arg).exists()):
            out.append(arg)
        else:
            out.append(os.fspath(root / arg) if (root / arg).exists() else arg)
    return out


def startable(target: Mapping[str, Any], tape: str | None) -> tuple[list[str], str]:
    """A header's ``target`` (a command) as a command line to start and the folder to run
    it in (see the module docstring), for the cassette at ``tape``."""
    command = [str(arg) for arg in target.get("command") or ()]
    near = Path(tape).resolve().parent if tape else None
    folder = _recorded_folder(target.get("cwd"), near)
    if folder is None:  # a header that names no folder: as it was written
        return startable_argv(command, near), os.fspath(project_root(near))
    return _absolute(command, _root_of(folder), folder), os.fspath(folder)


def _recorded_folder(cwd: Any, near: Path | None) -> Path | None:
    """The folder a header's ``cwd`` names, found again (``None``: it names none, or one
    that is not here, as on another machine)."""
    if not isinstance(cwd, str) or not cwd:
        return None
    if cwd == "~" or cwd.startswith("~/"):
        path = Path(cwd).expanduser()
    elif Path(cwd).is_absolute():
        path = Path(cwd)
    elif near is not None:
        path = near / cwd
    else:
        return None
    path = Path(os.path.normpath(path))
    return path if path.is_dir() else None
