"""No orphans: whatever happens to the recorder, its server does not outlive it.

Each test records a real server process (``tests/servers/stubborn_server.py``, which can
ignore the end of its input and SIGTERM) behind ``cassette record``, ends the recorder one
way (end of input, SIGTERM, SIGINT, SIGKILL, its client dying, the TypeScript SDK
client's close), and checks by process id that the server is gone: at once where the
recorder ended it, within the documented grace (5 s, then 2 s more after SIGTERM) where
only the keeper could. The cassette ends with the server's exit, and an answer the server
sent while it was being stopped is in it.

The recorder starts the server again for its probes, during the session; those servers
must not outlive it either. Each test marks its recorder's environment (``TAG``), which
every server it starts inherits, and checks that no stubborn server so marked is left (the
TypeScript SDK gives the recorder an environment of its own: there the mark is an argument
of the server, which the stubborn server ignores).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cassette.core.wire.model import ExitEvent, MessageEvent
from cassette.tools.lint import lint_cassette
from tests.helpers.support import (
    NODE_DIR,
    PY,
    ROOT,
    LineClient,
    node,
    record_command,
    scaled,
    session_events,
)

STUBBORN = [PY, str(ROOT / "tests" / "servers" / "stubborn_server.py")]
TS_CLOSE = NODE_DIR / "ts_close.mjs"
#: The recorder's grace, then its wait after SIGTERM (docs/cli.md), and room for a busy box.
DOCUMENTED = 5.0 + 2.0
SLACK = 15.0  # on a quiet machine; scaled() stretches it with the load


#: The variable naming a test's recorder in its environment and so its servers'.
TAG = "CASSETTE_TEST_NO_ORPHANS"


@pytest.fixture
def tagged(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment entry that marks this test's recorder and every server it starts;
    whatever of them a failed test leaves running is killed after it."""
    tag = {TAG: str(tmp_path)}
    yield tag
    for pid in stubborn_left(tag):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def stubborn_left(tag: dict[str, str]) -> list[int]:
    """The stubborn servers marked with ``tag`` still running: the session's and the
    probes' (Linux's ``/proc``: each process's command line and environment)."""
    (entry,) = (f"{name}={value}".encode() for name, value in tag.items())
    left = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            if not any(arg.endswith(b"stubborn_server.py") for arg in argv):
                continue
            environ = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile, or not ours
            continue
        if (entry in environ or f"--{entry.decode()}".encode() in argv) and not gone(int(name)):
            left.append(int(name))
    return left


def mark(tag: dict[str, str]) -> str:
    """``tag`` as an argument of the server (see the module docstring)."""
    ((name, value),) = tag.items()
    return f"--{name}={value}"


def none_left_within(tag: dict[str, str], seconds: float) -> list[int]:
    """``[]`` once no stubborn server marked with ``tag`` runs; what still runs if some
    does after ``seconds``."""
    deadline = time.monotonic() + seconds
    while left := stubborn_left(tag):
        if time.monotonic() > deadline:
            return left
        time.sleep(0.05)
    return []


