"""The context corpus (``tests/helpers/secret_contexts.py``: a fake value in every context of the
rule table) through every writer and printer: a recording in every mode, the pytest
fixture, ``show`` as text and HTML, ``git-textconv``, ``redact -o``, ``verify`` and
``--update``, a miss's error and diagnostics, our own stderr, ``--report``, ``--log`` and
``import``. No value may appear in any byte they write, in any encoding
(``secret_contexts.encodings``: plain, JSON-escaped, percent, HTML, base64, hex, case).
And ``redact --scan`` on a ``--no-redact`` recording of the same session reports every
line that holds a value, as a secret found or as a suspect."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.secret_contexts import EXAMPLES, VALUES, leaked
from tests.helpers.support import PY, ROOT, LineClient

pytestmark = pytest.mark.e2e

SERVER = ROOT / "tests" / "servers" / "contexts_server.py"
COMMAND = [PY, str(SERVER), *EXAMPLES["argv"][0].payload]
ENV = {**os.environ, **EXAMPLES["environment"][0].payload}
#: What the client sends: the JSON contexts as arguments, which the server echoes back.
SENT = {name: e.payload for name, exs in EXAMPLES.items() for e in exs if e.kind == "json"}


def cassette(*args: str, cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "cassette", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
        env=kwargs.pop("env", ENV),
        **kwargs,
    )


def drive(argv: list[str], cwd: Path, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """One client session: the handshake, then ``calls``; its replies and our stderr."""
    client = LineClient(argv, env=ENV, cwd=cwd)
    try:
        client.initialize()
        replies = [client.request("tools/call", {"name": n, "arguments": a}) for n, a in calls]
        code, err = client.finish()
    finally:
        client.kill_group()
    return {"code": code, "stderr": err, "replies": replies}


def ours(stderr: str) -> str:
    """Our own lines of a recording's stderr: the server's stderr passes through to the
    terminal as the server wrote it (SECURITY.md, "Not through the gate")."""
    return "\n".join(line for line in stderr.splitlines() if line.startswith("cassette"))


CALLS = [("corpus", {}), ("echo", SENT)]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a recording of the corpus session, redacted and not."""
    folder = tmp_path_factory.mktemp("corpus")
    record = [PY, "-m", "cassette", "record", "-o", "tape.jsonl", "--log", "record.log"]
    done = drive([*record, "--", *COMMAND], folder, CALLS)
    assert done["code"] == 0, done["stderr"]
    assert leaked(ours(done["stderr"])) == []
    plain = [PY, "-m", "cassette", "record", "-o", "plain.jsonl", "--no-redact", "--", *COMMAND]
    assert drive(plain, folder, CALLS)["code"] == 0
    return folder


def test_the_session_really_carries_every_value(work: Path) -> None:
    raw = (work / "plain.jsonl").read_text(encoding="utf-8")
    assert set(leaked(raw)) == set(VALUES)


def test_a_recording_and_its_log_hold_no_value(work: Path) -> None:
    assert leaked((work / "tape.jsonl").read_bytes()) == []
    assert leaked((work / "record.log").read_bytes()) == []


@pytest.mark.parametrize("mode", ["once", "all"])
def test_every_record_mode_writes_no_value(work: Path, tmp_path: Path, mode: str) -> None:
    tape = tmp_path / "t.jsonl"
    argv = [PY, "-m", "cassette", "record", "-o", str(tape), "--mode", mode]
    argv += ["--report", str(tmp_path / "r.jsonl"), "--log", str(tmp_path / "l.log")]
    done = drive([*argv, "--", *COMMAND], tmp_path, CALLS)
    assert done["code"] == 0, done["stderr"]
    for written in (tape, tmp_path / "r.jsonl", tmp_path / "l.log"):
        assert leaked(written.read_bytes()) == [], written
    assert leaked(ours(done["stderr"])) == []


def test_new_episodes_and_a_miss_write_and_print_no_value(work: Path, tmp_path: Path) -> None:
    tape = tmp_path / "t.jsonl"
    tape.write_bytes((work / "tape.jsonl").read_bytes())
    texts = [e.payload for exs in EXAMPLES.values() for e in exs if e.kind == "text"]
    extra = [("echo", {"note": "\n".join(texts), "password": VALUES[0]})]
    argv = [PY, "-m", "cassette", "replay", str(tape), "--mode", "new_episodes"]
    argv += ["--report", str(tmp_path / "r.jsonl"), "--log", str(tmp_path / "l.log")]
    done = drive([*argv, "--", *COMMAND], tmp_path, [*CALLS, *extra])
    assert done["code"] == 0, done["stderr"]
    assert "appended" in done["stderr"]
    for written in (tape, tmp_path / "r.jsonl", tmp_path / "l.log"):
        assert leaked(written.read_bytes()) == [], written
    assert leaked(ours(done["stderr"])) == []

    # a replay that misses: the closest recording and the live request, printed and sent
    missing = [("echo", {"note": "\n".join(texts), "other": SENT})]
    replay = [PY, "-m", "cassette", "replay", str(tape), "--report", str(tmp_path / "m.jsonl")]
    missed = drive(replay, tmp_path, [("corpus", {}), *missing])
    assert missed["code"] == 1
    assert "error" in missed["replies"][-1]
    assert leaked(json.dumps(missed["replies"])) == []
    assert leaked(missed["stderr"]) == []
    assert leaked((tmp_path / "m.jsonl").read_bytes()) == []


