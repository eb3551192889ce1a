"""docs/test-your-server.md is true: every command on it runs, in a copy of the example
folder it walks through, with the exit code and the output the page shows.

A ``console`` block holds ``$ COMMAND`` lines, each followed by the output the page
promises: those lines must appear in that order in what the command printed (``*`` is a
wildcard, ``...`` stands for lines the page leaves out). A command ending in
``# exit N`` must exit N; any other must exit 0. ``cd`` moves the rest of the page.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.docs_pages import run_page
from tests.helpers.support import PY, ROOT, scaled

pytestmark = pytest.mark.e2e

PAGE = ROOT / "docs" / "test-your-server.md"
EXAMPLE = ROOT / "examples" / "server-testing"
_BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.DOTALL)
_EXIT = re.compile(r"\s+#\s*exit (\d+)\s*$")


def blocks(kind: str) -> list[str]:
    return [body for lang, body in _BLOCK.findall(PAGE.read_text()) if lang == kind]


def commands() -> list[tuple[str, int, list[str]]]:
    """(command, expected exit code, expected output lines) in page order."""
    out: list[tuple[str, int, list[str]]] = []
    for body in blocks("console"):
        for line in body.splitlines():
            if line.startswith("$ "):
                command = line[2:]
                found = _EXIT.search(command)
                code = int(found.group(1)) if found else 0
                out.append((_EXIT.sub("", command), code, []))
            elif line.strip() and line.strip() != "...":
                out[-1][2].append(line)
    return out


def test_every_command_on_the_page_runs_as_shown(tmp_path: Path) -> None:
    copy = tmp_path / "examples" / "server-testing"
    shutil.copytree(
        EXAMPLE, copy, ignore=shutil.ignore_patterns("cassettes", ".pytest_cache", "__pycache__")
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_CASSETTE", "PYTEST"))}
    env["PATH"] = f"{Path(PY).parent}{os.pathsep}{env.get('PATH', '')}"
    run_page(PAGE, tmp_path, env, minimum=8)


def test_the_pages_ci_snippet_is_a_command_the_page_runs() -> None:
    ran = {command for command, _, _ in commands()}
    for body in blocks("yaml"):
        for run in re.findall(r"run: (.+)", body):
            assert f"MCP_CASSETTE_MODE=none {run.strip()}" in ran
    assert not blocks("sh")  # commands live in console blocks
    assert not blocks("bash")


def test_the_committed_example_cassettes_still_verify(tmp_path: Path) -> None:
    """The cassettes in examples/server-testing are the example server's answers today."""
    for tape in sorted((EXAMPLE / "cassettes").glob("*.jsonl")):
        result = subprocess.run(
            [PY, "-m", "cassette", "verify", str(tape), "--", PY, "weather_server.py"],
            cwd=EXAMPLE,
            capture_output=True,
            text=True,
            timeout=scaled(120),
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr
