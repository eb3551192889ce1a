"""The subreaper's sweep (``cassette.transports.stdio._reaper``) never takes a child that is
being started for an orphan: the recorder's probes start servers while other probes end
theirs, and a server whose start had not yet returned was killed as an orphan."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cassette.transports.stdio import _reaper

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a subreaper is Linux's")


def _child() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_a_child_being_started_is_no_orphan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_reaper, "_adopting", [True])  # as the command line's record sets it
    child = _child()  # not in ``started``: what a start looks like before it returns
    # this test's child only: the worker's other children are no business of this test
    monkeypatch.setattr(_reaper, "_children", lambda: [child.pid])
    try:
        with _reaper.starting():
            assert _reaper.end_adopted() == []
        assert child.poll() is None
        assert _reaper.end_adopted() == [child.pid]  # once no start is under way, it is one
        assert not Path(f"/proc/{child.pid}").exists()  # killed and reaped
    finally:
        if child.poll() is None:  # the sweep did not take it: end it here
            child.kill()
            child.wait()
