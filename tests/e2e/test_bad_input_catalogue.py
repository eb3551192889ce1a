"""Every bad input, given to every command: one clear line, a documented exit code, never
70 (an internal error), never a hang, never unbounded memory.

The catalogue is ``tests/helpers/catalogue.py``: files that are not cassettes or manifests (a
folder, a FIFO, a loop of links, ``/dev/zero``, a sparse gigabyte, byte order marks,
binary) and ones wrong in one way each, given to each command where it reads or writes
one; then bad URLs, ports, servers that cannot be run or reached or that exit at once.
Each case runs as a user would run it (a process, stdin at end of file), under a 60 s
deadline and a 2 GiB address-space limit (``RLIMIT_AS``), so a hang or a file read whole
fails the case. The time and memory each case takes are reported by
``benchmarks/bad_inputs.py``.

The cross product of bad cassettes and commands is a broad matrix (about 400 processes):
the default run takes every third pair along the diagonals (``_every_third``), so each
bad file still reaches a third of the commands and each command a third of the files;
``CASSETTE_FULL_MATRIX=1`` runs every pair.
"""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.catalogue import (
    CASSETTES,
    MANIFESTS,
    SCENARIOS,
    Case,
    cassette_cases,
    make_files,
    manifest_cases,
    other_cases,
    scenarios_cases,
)

FULL = os.environ.get("CASSETTE_FULL_MATRIX") == "1"
ADDRESS_SPACE = 2 << 30
DEADLINE = 60


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_files(tmp_path_factory.mktemp("bad"))


@pytest.fixture(scope="module")
def taken_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_case(case: Case, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cassette", *case.argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=DEADLINE,
        cwd=cwd,
        preexec_fn=_bounded,
        check=False,
    )


def check_outcome(
    case: Case, done: subprocess.CompletedProcess[str], names: str | None = None
) -> None:
    """The exit is documented and not 70, no traceback, and an error is one line, the
    last; when ``names`` is given, a file error (exit 3) names that file."""
    told = f"{case.name}: exit {done.returncode}\nstderr:\n{done.stderr}"
    assert done.returncode != 70, told
    assert done.returncode in case.codes, told
    assert "Traceback" not in done.stderr, told
    errors = [line for line in done.stderr.splitlines() if line.startswith("cassette: error:")]
    if done.returncode >= 2:
        assert len(errors) == 1, told
        assert done.stderr.rstrip("\n").splitlines()[-1] == errors[0], told
        if names is not None and done.returncode == 3:
            assert names in errors[0], told
    else:
        assert errors == [], told


_C = [c.name for c in cassette_cases(Path("t"), Path("o"))]
_M = [c.name for c in manifest_cases(Path("m"))]
_O = [c.name for c in other_cases(Path(), 0)]


_BAD = [*CASSETTES, "through-a-file"]


def _every_third(files: list[str], commands: list[str]) -> list[tuple[str, str]]:
    """Every pair when the full matrix is asked for, else the pairs on every third
    diagonal: a covering third, the same on every run (no sampling)."""
    return [
        (bad, command)
        for i, bad in enumerate(files)
        for j, command in enumerate(commands)
        if FULL or (i + j) % 3 == 0
    ]


@pytest.mark.parametrize(("bad", "command"), _every_third(_BAD, _C))
def test_every_bad_cassette_to_every_command(
    files: dict[str, Path], tmp_path: Path, bad: str, command: str
) -> None:
    case = next(c for c in cassette_cases(files[bad], tmp_path / "out") if c.name == command)
    check_outcome(case, run_case(case, tmp_path), names=files[bad].name)


@pytest.mark.parametrize("command", _M)
@pytest.mark.parametrize("bad", list(MANIFESTS))
def test_every_bad_manifest_to_every_command(
    files: dict[str, Path], tmp_path: Path, bad: str, command: str
) -> None:
    case = next(c for c in manifest_cases(files[bad]) if c.name == command)
    check_outcome(case, run_case(case, tmp_path), names=files[bad].name)


@pytest.mark.parametrize("bad", list(SCENARIOS))
def test_every_bad_scenarios_file_to_record(
    files: dict[str, Path], tmp_path: Path, bad: str
) -> None:
    (case,) = scenarios_cases(files[bad], tmp_path / "out")
    check_outcome(case, run_case(case, tmp_path), names=files[bad].name)
    assert not (tmp_path / "out").exists()  # refused before anything was recorded


@pytest.mark.parametrize("name", _O)
def test_every_bad_option_and_server(tmp_path: Path, taken_port: int, name: str) -> None:
    case = next(c for c in other_cases(tmp_path, taken_port) if c.name == name)
    check_outcome(case, run_case(case, tmp_path))
