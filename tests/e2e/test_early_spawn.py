"""A plain stdio recording's server, spawned before the command line is imported.

``cassette.transports.stdio._early`` spawns it from the raw arguments and the stdio transport
adopts it. These tests hold what must not change with that: which command lines spawn
early (only a plain stdio recording), that the adopted server is spoken to, shut down and
reaped as a server ``connect`` spawns, that it gets what ``subprocess`` would give it (no
descriptor of ours past stderr, SIGPIPE at its default, a session of its own), and that a
command line that fails before recording leaves no server behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cassette.core.wire.model import ExitEvent, MessageEvent
from cassette.transport import Frame, Target
from cassette.transports.stdio import _early
from cassette.transports.stdio._adopted import AdoptedProcess
from cassette.transports.stdio.transport import StdioTransport
from tests.helpers.support import PY, ROOT, run, scaled, session_events

linux = pytest.mark.skipif(sys.platform != "linux", reason="early spawn is Linux only")

#: A stdlib server that says, in a file beside it, what it was given at its start: its
#: descriptors, whether it leads its own session, its process id; then answers
#: initialize and ends at the end of its input (or, with ``--ignore-eof``, never).
REPORTER = """\
import json, os, sys
report = {
    "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
    "leader": os.getsid(0) == os.getpid(),
    "pid": os.getpid(),
}
with open(sys.argv[1] + ".part", "w") as out:
    json.dump(report, out)
