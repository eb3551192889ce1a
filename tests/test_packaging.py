"""The installed package as a user meets it: one version everywhere, entry points that go
through the name check, and the one-line answer when another ``cassette`` is in the way.

The check itself (``cassette_mcp.conflict``) is exercised here on made-up site folders put
first on the path, in a subprocess, since this process has imported our ``cassette``
already. tests/test_foreign_cassette.py does the same with the real foreign package
installed (from the wheelhouse scripts/test.sh fills) into a throwaway virtual environment.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
from pathlib import Path

import pytest

import cassette
import cassette_mcp
from tests.helpers.support import PY, ROOT, scaled

ENTRY = "import sys, cassette_mcp; sys.exit(cassette_mcp.main())"


def test_the_tests_test_the_tree_they_are_in() -> None:
    """From a checkout or from the unpacked sdist, the code under test is the one beside
    the tests, whatever else is installed."""
    assert Path(cassette.__file__).resolve().is_relative_to(ROOT)
    assert Path(cassette_mcp.__file__).resolve().is_relative_to(ROOT)


def test_one_version_everywhere() -> None:
    assert cassette.__version__ == importlib.metadata.version("cassette-mcp") == "0.2.0"
    result = subprocess.run(
        [PY, "-c", ENTRY, "--version"],
        capture_output=True,
        text=True,
        check=False,
        timeout=scaled(60),
    )
    assert (result.returncode, result.stdout.strip()) == (0, "cassette-mcp 0.2.0")


def test_entry_points_go_through_the_name_check() -> None:
    points = importlib.metadata.distribution("cassette-mcp").entry_points
    script = next(p for p in points if p.group == "console_scripts" and p.name == "cassette")
    plugin = next(p for p in points if p.group == "pytest11" and p.name == "cassette")
    assert script.value == "cassette_mcp:main"
    assert plugin.value == "cassette_mcp:pytest_plugin"
    import cassette.pytest_plugin

    assert plugin.load() is cassette.pytest_plugin  # the module itself, as pytest expects


def test_no_conflict_in_this_environment() -> None:
    assert cassette_mcp.conflict() is None


def _site(tmp_path: Path, *, ours: bool, dist: str | None) -> Path:
    """A site folder with a package ``cassette`` (a stand-in for the foreign one, or one
    that also holds our files, as after the foreign one was installed over ours)."""
    site = tmp_path / "site"
    package = site / "cassette"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise SystemExit('the foreign package ran')\n")
    if ours:
        (package / "_version.py").write_text("__version__ = '0.2.0'\n")
        (package / "cli").mkdir()
    if dist is not None:
        (site / dist).mkdir()
    return site


def _run_with(site: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [PY, "-c", ENTRY, "--version"],
        capture_output=True,
        text=True,
        check=False,
        timeout=scaled(60),
        env=env,
        cwd=tmp_path,
    )


@pytest.mark.parametrize(
    ("ours", "dist", "expected"),
    [
        (False, "cassette-0.3.8.dist-info", "finds 'cassette 0.3.8' at"),
        (False, None, "finds another package at"),
        (True, "cassette-0.3.8.dist-info", "'cassette 0.3.8', an unrelated package, is installed"),
        (True, "cassette-0.3.8-py3.11.egg-info", "'cassette 0.3.8-py3.11', an unrelated"),
    ],
)
def test_a_conflict_is_one_line_naming_it_and_the_fix(
    tmp_path: Path, ours: bool, dist: str | None, expected: str
) -> None:
    result = _run_with(_site(tmp_path, ours=ours, dist=dist), tmp_path)
    assert result.returncode == cassette_mcp.EXIT_CONFLICT == 78
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("cassette-mcp: error: ")
    assert expected in lines[0]
    assert "fix: pip uninstall" in lines[0]
    assert "the foreign package ran" not in result.stderr  # looked, never imported


def test_our_own_dist_info_is_not_a_conflict(tmp_path: Path) -> None:
    site = _site(tmp_path, ours=True, dist="cassette_mcp-0.2.0.dist-info")
    # No conflict found, so the package is imported (its stand-in __init__ says so).
    result = _run_with(site, tmp_path)
    assert "conflict" not in result.stderr
    assert "the foreign package ran" in result.stderr
