"""asyncio is spoken in one module: the import contract holds, and fails on an
``import asyncio`` anywhere else in ``cassette``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.unit.test_runtime_contract import ROOT, lint_imports

CONTRACT = "Only the asyncio backend imports asyncio; every other module speaks anyio"


@pytest.mark.parametrize(
    ("module", "line"),
    [
        ("runtime/watchdog.py", "import asyncio"),
        ("transports/_fdio.py", "import asyncio.events"),
        ("cli/main.py", "from asyncio import sleep"),
    ],
)
def test_asyncio_outside_the_backend_breaks_the_contract(
    tmp_path: Path, module: str, line: str
) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "cassette", tree / "cassette", ignore=shutil.ignore_patterns("*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    kept = lint_imports(tree)
    assert f"{CONTRACT} KEPT" in kept.stdout, kept.stdout + kept.stderr
    target = tree / "cassette" / module
    target.write_text(target.read_text() + f"\n{line}  # not in the backend\n")
    broken = lint_imports(tree)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert f"{CONTRACT} BROKEN" in broken.stdout
    assert f"cassette.{module[:-3].replace('/', '.')} -> asyncio" in broken.stdout


def test_the_backend_is_the_only_module_that_imports_asyncio() -> None:
    importers = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / "cassette").rglob("*.py"))
        if any(
            line.startswith(("import asyncio", "from asyncio"))
            for line in path.read_text(encoding="utf-8").splitlines()
        )
    ]
    assert importers == ["cassette/transports/_asyncio_backend.py"]
