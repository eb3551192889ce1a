"""Suspects: a random-looking token no rule claimed fails a scan by where it is (never
its value) until ``[tool.cassette.redact] reviewed`` lists it; what only looks random
(UUIDs, commit ids, digests, paths, schema URLs, base64 images, identifiers) is none."""

from __future__ import annotations

import base64
import json
import random
import string
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette
from cassette.errors import UsageError
from cassette.tools._suspects import Reviewed, reviewed_entries, suspects, unreviewed
from tests.helpers.support import PY

_rng = random.Random(3)
#: A credential in a form no rule knows, under a name no rule reads.
ODD = "".join(_rng.choice(string.ascii_letters + string.digits) for _ in range(30)) + "7Q"


def tape(*results: Any) -> Cassette:
    header = {
        "kind": "header",
        "format": 1,
        "transport": "stdio",
        "recorder": {"name": "cassette-mcp", "version": "0"},
        "started_at": "2026-11-29T00:00:00Z",
        "target": {"command": ["srv"]},
    }
    lines = [json.dumps(header)]
    lines.append(
        json.dumps(
            {
                "kind": "message",
                "t": 0,
                "dir": "c2s",
                "message": {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "x"},
                },
            }
        )
    )
    for i, result in enumerate(results):
        lines.append(json.dumps({"kind": "message", "t": 0, "dir": "s2c", "message": {
            "jsonrpc": "2.0", "id": 1 + i, "result": result}}))  # fmt: skip
    return Cassette.loads("\n".join(lines) + "\n", "t.jsonl")


def found(cassette: Cassette) -> list[tuple[int, str]]:
    return [(s.line, s.pointer) for s in suspects(cassette.header.target, cassette.events)]


def test_a_random_token_under_an_innocent_name_is_a_suspect_by_pointer() -> None:
    cassette = tape({"structuredContent": {"handle": ODD}}, {"content": [{"text": f"k {ODD}"}]})
    assert found(cassette) == [
        (3, "/message/result/structuredContent/handle"),
        (4, "/message/result/content/0/text"),
    ]
    (suspect, *_) = suspects(cassette.header.target, cassette.events)
    assert ODD not in suspect.finding().message
    assert "/message/result/structuredContent/handle" in suspect.finding().message


@pytest.mark.parametrize(
    "value",
    [
        {"id": ODD, "requestId": ODD, "etag": ODD, "sha256": "ab" * 32},
        {"text": "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nparent a1b2c3d4"},
        {"text": "9fceb02d0ae598e95dc970b74767f19372d61af8 9fceb02 Fix the build"},
        {"text": "3f2504e0-4f89-11d3-9a0c-0305e82c3301 and 6ba7b810-9dad-11d1-80b4-00c04fd430c8"},
        {"text": "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"text": "-rw-r--r-- 1 ada staff 1204 Jan 1 10:00 src/cassette/core/secret_rules.py"},
        {"text": "see https://github.com/modelcontextprotocol/typescript-sdk/blob/main/README.md"},
        {"text": "getUserAccountByIdentifierV2Async and HTTPRequestHandlerFactory3"},
        {
            "tools": [
                {"name": "x", "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#"}}
            ]
        },
        {"content": [{"type": "image", "data": base64.b64encode(bytes(range(256))).decode()}]},
        {"text": "data:image/png;base64," + base64.b64encode(bytes(range(256))).decode()},
        {"text": "password=[REDACTED:assignment:1] and [REDACTED:github:2]"},
        # an absolute path without a dot, as a checkout inside another one has it
        {"cwd": "/work/main/build/stress/pair-1-1", "text": "in /srv/ci/runner-7/job-42x9"},
    ],
)
def test_what_only_looks_random_is_no_suspect(value: dict[str, Any]) -> None:
    assert found(tape(value)) == []


