"""Recording a session again keeps the lines of the events that did not change: the same
server recorded twice leaves the cassette byte-identical, and one changed answer shows in
``git diff`` as that answer's line only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cassette import Cassette
from tests.helpers.support import PY, ROOT, scaled

pytestmark = pytest.mark.e2e

STEADY = ROOT / "tests" / "servers" / "steady_server.py"
SCENARIOS = f"""\
format = 1

[target]
command = [{json.dumps(PY)}, {json.dumps(str(STEADY))}]
era = "legacy"

[[scenarios]]
name = "weather"
steps = [
  {{ list = "tools" }},
  {{ call = "greet", arguments = {{ name = "Ada" }} }},
  {{ call = "forecast", arguments = {{ city = "Oslo" }} }},
  {{ call = "greet", arguments = {{ name = "Ada" }} }},
]
"""


def record(cwd: Path, *again: str, temp: str = "-3", build: str = "1") -> None:
    fresh = "1" if "--redact-pii" in again else "0"  # random personal data, when redacted
    env = {**os.environ, "STEADY_TEMP": temp, "STEADY_FRESH_PII": fresh, "STEADY_BUILD": build}
    env.pop("MCP_CASSETTE_MODE", None)
    result = subprocess.run(
        [PY, "-m", "cassette", "record", "--scenarios", "s.toml", *again],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
        cwd=cwd,
        env=env,
    )
    assert result.returncode == 0, result.stderr


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=True,
        cwd=cwd,
    )
    return done.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("again", [["--overwrite"], ["--mode", "all"]], ids=["overwrite", "all"])
def test_a_re_recording_changes_only_what_changed(tmp_path: Path, again: list[str]) -> None:
    (tmp_path / "s.toml").write_text(SCENARIOS, encoding="utf-8")
    tape = tmp_path / "weather.jsonl"
    record(tmp_path)
    first = tape.read_bytes()
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "weather.jsonl")
    git(tmp_path, "commit", "-q", "-m", "first")

    record(tmp_path, *again)
    assert tape.read_bytes() == first  # same messages: not one byte differs
    assert git(tmp_path, "status", "--porcelain", "weather.jsonl") == ""

    record(tmp_path, *again, temp="5")
    assert git(tmp_path, "diff", "--numstat") == "1\t1\tweather.jsonl\n"
    assert "1 insertion(+), 1 deletion(-)" in git(tmp_path, "diff", "--stat")
    changed = git(tmp_path, "diff", "-U0").splitlines()
    assert [
        line[:1] for line in changed if line[:1] in "+-" and line[:3] not in ("---", "+++")
    ] == ["-", "+"]
    assert "Oslo: 5 C" in changed[-1]
    times = [e.t for e in Cassette.load(tape).events]
    assert times == sorted(times)  # the changed answer sits between its kept neighbours


SIGN_IN = SCENARIOS.replace(
    '  { call = "greet", arguments = { name = "Ada" } },\n]',
    '  { call = "sign_in" },\n  { call = "greet", arguments = { name = "Ada" } },\n]',
)


@pytest.mark.parametrize("pii", [[], ["--redact-pii"]], ids=["secrets", "secrets-and-pii"])
def test_fresh_secrets_each_run_still_leave_the_file_byte_identical(
    tmp_path: Path, pii: list[str]
) -> None:
    """The server signs in with new random credentials every run; their placeholders are
    numbered by order of appearance, so the re-recording is the same bytes."""
    assert "sign_in" in SIGN_IN
    (tmp_path / "s.toml").write_text(SIGN_IN, encoding="utf-8")
    tape = tmp_path / "weather.jsonl"
    record(tmp_path, *pii)
    first = tape.read_bytes()
    text = first.decode()
    assert "signed in with [REDACTED:github:1]" in text
    assert "again: [REDACTED:github:1]" in text  # the same token: the same placeholder
    assert "ghp_" not in text
    sign_in = next(
        e.message
        for e in Cassette.load(tape).events
        if e.kind == "message" and "structuredContent" in e.message.get("result", {})
    )
    # a typed sentinel carries its placeholder's number: the access token in the JSON text
    # before it is key:1 (a name beside a value, read inside the string), this one key:2
    assert "[REDACTED:key:1]" in text
    assert sign_in["result"]["structuredContent"] == {"token": "tk_0000000000000002"}
    if pii:
        assert "reach redacted-1@example.invalid or +15550100001" in text
        assert "corp.example.com" not in text
    else:
        assert "reach ada@corp.example.com or +47 912 34 567" in text  # kept unless asked

    for again in (["--overwrite"], ["--mode", "all"]):
        record(tmp_path, *again, *pii)
        assert tape.read_bytes() == first  # new secrets, the same placeholders: same bytes


CLOCK = SCENARIOS.replace(
    '  { call = "greet", arguments = { name = "Ada" } },\n]',
    '  { call = "clock" },\n  { call = "greet", arguments = { name = "Ada" } },\n]',
)


def changed_lines(before: bytes, after: bytes) -> list[int]:
    old, new = before.splitlines(), after.splitlines()
    assert len(old) == len(new)
    return [n + 1 for n, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]


def test_keep_volatile_keeps_answers_changed_only_in_volatile_values(tmp_path: Path) -> None:
    """The clock answer holds the time (in a text, in JSON answered as text) and a trace
    id in _meta: recorded again, only its line changes; with keep-volatile, none does,
    and a real change still shows as its own line."""
    assert "clock" in CLOCK
    (tmp_path / "s.toml").write_text(CLOCK, encoding="utf-8")
    tape = tmp_path / "weather.jsonl"
    record(tmp_path)
    first = tape.read_bytes()
    clock_line = next(n for n, line in enumerate(first.splitlines(), 1) if b"report made" in line)

    record(tmp_path, "--overwrite")
    assert changed_lines(first, tape.read_bytes()) == [clock_line]  # volatile values moved
    tape.write_bytes(first)

    record(tmp_path, "--overwrite", "--keep-volatile")
    assert tape.read_bytes() == first  # the old line kept: not one byte differs

    # the project's setting, and what [tool.cassette.verify] ignores counts as volatile too
    (tmp_path / "pyproject.toml").write_text(
        "[tool.cassette]\nkeep-volatile = true\n\n"
        '[tool.cassette.verify]\nignore = ["/result/content/1/text#/build"]\n',
        encoding="utf-8",
    )
    record(tmp_path, "--mode", "all", build="2")
    assert tape.read_bytes() == first
    record(tmp_path, "--mode", "all", build="2", temp="5")  # a real change: its line only
    changed = changed_lines(first, tape.read_bytes())
    assert len(changed) == 1
    assert b"Oslo: 5 C" in tape.read_bytes().splitlines()[changed[0] - 1]
