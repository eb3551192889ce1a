"""What tests install into throwaway virtual environments, gathered before the suite runs.

No test may reach the package index: a runner without one, or a busy index, would make a
red run that says nothing about the code. So the few tests that install packages (the
real foreign ``cassette`` beside ours, tests/test_foreign_cassette.py) install only from
``build/wheelhouse``, with ``pip --no-index --find-links``, and scripts/test.sh fills it
first with ``python -m tests.helpers.wheelhouse``: the packages below and everything they need,
as wheels (``cassette`` 0.3.8 exists only as an sdist, so it is built here, once).

A file in the folder records what it was filled for; a test finds the wheelhouse
``missing()`` until it holds this list, and skips with the command that fills it. Filling
again with the same list does nothing, so the quick loop's set-up costs no index visit.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = ROOT / "build" / "wheelhouse"
#: the command that fills it, as a skip message gives it
FILL = ".venv/bin/python -m tests.helpers.wheelhouse"

#: the unrelated package on the index that is also imported as ``cassette``
FOREIGN = "cassette==0.3.8"
#: pytest as the throwaway venv runs it (the version the test group pins)
PYTEST = "pytest==9.2.0"
#: our build backend at the floor pyproject.toml declares (scripts/check-release.sh builds
#: at it too), for building our wheel and editable install from the checkout, and what it
#: asks for to build the editable one
BACKEND = ("hatchling==1.27.0", "editables~=0.3")
_STAMP = WHEELHOUSE / ".filled-for"


def wanted() -> list[str]:
    """Every requirement the wheelhouse answers: ours (the runtime dependencies, read
    from pyproject.toml so that they cannot drift), pytest, the build backend, and the
    foreign package."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [*project["project"]["dependencies"], PYTEST, *BACKEND, FOREIGN]


def missing() -> str | None:
    """Why the wheelhouse cannot serve the tests (``None``: it can)."""
    if not _STAMP.is_file() or _STAMP.read_text(encoding="utf-8").split("\n") != wanted():
        return f"{WHEELHOUSE.relative_to(ROOT)} is missing or out of date: run `{FILL}`"
    return None


def wheel(requirement: str) -> Path:
    """The wheel the wheelhouse holds for a pinned ``NAME==VERSION``."""
    name, version = requirement.split("==")
    return next(WHEELHOUSE.glob(f"{name.replace('-', '_')}-{version}-*.whl"))


def fill() -> None:
    """Download (or build) every wheel ``wanted()`` names, with what each needs."""
    if missing() is None:
        return
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    binary = [r for r in wanted() if r != FOREIGN]
    subprocess.run([*pip, "download", "--only-binary", ":all:", "-d", str(WHEELHOUSE), *binary],
                   check=True)  # fmt: skip
    # An sdist only; installed with --no-deps by the test, so its own dependencies are not
    # wanted.
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(WHEELHOUSE), FOREIGN], check=True)
    _STAMP.write_text("\n".join(wanted()), encoding="utf-8")


if __name__ == "__main__":
    fill()
