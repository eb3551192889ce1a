"""A keeper spawned before its server, told the inode of the server's stdin pipe, finds
the server only once the recorder is dead: a recorder killed between the two spawns must
leave no server unkept, and one killed before the server's spawn leaves nothing to end."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from cassette.transports.stdio import _keeper
from cassette.transports.stdio._early import KEEPER
from tests.helpers.support import scaled

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

#: A server that ignores the end of its input and SIGTERM (only SIGKILL ends it); it says
#: ``ready`` once SIGTERM is ignored.
STUBBORN = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('ready', flush=True); time.sleep(300)"
)


def started(stdin: int) -> subprocess.Popen[bytes]:
    """The stubborn server on ``stdin``, leading a session of its own, once it is ready."""
    server = subprocess.Popen(
        [sys.executable, "-c", STUBBORN],
        stdin=stdin,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert server.stdout is not None
    ready, _, _ = select.select([server.stdout], [], [], scaled(15))
    assert ready, "the server did not start"
    assert server.stdout.readline() == b"ready\n"
    return server


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    """The server's stdin pipe, as the recorder makes it (neither end inheritable)."""
    ends = os.pipe()
    yield ends
    for fd in ends:
        with contextlib.suppress(OSError):  # closed by the test: the recorder died
            os.close(fd)


def keeper(inode: int) -> subprocess.Popen[bytes]:
    """A keeper told the pipe, not a process (no grace; SIGKILL half a second after
    SIGTERM)."""
    argv = [sys.executable, "-I", "-S", KEEPER, f"pipe:{inode}", "0", "0.5"]
    return subprocess.Popen(argv, stdin=subprocess.PIPE, start_new_session=True)


def recorder_dies(pipe: tuple[int, int], kept: subprocess.Popen[bytes]) -> None:
    """What a SIGKILL of the recorder does to these: its ends close, no ``done``."""
    for fd in pipe:
        os.close(fd)
    assert kept.stdin is not None
    kept.stdin.close()


def ended(server: subprocess.Popen[bytes]) -> None:
    server.kill()
    server.wait(timeout=scaled(10))
    assert server.stdout is not None
    server.stdout.close()


def test_the_keeper_finds_the_server_holding_its_pipe_and_ends_it(
    pipe: tuple[int, int],
) -> None:
    kept = keeper(os.fstat(pipe[0]).st_ino)
    server = started(pipe[0])
    try:
        assert _keeper._holders(str(os.fstat(pipe[0]).st_ino), os.getpgid(0)) != {}
        recorder_dies(pipe, kept)
        assert server.wait(timeout=scaled(15)) == -signal.SIGKILL
        assert kept.wait(timeout=scaled(15)) == 0
    finally:
        ended(server)


def test_a_keeper_whose_server_was_never_spawned_ends_at_once(pipe: tuple[int, int]) -> None:
    kept = keeper(os.fstat(pipe[0]).st_ino)
    recorder_dies(pipe, kept)
    assert kept.wait(timeout=scaled(15)) == 0


def test_the_holders_are_every_process_holding_the_pipe_by_group(
    pipe: tuple[int, int],
) -> None:
    inode, ours = str(os.fstat(pipe[0]).st_ino), os.getpgid(0)
    assert _keeper._holders(inode, spared=-1) == {ours: _keeper._started(ours)}
    server = started(pipe[0])
    try:
        found = _keeper._holders(inode, spared=-1)
        assert set(found) == {ours, server.pid}
        assert found[server.pid] == _keeper._started(server.pid)
        assert set(_keeper._holders(inode, spared=ours)) == {server.pid}  # the recorder's
    finally:
        ended(server)
