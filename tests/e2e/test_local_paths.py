"""A cassette keeps no machine's folders, and no stderr when told: real recordings of a
real stdio server (tests/servers/wherever_server.py) from two checkouts.

The server names its own absolute path and a cache under the home folder on stderr, and
its working folder on stdout (a raw line), as tracebacks and log lines do. What must hold:

* those lines are stored with the project's folder as relative paths and the home folder
  as ``~/...``, so recording again from another checkout, under another home folder,
  leaves the cassette byte for byte as it was;
* ``--no-stderr``, or ``stderr = false`` in ``[tool.cassette]``, keeps no stderr line in
  the cassette (the lines are still shown as they come); a setting that is not a boolean
  is one line naming the file and line.
"""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cassette import Cassette
from cassette.core.wire.model import RawEvent, StderrEvent
from tests.helpers.support import PY, ROOT, LineClient

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sys.platform == "win32", reason="reads a pipe with select"),
]
SERVER = ROOT / "tests" / "servers" / "wherever_server.py"


def checkout(base: Path, home: str, project: str, config: str = "") -> tuple[Path, Path]:
    """A home folder and a checkout inside it, holding the server and a pyproject.toml."""
    home_dir = base / home
    root = home_dir / project
    root.mkdir(parents=True)
    shutil.copy(SERVER, root / "server.py")
    (root / "pyproject.toml").write_text(f'[project]\nname = "x"\n{config}', encoding="utf-8")
    return home_dir, root


def wait_for_stderr(client: LineClient, marker: bytes, timeout: float = 30.0) -> bytes:
    """What the recorder said on stderr up to ``marker`` (the server's stderr passes
    through it: once a line is shown, the recorder has recorded it)."""
    assert client.proc.stderr is not None
    fd = client.proc.stderr.fileno()
    seen = b""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while marker not in seen:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise TimeoutError(f"{marker!r} not seen within {timeout}s: {seen!r}")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError(f"the recorder ended before {marker!r}: {seen!r}")
            seen += chunk
    return seen


def record(root: Path, home: Path, *options: str) -> bytes:
    """One session through ``cassette record`` in ``root``: the client waits for the
    server's start-up lines, then initializes, lists, calls, and ends."""
    env = {"HOME": str(home), "MCP_CASSETTE_MODE": ""}
    argv = [PY, "-m", "cassette", "record", "-o", "t.jsonl", *options, "--", PY, "server.py"]
    client = LineClient(argv, env={k: v for k, v in env.items() if v}, cwd=root)
    try:
        shown = wait_for_stderr(client, b"wherever: ready")
        client.initialize()
        client.request("tools/list")
        assert client.request("tools/call", {"name": "where", "arguments": {}})["result"]
        code, rest = client.finish()
    finally:
        client.kill_group()
    assert code == 0, rest
    return shown


def test_a_recording_from_another_checkout_and_home_is_byte_identical(tmp_path: Path) -> None:
    home_a, root_a = checkout(tmp_path / "a", "home-ada", "src/project")
    home_b, root_b = checkout(tmp_path / "b", "users/grace", "work/clone")
    shown = record(root_a, home_a)
    assert str(root_a).encode() in shown  # the person still sees where it ran
    first = (root_a / "t.jsonl").read_bytes()
    for folder in (str(root_a), str(home_a), "home-ada"):
        assert folder.encode() not in first, folder
    tape = Cassette.load(root_a / "t.jsonl")
    stderr = [e.text for e in tape.events if isinstance(e, StderrEvent)]
    assert stderr[:3] == [
        "Traceback (most recent call last):",
        '  File "server.py", line 27, in main',
        "RuntimeError: no cache at ~/.cache/wherever/db.sqlite; starting without one",
    ]
    raws = [e.text for e in tape.events if isinstance(e, RawEvent)]
    assert raws == ["wherever: serving from . (server.py)"]

    shutil.copy(root_a / "t.jsonl", root_b / "t.jsonl")  # the cassette, committed and pulled
    record(root_b, home_b, "--overwrite")
    assert (root_b / "t.jsonl").read_bytes() == first


def test_no_stderr_keeps_none_of_it_and_still_shows_it(tmp_path: Path) -> None:
    home, root = checkout(tmp_path, "home", "project")
    shown = record(root, home, "--no-stderr")
    assert b"RuntimeError: no cache at" in shown
    tape = Cassette.load(root / "t.jsonl")
    assert not [e for e in tape.events if isinstance(e, StderrEvent)]
    assert [e for e in tape.events if isinstance(e, RawEvent)]  # raw lines are not stderr


def test_the_project_setting_keeps_no_stderr(tmp_path: Path) -> None:
    home, root = checkout(tmp_path, "home", "project", "\n[tool.cassette]\nstderr = false\n")
    record(root, home)
    tape = Cassette.load(root / "t.jsonl")
    assert not [e for e in tape.events if isinstance(e, StderrEvent)]


def test_a_setting_that_is_not_a_boolean_is_one_line(tmp_path: Path) -> None:
    home, root = checkout(tmp_path, "home", "project", '\n[tool.cassette]\nstderr = "no"\n')
    done = subprocess.run(
        [PY, "-m", "cassette", "record", "-o", "t.jsonl", "--", PY, "server.py"],
        cwd=root,
        env={**os.environ, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert errors == [
        f"cassette: error: {root / 'pyproject.toml'}:5: [tool.cassette] stderr must be true "
        "or false"
    ]
    assert not (root / "t.jsonl").exists()
