"""The keeper signals its server's process group only while the group's number is still its
server's: a keeper that wakes late must not end whoever was given the number since."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from cassette.transports.stdio import _keeper
from tests.helpers.support import scaled

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


@pytest.fixture
def stranger() -> Iterator[subprocess.Popen[bytes]]:
    """A process leading a group of its own, as a server started later would."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"],
        stdin=subprocess.PIPE,
        start_new_session=True,
    )
    yield proc
    proc.kill()
    proc.wait(timeout=scaled(10))


def test_a_group_led_by_the_process_it_was_given_is_its_own(
    stranger: subprocess.Popen[bytes],
) -> None:
    born = _keeper._started(stranger.pid)
    assert born is not None
    assert _keeper._ours(stranger.pid, born)
    assert _keeper._alive(stranger.pid, born)


def test_a_number_now_held_by_another_start_is_not_signalled(
    stranger: subprocess.Popen[bytes],
) -> None:
    born = _keeper._started(stranger.pid)
    assert born is not None
    earlier = str(int(born) - 1)  # the server that held this number before
    assert not _keeper._alive(stranger.pid, earlier)
    _keeper._signal(stranger.pid, signal.SIGKILL, earlier)
    assert stranger.poll() is None  # still running: nobody signalled it
    assert stranger.stdin is not None
    stranger.stdin.close()
    assert stranger.wait(timeout=scaled(10)) == 0  # it ended on its own, at end of input


def test_a_group_whose_leader_is_gone_is_still_its_own() -> None:
    # no process has the id (members of the group would keep the number from reuse)
    assert _keeper._ours(2**22 + 12345, "42")
    assert _keeper._started(2**22 + 12345) is None
