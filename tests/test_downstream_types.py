"""A typed downstream project sees cassette-mcp's types through the README's editable
install (``pip install -e .``).

Why: an editable install made by an import hook (setuptools' default) is invisible to
mypy, so a downstream project type-checks against nothing and loses every annotation.
The build backend (hatchling) makes it a path entry, which mypy reads; this runs mypy on a
small downstream file, outside the checkout, against the environment that scripts/test.sh
installed editable, and shows both that it passes and that a wrong use is caught (so the
types are really seen, not ``Any``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from importlib.metadata import distribution
from pathlib import Path

import pytest

from tests.helpers.support import scaled

DOWNSTREAM = textwrap.dedent(
    """
    from cassette import Cassette, FingerprintMatcher, __version__
    from cassette.transport import ServeOptions

    def recorded_requests(path: str) -> int:
        tape = Cassette.load(path)
        return len(list(tape.messages("c2s")))

    version: str = __version__
    matcher: FingerprintMatcher | None = None
    options = ServeOptions()
    """
)
WRONG = DOWNSTREAM + "count: str = recorded_requests('tape.jsonl')\n"


def editable() -> bool:
    text = distribution("cassette-mcp").read_text("direct_url.json")
    return bool(text and json.loads(text).get("dir_info", {}).get("editable"))


def mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "downstream.py").write_text(source)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--python-executable",
            sys.executable,
            "downstream.py",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=scaled(300),
        cwd=tmp_path,  # outside the checkout: only the installed package can be found
        env={"PATH": "", "HOME": str(tmp_path)},
    )


@pytest.fixture
def needs_editable() -> None:
    pytest.importorskip("mypy")
    if not editable():
        pytest.skip("cassette-mcp is not installed editable here (scripts/test.sh does that)")


@pytest.mark.usefixtures("needs_editable")
def test_mypy_follows_the_editable_install(tmp_path: Path) -> None:
    passed = mypy(tmp_path, DOWNSTREAM)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Success: no issues found in 1 source file" in passed.stdout

    caught = mypy(tmp_path, WRONG)
    assert caught.returncode == 1, caught.stdout
    assert 'Incompatible types in assignment (expression has type "int"' in caught.stdout
