"""The library as a user's typed harness sees it: docs/library.md's examples, and a
harness that passes ``pathlib.Path`` wherever a path goes, pass ``mypy --strict``."""

from __future__ import annotations

import os
import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.helpers.support import PY, ROOT, scaled

pytestmark = pytest.mark.e2e

HARNESS = """
from pathlib import Path

from cassette import Cassette, open_recording, open_replay, record
from cassette.mock import MockServer, load_manifest, write_manifest
from cassette.modes.policy import ModeChoice
from cassette.modes.runner import run_stdio
from cassette.store.faults import load_fault_plan
from cassette.tools.check import check_server
from cassette.tools.diff import diff_cassettes
from cassette.tools.distill import distill_cassette
from cassette.tools.lint import lint_cassette
from cassette.tools.redact_cmd import redact_cassette, scan_cassette
from cassette.tools.show import faults_preview, misses_against, render_html, timeline
from cassette.tools.verify import verify_cassette

TAPE = Path("tests/cassettes/tape.jsonl")
SERVER = [Path("/usr/bin/python3"), Path("server.py")]


async def harness() -> None:
    Cassette.load(TAPE).dump(TAPE.with_suffix(".copy.jsonl"))
    assert not lint_cassette(TAPE)
    assert not scan_cassette(TAPE)
    redact_cassette(TAPE)[0].dump(TAPE.with_suffix(".redacted.jsonl"))
    diff_cassettes(TAPE, TAPE)
    misses_against(TAPE, TAPE)
    timeline(TAPE)
    render_html(TAPE, TAPE)
    faults_preview(TAPE, load_fault_plan(Path("faults.toml")))
    write_manifest(distill_cassette(TAPE), Path("mock.toml"))
    MockServer(load_manifest(Path("mock.toml")))
    await verify_cassette(TAPE, SERVER)
    await check_server(command=SERVER)
    await record(SERVER, TAPE)
    async with open_recording(SERVER, TAPE) as server:
        await server.request("tools/list")
    async with open_replay(TAPE) as server:
        await server.request("tools/list")
    await run_stdio(TAPE, SERVER, choice=ModeChoice("once"))
"""


def doc_examples() -> list[str]:
    """The Python blocks of docs/library.md; one that awaits at its top level is put in an
    ``async def``, as it would sit in a user's code."""
    text = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        source = block
        if re.search(r"^(await |async with |.*= await )", block, re.M):
            lines = block.splitlines()
            head = [line for line in lines if line.startswith(("import ", "from "))]
            rest = [line for line in lines if not line.startswith(("import ", "from "))]
            body = textwrap.indent("\n".join(rest), "    ")
            source = "\n".join([*head, "", "async def example() -> None:", body])
        out.append(source + "\n")
    return out


def test_the_documented_examples_and_a_path_harness_pass_mypy_strict(tmp_path: Path) -> None:
    files = []
    for number, source in enumerate([*doc_examples(), HARNESS]):
        path = tmp_path / f"example_{number}.py"
        path.write_text(source, encoding="utf-8")
        files.append(str(path))
    assert len(files) >= 8  # the documentation's blocks were found
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    argv = [PY, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), *files]
    result = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=scaled(300),
        cwd=tmp_path,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
