"""The real foreign ``cassette`` (0.3.8 on the package index, an unrelated HTTP recorder
also imported as ``cassette``) next to ours, in a throwaway virtual environment.

Both ways it happens: installed after our wheel (its files replace ours in one
``site-packages/cassette``) and installed beside our editable install (it comes first on
``sys.path`` and shadows ours). Each time ``cassette --version`` and ``pytest`` print one
line that names the conflict and the fix, exit 78, and show no traceback; and the fix the
line gives works. It installs only from the wheelhouse scripts/test.sh fills before the
suite (tests/helpers/wheelhouse.py), never from the index, and skips, naming the command that fills
it, when that is missing. It needs the wheelhouse, so it is not in the portable subset.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import wheelhouse
from tests.helpers.support import ROOT, scaled

pytestmark = pytest.mark.e2e

BIN = "Scripts" if sys.platform == "win32" else "bin"


class Venv:
    def __init__(self, path: Path) -> None:
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=scaled(120))
        self.path = path
        self.python = str(path / BIN / "python")

    def pip(self, *args: str) -> None:
        """pip, offline: whatever it installs or builds comes from the wheelhouse."""
        offline = ["--no-index", "--find-links", str(wheelhouse.WHEELHOUSE)]
        if args[0] == "uninstall":
            offline = []
        result = subprocess.run(
            [self.python, "-m", "pip", "--disable-pip-version-check", "-q", *args, *offline],
            capture_output=True,
            text=True,
            check=False,
            timeout=scaled(300),
        )
        assert result.returncode == 0, result.stderr

    def run(self, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        # Only what is installed in this venv: a PYTHONPATH from the caller would put a
        # checkout's ``cassette`` first and hide the very conflict under test.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        return subprocess.run(
            [str(self.path / BIN / argv[0]), *argv[1:]],
            capture_output=True,
            text=True,
            check=False,
            timeout=scaled(120),
            cwd=cwd,
            env=env,
        )


def assert_one_line_conflict(result: subprocess.CompletedProcess[str], expected: str) -> str:
    assert result.returncode == 78, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("cassette-mcp: error: conflict: ")
    assert expected in lines[0]
    return lines[0]


def test_the_foreign_package_is_named_with_the_fix(tmp_path: Path) -> None:
    if (why := wheelhouse.missing()) is not None:
        pytest.skip(why)
    venv = Venv(tmp_path / "venv")
    work = tmp_path / "project"
    work.mkdir()
    (work / "test_nothing.py").write_text("def test_nothing():\n    pass\n")

    # Ours built from this checkout; the foreign one was built from its sdist beforehand.
    wheels = tmp_path / "wheels"
    venv.pip("wheel", "--no-deps", "-w", str(wheels), str(ROOT))
    ours = str(next(wheels.glob("cassette_mcp-*.whl")))
    foreign = str(wheelhouse.wheel(wheelhouse.FOREIGN))

    # Our wheel, then the foreign package over it.
    venv.pip("install", ours, wheelhouse.PYTEST)
    assert venv.run("cassette", "--version", cwd=work).stdout.strip() == "cassette-mcp 0.2.0"
    venv.pip("install", "--no-deps", foreign)
    line = assert_one_line_conflict(
        venv.run("cassette", "--version", cwd=work), "'cassette 0.3.8', an unrelated package"
    )
    assert "fix: pip uninstall cassette && pip install --force-reinstall --no-deps" in line
    assert_one_line_conflict(venv.run("pytest", "-q", cwd=work), "'cassette 0.3.8'")

    # The fix the line gives (reinstalling our wheel rather than the index's).
    venv.pip("uninstall", "-y", "cassette")
    venv.pip("install", "--force-reinstall", "--no-deps", ours)
    assert venv.run("cassette", "--version", cwd=work).returncode == 0
    passed = venv.run("pytest", "-q", "-p", "no:cacheprovider", cwd=work)
    assert passed.returncode == 0, passed.stdout + passed.stderr

    # Our editable install, and the foreign package beside it: it shadows ours.
    venv.pip("uninstall", "-y", "cassette-mcp")
    venv.pip("install", "--no-deps", "-e", str(ROOT))
    venv.pip("install", "--no-deps", foreign)
    line = assert_one_line_conflict(
        venv.run("cassette", "--version", cwd=work), "'import cassette' finds 'cassette 0.3.8' at"
    )
    assert line.endswith("fix: pip uninstall cassette")
    assert_one_line_conflict(venv.run("pytest", "-q", cwd=work), "finds 'cassette 0.3.8'")
    venv.pip("uninstall", "-y", "cassette")
    assert venv.run("cassette", "--version", cwd=work).returncode == 0
