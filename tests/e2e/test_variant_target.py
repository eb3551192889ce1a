"""``cassette variant TAPE --as legacy``, ``cassette verify TAPE`` and ``cassette check
TAPE --live``, with no command, start the server the header names as the recorder wrote it (a
path under the project relative to its root, one under the home folder as ``~/...``), from
any working directory, through one piece of code (``cassette.client.launch``); a server
that will not start is reported with its own error line and the ``-- COMMAND`` hint."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cassette.runtime.record import portable_argv, startable_argv
from cassette.store.target_paths import startable
from tests.e2e.test_record_era import _add
from tests.helpers.support import MODERN_SERVER, PY, run, scaled, stdio_params

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


def test_startable_runs_the_command_in_the_recorded_folder(tmp_path: Path) -> None:
    project = tmp_path / "project"
    for folder in ("servers", "sub", "cassettes"):
        (project / folder).mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    (project / "servers" / "s.py").write_text("")
    (project / "tool.py").write_text("")
    tape = str(project / "cassettes" / "t.jsonl")
    written = {"command": ["python", "../servers/s.py", "tool.py", "stdio"], "cwd": "../sub"}
    argv, cwd = startable(written, tape)
    # typed relative to sub: as typed, run in sub; made relative to the project: absolute
    assert argv == ["python", "../servers/s.py", str(project / "tool.py"), "stdio"]
    assert cwd == str(project / "sub")
    home = {"command": ["python", "s.py"], "cwd": "~/nowhere-such-folder"}
    assert startable(home, tape) == (["python", "s.py"], str(project))  # not here: the root
    assert startable({"command": ["python", "tool.py"]}, tape) == (
        ["python", str(project / "tool.py")],
        str(project),
    )  # a header that names no folder, as before


#: each command that starts the header's server, and what its success looks like
COMMANDS = {
    "variant": (["variant", "{tape}", "--as", "legacy"], '"variant":"legacy"'),
    "verify": (["verify", "{tape}"], "3 MATCH"),
    "check": (["check", "{tape}", "--live"], "result: PASS"),
}


def _cassette(tape: Path, cwd: Path, env: dict[str, str], server: list[str]) -> Any:
    """Record ``server`` from ``cwd`` into ``tape``; the header's command as written."""
    record = [PY, "-m", "cassette", "record", "-o", str(tape), "--no-probe", "--", *server]
    params = stdio_params(record, env=env)
    params.cwd = str(cwd)
    assert run(lambda: _add(params))[0] == "2026-07-28"
    return json.loads(tape.read_text().splitlines()[0])["target"]["command"]


