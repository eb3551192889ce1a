"""Running a documentation page: every ``console`` block's ``$ COMMAND`` lines, each with
the output the page promises after it.

Those lines must appear in that order in what the command printed (``*`` is a wildcard,
``...`` stands for lines the page leaves out). A command ending in ``# exit N`` must exit
N; any other must exit 0. ``cd`` moves the rest of the page. Shared by the tests of
docs/cli.md and docs/pytest.md (tests/test_docs_cli.py).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.helpers.support import PY, ROOT, scaled

_BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.DOTALL)
_EXIT = re.compile(r"\s+#\s*exit (\d+)\s*$")
_COMMENT = re.compile(r"\s+#\s.*$")

__all__ = ["commands", "run_page", "shims"]


def commands(page: Path) -> list[tuple[str, int, list[str]]]:
    """(command, expected exit code, expected output lines) in page order."""
    out: list[tuple[str, int, list[str]]] = []
    for lang, body in _BLOCK.findall(page.read_text(encoding="utf-8")):
        if lang != "console":
            continue
        for line in body.splitlines():
            if line.startswith("$ "):
                command = line[2:]
                found = _EXIT.search(command)
                code = int(found.group(1)) if found else 0
                out.append((_COMMENT.sub("", _EXIT.sub("", command)), code, []))
            elif line.strip() and line.strip() != "...":
                out[-1][2].append(line)
    return out


def shims(folder: Path, npx_runs: list[str]) -> dict[str, str]:
    """An environment whose ``cassette`` is this checkout's and whose ``npx`` runs the
    pinned server the pages name (``npx @modelcontextprotocol/server-everything``), offline;
    ``python`` and ``pytest`` are this interpreter's."""
    folder.mkdir(parents=True, exist_ok=True)
    cassette = folder / "cassette"
    cassette.write_text(f'#!/bin/sh\nexec "{PY}" -m cassette "$@"\n')
    npx = folder / "npx"
    argv = " ".join(f'"{a}"' for a in npx_runs)
    npx.write_text(f'#!/bin/sh\nshift\nexec {argv} "$@"\n')
    python = folder / "python"
    python.write_text(f'#!/bin/sh\nexec "{PY}" "$@"\n')
    pytest_ = folder / "pytest"
    pytest_.write_text(f'#!/bin/sh\nexec "{PY}" -m pytest "$@"\n')
    for shim in (cassette, npx, python, pytest_):
        shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_CASSETTE", "PYTEST"))}
    env.pop("CI", None)
    env["PATH"] = f"{folder}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    return env


def run_page(page: Path, cwd: Path, env: dict[str, str], minimum: int) -> None:
    """Run every command of ``page`` in ``cwd`` and check what it printed."""
    ran = commands(page)
    assert len(ran) >= minimum
    for command, code, expected in ran:
        if command.startswith("cd "):
            cwd = cwd / command[3:].strip()
            continue
        result = subprocess.run(
            ["bash", "-c", command],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=scaled(240),
            check=False,
        )
        printed = result.stdout + result.stderr
        assert result.returncode == code, f"$ {command}\n{printed}"
        matcher = pytest.LineMatcher(printed.splitlines())
        matcher.fnmatch_lines(expected, consecutive=False)
