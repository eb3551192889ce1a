"""``cassette git-setup`` makes real git show a cassette's change as the changed message,
not as every line whose time offset moved."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cassette import Cassette
from cassette.core.tape.codec import encode_line
from cassette.core.wire.model import Header, MessageEvent, RecorderInfo
from tests.helpers.support import PY, scaled

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]


def write_tape(path: Path, temp: str, shift: float, started: str) -> None:
    header = Header("stdio", RecorderInfo("cassette-mcp", "1"), started, era="legacy")
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "forecast", "arguments": {"city": "Oslo"}},
    }
    answer = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": f"Oslo: {temp} C"}]},
    }
    lines = [encode_line(header)]
    lines.append(encode_line(MessageEvent(t=0.1 + shift, dir="c2s", message=call)))
    lines.append(encode_line(MessageEvent(t=0.2 + shift, dir="s2c", message=answer)))
    path.write_bytes(b"".join(lines))


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd), "GIT_PAGER": "cat"}
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=True,
        cwd=cwd,
        env=env,
    )
    return done.stdout


def test_git_diff_and_log_show_the_changed_answer_only(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    setup = subprocess.run(
        [PY, "-m", "cassette", "git-setup"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=scaled(60),
        check=False,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert setup.returncode == 0, setup.stderr
    assert (tmp_path / ".gitattributes").read_text(encoding="utf-8") == "*.jsonl diff=cassette\n"
    tape = tmp_path / "weather.jsonl"
    write_tape(tape, "-3", 0.0, "2026-01-01T00:00:00.000Z")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "first")
    write_tape(tape, "5", 0.5, "2026-02-02T00:00:00.000Z")  # every line differs on disk
    Cassette.load(tape)

    shown = git(tmp_path, "diff", "-U0", "weather.jsonl")
    changes = [
        line for line in shown.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]
    assert changes == ['-            "text": "Oslo: -3 C",', '+            "text": "Oslo: 5 C",']
    assert '"t"' not in shown
    assert "started_at" not in shown

    git(tmp_path, "commit", "-q", "-am", "second")
    log = git(tmp_path, "log", "-p", "-U0", "-1")
    assert '+            "text": "Oslo: 5 C",' in log
    assert "0.6" not in log
    raw = git(tmp_path, "diff", "--no-textconv", "HEAD~1", "HEAD", "--numstat")
    assert raw.startswith("3\t3\t")  # without the driver: all three lines


def test_git_setup_twice_adds_the_line_once(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    for _ in range(2):
        subprocess.run(
            [PY, "-m", "cassette", "git-setup", "--pattern", "tapes/*.jsonl"],
            cwd=tmp_path,
            check=True,
            capture_output=True,
            timeout=scaled(60),
            env={**os.environ, "HOME": str(tmp_path)},
        )
    assert (tmp_path / ".gitattributes").read_text(
        encoding="utf-8"
    ) == "tapes/*.jsonl diff=cassette\n"
    assert "git-textconv" in git(tmp_path, "config", "diff.cassette.textconv")