def _start(name: str, tape: Path, cwd: Path, env: dict[str, str] | None = None) -> Any:
    argv, _ = COMMANDS[name]
    return subprocess.run(
        [PY, "-m", "cassette", *(a.format(tape=tape) for a in argv)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
    )


def _started(
    name: str, tape: Path, tmp_path: Path, env: dict[str, str], where: Path | None = None
) -> None:
    """``name`` with no command, run from ``where`` (default: a folder of its own), starts
    the server the header names."""
    elsewhere = where or tmp_path / "elsewhere"
    elsewhere.mkdir(parents=True, exist_ok=True)
    done = _start(name, tape, elsewhere, env)
    assert done.returncode == 0, done.stderr
    shows = COMMANDS[name][1]
    assert shows in (tape.read_text() if name == "variant" else done.stdout)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_server_given_relative_to_a_subfolder_starts_from_another_subfolder(
    tmp_path: Path, name: str
) -> None:
    """Recorded from ``project/sub`` as ``python ../servers/modern.py``: the path is
    relative to the folder the recording was made in, not to the project, and the header
    says which folder that was; run from ``project/other``."""
    project = tmp_path / "project"
    (project / "servers").mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    shutil.copy(MODERN_SERVER, project / "servers" / "modern.py")
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    tape = project / "cassettes" / "modern.jsonl"
    tape.parent.mkdir()
    (project / "sub").mkdir()
    written = _cassette(tape, project / "sub", env, [PY, "../servers/modern.py"])
    assert written[1] == "../servers/modern.py"
    assert _header(tape)["target"]["cwd"] == "../sub"  # from the cassette's folder
    _started(name, tape, tmp_path, env, project / "other")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_server_recorded_without_a_pyproject_starts_from_a_subfolder(
    tmp_path: Path, name: str
) -> None:
    """Recorded in a folder with no pyproject.toml above it, as ``python modern.py`` and
    as an absolute path under it (written relative to that folder): both start when the
    command runs in a subfolder of it, or in a folder elsewhere."""
    from cassette.store.config import find_pyproject

    work = tmp_path / "work"
    (work / "cassettes").mkdir(parents=True)
    assert find_pyproject(work) is None
    shutil.copy(MODERN_SERVER, work / "modern.py")
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    typed = work / "cassettes" / "typed.jsonl"
    assert _cassette(typed, work, env, [PY, "modern.py"])[1] == "modern.py"
    given = work / "cassettes" / "given.jsonl"
    assert _cassette(given, work, env, [PY, str(work / "modern.py")])[1] == "modern.py"
    for tape in (typed, given):
        assert _header(tape)["target"]["cwd"] == ".."
        _started(name, tape, tmp_path, env, work / "sub")
        _started(name, tape, tmp_path, env)


def _header(tape: Path) -> dict[str, Any]:
    return dict(json.loads(tape.read_text().splitlines()[0]))


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_server_of_a_cassette_recorded_from_a_project_subfolder_starts(
    tmp_path: Path, name: str
) -> None:
    project = tmp_path / "project"
    (project / "servers").mkdir(parents=True)
    (project / "sub").mkdir()
    (project / "pyproject.toml").write_text("")
    server = project / "servers" / "modern.py"
    shutil.copy(MODERN_SERVER, server)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    tape = project / "cassettes" / "modern.jsonl"  # a cassette lives in its project
    tape.parent.mkdir()
    written = _cassette(tape, project / "sub", env, [PY, str(server)])
    assert written[1] == "servers/modern.py"
    _started(name, tape, tmp_path, env)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_server_of_a_cassette_under_the_home_folder_starts(tmp_path: Path, name: str) -> None:
    home = tmp_path / "home"
    (home / "srv").mkdir(parents=True)
    server = home / "srv" / "modern.py"
    shutil.copy(MODERN_SERVER, server)
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": os.getcwd()}
    work = tmp_path / "work"  # recorded from a folder outside the home folder
    work.mkdir()
    tape = tmp_path / "modern.jsonl"
    assert _cassette(tape, work, env, [PY, str(server)])[1] == "~/srv/modern.py"
    _started(name, tape, tmp_path, env)


def _with_command(tape: Path, command: list[str]) -> None:
    lines = tape.read_text().splitlines()
    header = json.loads(lines[0])
    header["target"]["command"] = command
    tape.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tape = tmp_path_factory.mktemp("recorded") / "t.jsonl"
    _cassette(tape, Path.cwd(), dict(os.environ), [PY, str(MODERN_SERVER)])
    return tape


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_header_command_that_cannot_start_suggests_a_command(
    tmp_path: Path, recorded: Path, name: str
) -> None:
    tape = tmp_path / "t.jsonl"
    shutil.copy(recorded, tape)
    _with_command(tape, ["no-such-program-here", "serve"])
    done = _start(name, tape, tmp_path)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "cannot start server 'no-such-program-here'" in last
    assert "give -- COMMAND" in last


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_server_that_fails_to_start_is_quoted(tmp_path: Path, recorded: Path, name: str) -> None:
    """The server runs but exits at once, saying why on stderr: the command's last line
    quotes that line, and says how to start the server another way."""
    tape = tmp_path / "t.jsonl"
    shutil.copy(recorded, tape)
    said = "RuntimeError: DATABASE_URL is not set"
    fail = f"import sys; print('starting', file=sys.stderr); sys.exit({said!r})"
    _with_command(tape, [PY, "-c", fail])
    done = _start(name, tape, tmp_path)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert f"its last stderr: {said}" in last, done.stderr
    assert "Traceback" not in done.stderr
    assert last.endswith(
        f"the server was started as {tape}'s header names it; give -- COMMAND to start it "
        "another way"
    )
