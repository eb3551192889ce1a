"""``cassette variant TAPE --as legacy`` with no command starts the server the header
names, as the recorder wrote it: a path under the project relative to its root, one under
the home folder as ``~/...``; from any working directory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cassette.runtime.record import portable_argv, startable_argv
from tests.e2e.test_record_era import _add
from tests.support import MODERN_SERVER, PY, run, stdio_params

pytestmark = pytest.mark.e2e


def test_startable_argv_undoes_portable_argv(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "servers").mkdir()
    script = tmp_path / "servers" / "s.py"
    script.write_text("")
    home = Path.home() / "srv.py"
    written = portable_argv(["/usr/bin/python", str(script), str(home), "-v", "stdio"], tmp_path)
    assert written == ["/usr/bin/python", "servers/s.py", "~/srv.py", "-v", "stdio"]
    inside = tmp_path / "cassettes"
    inside.mkdir()
    started = startable_argv(written, inside)
    assert started == ["/usr/bin/python", str(script), str(home), "-v", "stdio"]


def _record_and_vary(
    tmp_path: Path, server: Path, cwd: Path, env: dict[str, str], tape: Path
) -> str:
    record = [PY, "-m", "cassette", "record", "-o", str(tape), "--no-probe", "--", PY]
    params = stdio_params([*record, str(server)], env=env)
    params.cwd = str(cwd)
    assert run(lambda: _add(params))[0] == "2026-07-28"
    written = json.loads(tape.read_text().splitlines()[0])["target"]["command"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run(
        [PY, "-m", "cassette", "variant", str(tape), "--as", "legacy"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert '"variant":"legacy"' in tape.read_text()
    return str(written[1])


def test_variant_starts_a_server_recorded_from_a_project_subfolder(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "servers").mkdir(parents=True)
    (project / "sub").mkdir()
    (project / "pyproject.toml").write_text("")
    server = project / "servers" / "modern.py"
    shutil.copy(MODERN_SERVER, server)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    tape = project / "cassettes" / "modern.jsonl"  # a cassette lives in its project
    tape.parent.mkdir()
    written = _record_and_vary(tmp_path, server, project / "sub", env, tape)
    assert written == "servers/modern.py"


def test_variant_starts_a_server_under_the_home_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "srv").mkdir(parents=True)
    server = home / "srv" / "modern.py"
    shutil.copy(MODERN_SERVER, server)
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": os.getcwd()}
    work = tmp_path / "work"  # recorded from a folder outside the home folder
    work.mkdir()
    written = _record_and_vary(tmp_path, server, work, env, tmp_path / "modern.jsonl")
    assert written == "~/srv/modern.py"


def test_a_header_command_that_cannot_start_suggests_a_command(tmp_path: Path) -> None:
    tape = tmp_path / "t.jsonl"
    record = [PY, "-m", "cassette", "record", "-o", str(tape), "--no-probe", "--"]
    assert run(lambda: _add(stdio_params([*record, PY, str(MODERN_SERVER)])))[0] == "2026-07-28"
    lines = tape.read_text().splitlines()
    header = json.loads(lines[0])
    header["target"]["command"] = ["no-such-program-here", "serve"]
    tape.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    done = subprocess.run(
        [PY, "-m", "cassette", "variant", str(tape), "--as", "legacy"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "cannot start server 'no-such-program-here'" in last
    assert "give -- COMMAND" in last
