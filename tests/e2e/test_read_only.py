"""A read-only folder (a Bazel or Nix sandbox, a read-only checkout): a replay that writes
nothing needs nothing writable, and a command that must write says so in one line.

The folder is a read-only bind mount, since the tests run as root, for whom ``chmod``
stops no write; where mounting is not allowed the tests are skipped.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.support import PY, ROOT, LineClient, replay_command, scaled

GOOD = ROOT / "examples" / "everything.jsonl"


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "checkout"
    folder.mkdir()
    shutil.copy(GOOD, folder / "t.jsonl")
    steps = (
        ["mount", "--bind", str(folder), str(folder)],
        ["mount", "-o", "remount,ro,bind", str(folder)],
    )
    for step in steps:
        made = subprocess.run(step, capture_output=True, check=False)
        if made.returncode != 0:
            subprocess.run(["umount", str(folder)], capture_output=True, check=False)
            pytest.skip(f"cannot make a read-only bind mount: {made.stderr.decode().strip()}")
    try:
        with pytest.raises(OSError, match="Read-only"):
            (folder / "probe").write_text("x")
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "cassette", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )


@pytest.mark.parametrize("mode", [(), ("--mode", "none"), ("--mode", "once", "--", "false")])
def test_a_replay_needs_nothing_writable(read_only: Path, mode: tuple[str, ...]) -> None:
    client = LineClient(replay_command(read_only / "t.jsonl", *mode))
    assert "result" in client.initialize()
    assert client.request("tools/list")["result"]["tools"]
    code, err = client.finish()
    assert code == 0, err
    assert sorted(p.name for p in read_only.iterdir()) == ["t.jsonl"]


@pytest.mark.parametrize(
    ("argv", "written"),
    [
        (("record", "-o", "{dir}/new.jsonl", "--", "false"), "new.jsonl"),
        (("redact", "{dir}/t.jsonl", "-o", "{dir}/out.jsonl"), "out.jsonl"),
        (("replay", "{dir}/t.jsonl", "--mode", "new_episodes", "--", "false"), "t.jsonl"),
        (("record", "-o", "{dir}/t.jsonl", "--mode", "all", "--", "false"), "t.jsonl"),
    ],
)
def test_a_command_that_must_write_says_so_in_one_line(
    read_only: Path, argv: tuple[str, ...], written: str
) -> None:
    done = cli(*(part.format(dir=read_only) for part in argv))
    assert done.returncode == 3, done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith(f"cassette: error: {read_only / written}: cannot write here: ")
    assert "Read-only file system" in last
    assert "Traceback" not in done.stderr