def test_a_token_in_a_path_is_still_a_suspect() -> None:
    """A path is cut at its slashes, and each part is judged: a credential in one is found."""
    assert found(tape({"text": f"/srv/keys/{ODD}/config"})) == [(3, "/message/result/text")]


def test_reviewed_entries_match_by_pointer_rule_and_cassette() -> None:
    cassette = tape({"structuredContent": {"handle": ODD}}, {"content": [{"text": ODD}]})
    all_ = suspects(cassette.header.target, cassette.events)
    exact = Reviewed("/message/result/structuredContent/handle")
    assert [s.pointer for s in unreviewed(all_, [exact], "t.jsonl")] == [
        "/message/result/content/0/text"
    ]
    star = Reviewed("/message/result/*/0/text")
    assert len(unreviewed(all_, [exact, star], "t.jsonl")) == 0
    elsewhere = Reviewed("/message/result/structuredContent/handle", cassette="other/*.jsonl")
    assert len(unreviewed(all_, [elsewhere], "tests/t.jsonl")) == 2
    other_rule = Reviewed("/message/result/structuredContent/handle", rule="github")
    assert len(unreviewed(all_, [other_rule], "t.jsonl")) == 2


@pytest.mark.parametrize(
    ("reviewed", "words"),
    [
        ("x", "must be a list"),
        (["/a"], "must be a table with a pointer"),
        ([{"pointer": "a"}], "not a JSON Pointer"),
        ([{"pointer": "/a", "digest": "sha256:00"}], "pointer, rule and cassette"),
    ],
)
def test_a_malformed_reviewed_entry_is_one_line(reviewed: Any, words: str) -> None:
    with pytest.raises(UsageError, match=words):
        reviewed_entries({"redact": {"reviewed": reviewed}}, "pyproject.toml: x")


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "cassette", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_scan_lint_and_the_hook_fail_on_a_suspect_until_it_is_reviewed(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_bytes(tape({"structuredContent": {"handle": ODD}}).dumps())
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    for command in (
        ["redact", "--scan", "t.jsonl"],
        ["lint", "t.jsonl"],
        ["hook", "scan", "t.jsonl"],
    ):
        done = _run(tmp_path, *command)
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        assert "t.jsonl:3:" in done.stdout
        assert "/message/result/structuredContent/handle" in done.stdout
        assert ODD not in done.stdout + done.stderr
    scan = _run(tmp_path, "redact", "--scan", "t.jsonl", "--format", "json")
    data = json.loads(scan.stdout)
    assert data["secrets"] == []
    assert [s["line"] for s in data["suspects"]] == [3]
    (tmp_path / "pyproject.toml").write_text(
        "[tool.cassette.redact]\nreviewed = [\n"
        '  { pointer = "/message/result/structuredContent/handle", rule = "entropy" },\n]\n'
    )
    for command in (
        ["redact", "--scan", "t.jsonl"],
        ["lint", "t.jsonl"],
        ["hook", "scan", "t.jsonl"],
    ):
        done = _run(tmp_path, *command)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    (tmp_path / "pyproject.toml").write_text('[tool.cassette.redact]\nreviewed = "all"\n')
    done = _run(tmp_path, "redact", "--scan", "t.jsonl")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "pyproject.toml" in done.stderr


def test_a_malformed_reviewed_list_fails_a_scan_that_finds_no_suspect(tmp_path: Path) -> None:
    """The list is checked whether or not a suspect needs it, so a wrong entry fails the
    first scan, not the first one that meets a suspect."""
    (tmp_path / "t.jsonl").write_bytes(tape({"content": []}).dumps())
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cassette.redact]\nreviewed = [{ pointer = "/x", digest = "sha256:00" }]\n'
    )
    for command in (["redact", "--scan", "t.jsonl"], ["lint", "t.jsonl"]):
        done = _run(tmp_path, *command)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert "pointer, rule and cassette" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert _run(tmp_path, "redact", "--scan", "t.jsonl").returncode == 0
