"""The pre-commit hooks of ``.pre-commit-hooks.yaml``, run by pre-commit itself in a sample
repository: a planted secret and a broken cassette fail them, clean cassettes pass."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cassette.core.tape.codec import encode_line
from cassette.core.wire.model import Header, MessageEvent, RecorderInfo
from tests.helpers.support import ROOT, scaled

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
    # try-repo clones this checkout: an unpacked sdist is no git repository
    pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs a git checkout"),
]

PRE_COMMIT = Path(sys.executable).with_name("pre-commit")
SECRET = "ghp_" + "Zq8vKx2LmN4pRt6wYb1cDf3gHj5kMn7sQv9X"[:36]


def tape(path: Path, text: str) -> None:
    header = Header(
        "stdio",
        RecorderInfo("cassette-mcp", "1"),
        "2026-01-01T00:00:00.000Z",
        era="legacy",
        protocol_version="2025-06-18",
    )
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    }
    welcome = {
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"},
    }
    call = {"name": "echo", "arguments": {}}
    messages = [
        ("c2s", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}),
        ("s2c", {"jsonrpc": "2.0", "id": 1, "result": welcome}),
        ("c2s", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ("c2s", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}),
        (
            "s2c",
            {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": text}]}},
        ),
    ]
    events = [MessageEvent(t=0.1 * n, dir=d, message=m) for n, (d, m) in enumerate(messages)]  # type: ignore[arg-type]
    path.write_bytes(b"".join(encode_line(v) for v in (header, *events)))


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PRE_COMMIT_HOME": str(cwd.parent / "pre-commit-home"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    return subprocess.run(
        list(args),
        capture_output=True,
        text=True,
        timeout=scaled(300),
        check=False,
        cwd=cwd,
        env=env,
    )


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    repo = tmp_path / "sample"
    repo.mkdir()
    assert run(repo, "git", "init", "-q").returncode == 0
    tape(repo / "good.jsonl", "Hello, Ada.")
    return repo


@pytest.mark.skipif(not PRE_COMMIT.exists(), reason="needs pre-commit (the test group)")
def test_the_manifest_is_valid() -> None:
    done = run(ROOT, str(PRE_COMMIT), "validate-manifest", ".pre-commit-hooks.yaml")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(not PRE_COMMIT.exists(), reason="needs pre-commit (the test group)")
def test_clean_cassettes_pass_both_hooks(sample: Path) -> None:
    run(sample, "git", "add", ".")
    for hook in ("cassette-lint-installed", "cassette-scan-installed"):
        done = run(sample, str(PRE_COMMIT), "try-repo", str(ROOT), hook, "--all-files")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Passed" in done.stdout


@pytest.mark.skipif(not PRE_COMMIT.exists(), reason="needs pre-commit (the test group)")
def test_a_planted_secret_fails_the_scan_hook(sample: Path) -> None:
    tape(sample / "leak.jsonl", f"your token is {SECRET}")
    run(sample, "git", "add", ".")
    done = run(
        sample, str(PRE_COMMIT), "try-repo", str(ROOT), "cassette-scan-installed", "--all-files"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Failed" in done.stdout
    assert "leak.jsonl" in done.stdout
    assert SECRET not in done.stdout  # the report names the secret's place, never the secret


@pytest.mark.skipif(not PRE_COMMIT.exists(), reason="needs pre-commit (the test group)")
def test_a_broken_cassette_fails_the_lint_hook(sample: Path) -> None:
    (sample / "broken.jsonl").write_text('{"kind":"header","format":1\n', encoding="utf-8")
    run(sample, "git", "add", ".")
    done = run(
        sample, str(PRE_COMMIT), "try-repo", str(ROOT), "cassette-lint-installed", "--all-files"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "broken.jsonl:1: not JSON" in done.stdout
    assert "good.jsonl: header and frames agree" in done.stdout
