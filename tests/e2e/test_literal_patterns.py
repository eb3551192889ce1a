"""A value given as a redaction pattern is refused, and never written or printed: the
command line, and every command that reads a cassette an older version wrote with one in
its header (as ``--redact-pattern "$API_KEY"`` used to write it, with its sha256), with
the real steady server (tests/servers/steady_server.py) and a real line client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cassette.core.redaction.redacted import pattern_digest
from tests.helpers.support import PY, ROOT, LineClient
from tests.helpers.support import cassette_cli as cassette

pytestmark = pytest.mark.e2e
STEADY = ROOT / "tests" / "servers" / "steady_server.py"
#: what "$API_KEY" held: a fake live key
KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
DIGEST = pattern_digest(KEY)
PATTERN = "acct-[0-9]{6}"


def greet(argv: list[str], cwd: Path, *names: str) -> str:
    """A session through ``argv``: initialize, then greet each name; the recorder's stderr."""
    client = LineClient(argv, cwd=cwd)
    try:
        client.initialize()
        for name in names:
            client.request("tools/call", {"name": "greet", "arguments": {"name": name}})
        code, said = client.finish()
    finally:
        client.kill_group()
    assert code == 0, said
    return said


def test_a_value_given_as_a_pattern_is_refused_and_never_shown(tmp_path: Path) -> None:
    for given in (KEY, f"^{KEY}$"):
        done = cassette(
            "record",
            "-o",
            "t.jsonl",
            "--redact-pattern",
            given,
            "--",
            PY,
            str(STEADY),
            cwd=tmp_path,
        )
        assert done.returncode == 2
        assert "matches only one text" in done.stderr
        assert "--redact-env NAME" in done.stderr
        assert KEY not in done.stderr + done.stdout
        assert not (tmp_path / "t.jsonl").exists()
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.cassette.redact]\npatterns = ["{KEY}"]\n', encoding="utf-8"
    )
    done = cassette("record", "-o", "t.jsonl", "--", PY, str(STEADY), cwd=tmp_path)
    assert done.returncode == 2
    assert "[tool.cassette.redact] pattern number 1: matches only one text" in done.stderr
    assert KEY not in done.stderr


@pytest.fixture
def older(tmp_path: Path) -> Path:
    """A cassette whose header an older version wrote with the value as a pattern."""
    argv = [PY, "-m", "cassette", "record", "-o", "t.jsonl", "--redact-pattern", PATTERN]
    greet([*argv, "--", PY, str(STEADY)], tmp_path, "Ada")
    tape = tmp_path / "t.jsonl"
    lines = tape.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["redaction"]["patterns"].append(KEY)
    header["redaction"]["digests"].append(DIGEST)
    tape.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    return tape


def test_verify_and_an_extension_take_an_older_header_without_showing_its_value(
    older: Path,
) -> None:
    folder = older.parent
    checked = cassette("verify", "t.jsonl", "--redact-pattern", PATTERN, cwd=folder)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for said in (checked.stdout, checked.stderr):
        assert KEY not in said
        assert DIGEST not in said
    extend = [PY, "-m", "cassette", "record", "-o", "t.jsonl", "--mode", "new_episodes"]
    extend += ["--redact-pattern", PATTERN, "--", PY, str(STEADY)]
    said = greet(extend, folder, "Ada", f"Grace {KEY}")  # the second call is new, live
    assert "appended" in said or "episode" in said, said
    assert KEY not in said
    appended = older.read_text(encoding="utf-8").splitlines()[1:]
    assert "Grace" in "".join(appended)
    assert KEY not in "".join(appended)  # the value is redacted where it recurs


def test_lint_finds_it_textconv_hides_it_and_redact_drops_it(older: Path) -> None:
    folder = older.parent
    lint = cassette("lint", "t.jsonl", cwd=folder)
    assert lint.returncode != 0
    assert "a value given as a redaction pattern" in lint.stdout
    assert KEY not in lint.stdout + lint.stderr
    shown = cassette("git-textconv", "t.jsonl", cwd=folder)
    assert shown.returncode == 0
    assert PATTERN in shown.stdout
    assert KEY not in shown.stdout
    assert DIGEST not in shown.stdout
    rewritten = cassette("redact", "t.jsonl", "-o", "clean.jsonl", cwd=folder)
    assert rewritten.returncode == 0, rewritten.stderr
    clean = (folder / "clean.jsonl").read_text(encoding="utf-8")
    assert KEY not in clean
    assert DIGEST not in clean
    assert json.loads(clean.splitlines()[0])["redaction"]["patterns"] == [PATTERN]
    assert cassette("redact", "--scan", "clean.jsonl", cwd=folder).returncode == 0