os.replace(sys.argv[1] + ".part", sys.argv[1])
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        answer = {"protocolVersion": "2025-11-25", "capabilities": {},
                  "serverInfo": {"name": "reporter", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": answer}), flush=True)
if "--ignore-eof" in sys.argv:
    import time
    while True:
        time.sleep(60)
"""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


@pytest.mark.parametrize(
    ("args", "spawns"),
    [
        (["record", "-o", "t.jsonl", "--", "node", "s.js"], True),
        (["record", "--output=t.jsonl", "--overwrite", "--fsync", "--", "node"], True),
        (["record", "-o", "t.jsonl", "--no-redact", "--era", "legacy", "--", "x"], True),
        (["record", "-o", "t.jsonl", "--mode", "once", "--", "node"], False),
        (["record", "-o", "t.jsonl", "--mode=all", "--", "node"], False),
        (["record", "-o", "t.jsonl", "--transport", "tcp", "--", "node"], False),
        (["record", "-o", "t.jsonl", "--upstream", "http://x", "--", "node"], False),
        (["record", "--scenarios", "s.toml", "-o", "d", "--", "node"], False),
        (["record", "-o", "t.jsonl", "-h", "--", "node"], False),
        (["record", "-o", "t.jsonl", "--"], False),
        (["record", "--", "node", "s.js"], False),  # no cassette: a usage error
        (["record", "-o", "t.jsonl", "node", "s.js"], False),
        (["replay", "t.jsonl", "--", "node"], False),
        ([], False),
    ],
)
def test_only_a_plain_stdio_recording_spawns_early(
    args: list[str], spawns: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCP_CASSETTE_MODE", raising=False)
    command = _early.plain_stdio_record(args)
    assert (command is not None) == spawns
    if spawns:
        assert command == tuple(args[args.index("--") + 1 :])


def test_a_mode_in_the_environment_spawns_late(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_CASSETTE_MODE", "once")
    assert _early.plain_stdio_record(["record", "-o", "t.jsonl", "--", "node"]) is None


@linux
def test_the_transport_adopts_the_early_server_and_ends_it(tmp_path: Path) -> None:
    script = tmp_path / "reporter.py"
    script.write_text(REPORTER)
    report = tmp_path / "report.json"
    command = (PY, str(script), str(report))
    _early.spawn(["record", "-o", str(tmp_path / "t.jsonl"), "--", *command])

    async def session() -> tuple[object, bytes, int | None]:
        async with StdioTransport().connect(Target(command=command)) as upstream:
            process = upstream.process  # type: ignore[attr-defined]
            await upstream.send(Frame(json.dumps(INITIALIZE).encode() + b"\n"))
            answer = await upstream.receive()
        return process, answer.data, process.returncode

    process, answer, code = run(session)
    assert isinstance(process, AdoptedProcess)
    assert json.loads(answer)["result"]["serverInfo"]["name"] == "reporter"
    assert code == 0  # it ended at the end of its input, and was reaped
    assert _early.claim(command) is None  # handed over once


@linux
def test_without_pidfds_the_server_is_spawned_late(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop waits for an adopted server's exit on a pidfd: a system that refuses them
    (an old kernel, a sandbox; valgrind) spawns nothing early, and ``connect`` spawns."""

    def refused(_pid: int) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "pidfd_open", refused)
    script = tmp_path / "reporter.py"
    script.write_text(REPORTER)
    command = (PY, str(script), str(tmp_path / "report.json"))
    _early.spawn(["record", "-o", str(tmp_path / "t.jsonl"), "--", *command])
    assert _early.claim(command) is None
    assert not (tmp_path / "report.json").exists()


@linux
def test_a_recorder_killed_while_it_starts_leaves_no_server(tmp_path: Path) -> None:
    """The keeper is spawned with the server: when the recorder dies before it adopted
    them (its pipes close, no ``done``), the keeper ends the server, as it would later."""
    script = tmp_path / "reporter.py"
    script.write_text(REPORTER)
    report = tmp_path / "report.json"
    command = (PY, str(script), str(report), "--ignore-eof")
    _early.spawn(["record", "-o", str(tmp_path / "t.jsonl"), "--", *command])
    early = _early.claim(command)
    assert early is not None
    keeper = early.keeper
    assert keeper is not None
    for fd in (early.stdin, early.stdout, early.stderr, keeper.stdin):
        os.close(fd)  # what the recorder's death does to them
    try:
        assert _gone_within(early.pid, _early.GRACE + _early.KILL_AFTER + scaled(15.0))
    finally:
        for pid in (early.pid, keeper.pid):
            os.waitpid(pid, 0)


@linux
def test_a_recording_gives_its_early_server_what_subprocess_would(tmp_path: Path) -> None:
    script = tmp_path / "reporter.py"
    script.write_text(REPORTER)
    report, tape, ignored = tmp_path / "report.json", tmp_path / "t.jsonl", tmp_path / "ign"
    # the shell (not Python, which ignores SIGPIPE itself) says what it was given
    shell = f"grep SigIgn /proc/$$/status > '{ignored}'; exec '{PY}' '{script}' '{report}'"
    extra = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(extra, True)  # a descriptor our parent left open to us
    try:
        done = subprocess.run(
            [PY, "-m", "cassette", "record", "-o", str(tape), "--", "/bin/sh", "-c", shell],
            input=json.dumps(INITIALIZE).encode() + b"\n",
            capture_output=True,
            timeout=scaled(60),
            close_fds=False,
            check=False,
            cwd=ROOT,
        )
    finally:
        os.close(extra)
    assert done.returncode == 0, done.stderr.decode()
    given = json.loads(report.read_text())
    assert given["fds"][:3] == [0, 1, 2]
    assert extra not in given["fds"]
    assert all(fd <= 3 for fd in given["fds"])  # 3: the listing's own descriptor
    mask = int(ignored.read_text().split()[1], 16)
    assert mask & (1 << (signal.SIGPIPE - 1)) == 0
    assert mask & (1 << (signal.SIGXFSZ - 1)) == 0
    assert given["leader"]
    events = session_events(tape)
    answers = [e for e in events if isinstance(e, MessageEvent) and e.dir == "s2c"]
    assert answers[0].message["result"]["serverInfo"]["name"] == "reporter"
    assert isinstance(events[-1], ExitEvent)
    assert events[-1].code == 0


@linux
def test_a_command_line_that_fails_first_leaves_no_server(tmp_path: Path) -> None:
    script = tmp_path / "reporter.py"
    script.write_text(REPORTER)
    report = tmp_path / "report.json"
    server = [PY, str(script), str(report), "--ignore-eof"]
    for bad in (["--no-such-option"], ["--strategy", "nonsense"]):
        report.unlink(missing_ok=True)
        argv = [PY, "-m", "cassette", "record", "-o", str(tmp_path / "t.jsonl"), *bad]
        done = subprocess.run(
            [*argv, "--", *server],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=scaled(60),
            check=False,
        )
        assert done.returncode == 2, done.stderr.decode()
        assert b"Traceback" not in done.stderr
        if report.exists():  # it had started: it was ended with the command line
            pid = json.loads(report.read_text())["pid"]
            assert _gone_within(pid, scaled(10.0))


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return True
        time.sleep(0.05)
    return False