def gone(pid: int) -> bool:
    """Whether the process has ended (a zombie nobody reaped yet has ended too)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def server_pid(tape: Path) -> int:
    """The server's process id, from the stderr line it recorded at its start (on disk
    once the first exchange succeeded)."""
    for line in tape.read_text().splitlines():
        event = json.loads(line)
        if event.get("kind") == "stderr" and event["text"].startswith("stubborn-server: pid "):
            return int(event["text"].rsplit(" ", 1)[1])
    raise AssertionError(f"no pid line in {tape}")


def opened(
    tape: Path, tag: dict[str, str], *flags: str, server: list[str] | None = None
) -> tuple[LineClient, int]:
    client = LineClient(record_command(tape, server or [*STUBBORN, *flags]), env=tag)
    client.initialize()
    return client, server_pid(tape)


def last_event(tape: Path) -> object:
    return session_events(tape)[-1]  # the recorder's probes come after the session


def test_a_server_that_ignores_end_of_input_is_terminated_after_the_grace(
    tmp_path: Path, tagged: dict[str, str]
) -> None:
    tape = tmp_path / "eof.jsonl"
    client, pid = opened(tape, tagged, "--ignore-eof")
    code, err = client.finish()
    assert code == 0
    assert gone(pid)  # the recorder ended it before exiting
    assert stubborn_left(tagged) == []  # its probes' servers too
    assert last_event(tape) == ExitEvent(t=last_event(tape).t, code=-signal.SIGTERM)  # type: ignore[union-attr]
    assert "stubborn-server: end of input" in err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_server_and_records_what_it_said_meanwhile(
    tmp_path: Path, tagged: dict[str, str], sig: signal.Signals
) -> None:
    tape = tmp_path / "signal.jsonl"
    client, pid = opened(tape, tagged, "--ignore-eof")
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "hold"}}
    client.send(call)  # answered only once the server's input closes: during the stop
    client.proc.send_signal(sig)
    answer = client.receive()
    assert answer["id"] == 5
    assert "result" in answer
    assert client.proc.wait(timeout=scaled(SLACK)) == 128 + sig
    assert gone(pid)
    assert stubborn_left(tagged) == []
    events = session_events(tape)
    answers = [e for e in events if isinstance(e, MessageEvent) and e.message.get("id") == 5]
    assert [e.dir for e in answers] == ["c2s", "s2c"]
    assert isinstance(events[-1], ExitEvent)
    assert [f for f in lint_cassette(tape) if f.severity == "error"] == []


@pytest.mark.parametrize(
    "server",
    [
        pytest.param([*STUBBORN, "--ignore-eof"], id="ignores-end-of-input"),
        pytest.param([*STUBBORN, "--ignore-eof", "--ignore-sigterm"], id="ignores-sigterm-too"),
        pytest.param(
            ["sh", "-c", f"{' '.join(STUBBORN)} --ignore-eof; echo never"], id="through-a-shell"
        ),
    ],
)
def test_a_killed_recorder_leaves_no_server_behind(
    tmp_path: Path, tagged: dict[str, str], server: list[str]
) -> None:
    """Killed as soon as the session is open: while its probes start their servers."""
    tape = tmp_path / "killed.jsonl"
    client, pid = opened(tape, tagged, server=server)
    os.kill(client.proc.pid, signal.SIGKILL)  # nothing of the recorder runs after this
    client.proc.wait(timeout=scaled(SLACK))
    assert gone_within(pid, DOCUMENTED + scaled(SLACK))
    assert none_left_within(tagged, DOCUMENTED + scaled(SLACK)) == []


def test_a_client_that_dies_takes_the_server_with_it(
    tmp_path: Path, tagged: dict[str, str]
) -> None:
    tape = tmp_path / "client-died.jsonl"
    client, pid = opened(tape, tagged, "--ignore-eof")
    assert client.proc.stdin is not None
    assert client.proc.stdout is not None
    client.proc.stdin.close()  # what a dead client leaves: both pipes closed at once
    client.proc.stdout.close()
    assert client.proc.wait(timeout=DOCUMENTED + scaled(SLACK)) == 0
    assert gone(pid)
    assert stubborn_left(tagged) == []
    assert isinstance(last_event(tape), ExitEvent)


def _ts_close(tape: Path, tag: dict[str, str], *flags: str) -> dict[str, object]:
    argv = [node(), str(TS_CLOSE), *record_command(tape, [*STUBBORN, *flags, mark(tag)])]
    done = subprocess.run(argv, capture_output=True, timeout=scaled(60), check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_the_typescript_client_close_gets_the_exit_recorded_and_no_orphan(
    tmp_path: Path, tagged: dict[str, str]
) -> None:
    """The SDK ends stdin, then SIGTERMs the recorder 2 s later and SIGKILLs it 2 s after:
    the recorder must end its server (which ignores end of input) and record its exit
    before that."""
    tape = tmp_path / "ts.jsonl"
    out = _ts_close(tape, tagged, "--ignore-eof")
    assert out["tools"] == ["echo", "hold"]
    pid = server_pid(tape)
    assert gone_within(pid, scaled(SLACK))
    assert none_left_within(tagged, DOCUMENTED + scaled(SLACK)) == []
    last = last_event(tape)
    assert isinstance(last, ExitEvent)
    assert last.code == -signal.SIGTERM


def test_the_typescript_client_close_leaves_no_server_that_ignores_sigterm(
    tmp_path: Path, tagged: dict[str, str]
) -> None:
    tape = tmp_path / "ts-sigterm.jsonl"
    _ts_close(tape, tagged, "--ignore-eof", "--ignore-sigterm")
    assert gone_within(server_pid(tape), DOCUMENTED + scaled(SLACK))
    assert none_left_within(tagged, DOCUMENTED + scaled(SLACK)) == []


ESCAPER = """
import os, subprocess, sys
sleeper = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(300)"],
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    start_new_session=True,  # leaves the server's process group: no group signal reaches it
)
open(sys.argv[1], "w").write(str(sleeper.pid))
os.execv(sys.executable, [sys.executable, sys.argv[2]])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper is Linux's")
def test_a_descendant_that_left_the_group_is_ended_with_the_server(tmp_path: Path) -> None:
    script, pid_file = tmp_path / "escaper.py", tmp_path / "sleeper.pid"
    script.write_text(ESCAPER)
    server = [PY, str(script), str(pid_file), str(ROOT / "tests" / "servers" / "raw_server.py")]
    client = LineClient(record_command(tmp_path / "t.jsonl", server))
    try:
        client.initialize()
        sleeper = int(pid_file.read_text())
        assert not gone(sleeper)
        code, err = client.finish()
        assert code == 0, err
        assert gone_within(sleeper, scaled(10.0))
    finally:
        with contextlib.suppress(ProcessLookupError, ValueError, FileNotFoundError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