def test_show_textconv_and_redact_write_no_value(work: Path, tmp_path: Path) -> None:
    tape = str(work / "tape.jsonl")
    for args in (["show", tape], ["git-textconv", tape], ["lint", tape], ["diff", tape, tape]):
        done = cassette(*args, cwd=tmp_path)
        assert done.returncode in (0, 1), done.stderr
        assert leaked(done.stdout + done.stderr) == [], args
    html = tmp_path / "t.html"
    assert cassette("show", tape, "--html", str(html), cwd=tmp_path).returncode == 0
    assert leaked(html.read_bytes()) == []

    # a recording made without redaction, redacted after the fact
    plain = str(work / "plain.jsonl")
    out = tmp_path / "clean.jsonl"
    done = cassette("redact", plain, "-o", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert leaked(out.read_bytes()) == []
    assert leaked(done.stdout + done.stderr) == []
    scan = cassette("redact", "--scan", plain, "--format", "json", cwd=tmp_path)
    assert leaked(scan.stdout + scan.stderr) == []


def test_scan_of_a_no_redact_recording_reports_every_line_with_a_value(work: Path) -> None:
    plain = work / "plain.jsonl"
    scan = cassette("redact", "--scan", str(plain), "--format", "json", cwd=work)
    assert scan.returncode == 1
    report = json.loads(scan.stdout)
    flagged = {f["line"] for f in report["secrets"] + report["suspects"]}
    lines = plain.read_text(encoding="utf-8").split("\n")
    unflagged = {
        number: leaked(line)
        for number, line in enumerate(lines, start=1)
        if leaked(line) and number not in flagged
    }
    assert unflagged == {}


def test_verify_and_update_write_and_print_no_value(work: Path, tmp_path: Path) -> None:
    tape = tmp_path / "t.jsonl"
    tape.write_bytes((work / "tape.jsonl").read_bytes())
    done = cassette("verify", str(tape), "--", *COMMAND, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    assert leaked(done.stdout + done.stderr) == []
    as_json = cassette("verify", str(tape), "--format", "json", "--", *COMMAND, cwd=tmp_path)
    assert leaked(as_json.stdout + as_json.stderr) == []
    update = cassette("verify", str(tape), "--update", "--", *COMMAND, cwd=tmp_path)
    assert update.returncode in (0, 1), update.stderr
    assert leaked(update.stdout + update.stderr) == []
    assert leaked(tape.read_bytes()) == []


PYTEST_SUITE = """
import sys
sys.path.insert(0, {root!r})
from tests.helpers.support import LineClient

COMMAND = {command!r}
SENT = {sent!r}


def test_corpus(mcp_cassette):
    client = LineClient(mcp_cassette.server_command(COMMAND))
    try:
        client.initialize()
        client.request("tools/call", {{"name": "corpus", "arguments": {{}}}})
        client.request("tools/call", {{"name": "echo", "arguments": SENT}})
        client.finish()
    finally:
        client.kill_group()
"""


def test_the_pytest_fixture_writes_and_prints_no_value(tmp_path: Path) -> None:
    suite = PYTEST_SUITE.format(root=str(ROOT), command=COMMAND, sent=SENT)
    (tmp_path / "test_corpus.py").write_text(textwrap.dedent(suite), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    env = {k: v for k, v in ENV.items() if not k.startswith("MCP_CASSETTE")}
    for _ in range(2):  # record, then replay
        done = subprocess.run(
            [PY, "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_corpus.py"],
            capture_output=True, text=True, timeout=180, check=False, cwd=tmp_path, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert leaked(done.stdout + done.stderr) == []
    written = [p for p in tmp_path.rglob("*.jsonl")]
    assert written
    for path in written:
        assert leaked(path.read_bytes()) == [], path


def test_import_writes_no_value(tmp_path: Path) -> None:
    doc = json.loads((ROOT / "tests/fixtures/peers/mcp-recorder.json").read_text("utf-8"))
    texts = [e.payload for exs in EXAMPLES.values() for e in exs if e.kind == "text"]
    content = doc["interactions"][-1]["response"]["result"]["content"]
    content += [{"type": "text", "text": t} for t in texts]
    doc["interactions"][-1]["response"]["result"]["structuredContent"] = SENT
    (tmp_path / "rec.json").write_text(json.dumps(doc), encoding="utf-8")
    done = cassette("import", "rec.json", "-o", "t.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert leaked(done.stdout + done.stderr) == []
    assert leaked((tmp_path / "t.jsonl").read_bytes()) == []
