"""``record --scenarios`` on the command line: what it refuses before anything runs, in one
line and with the documented exit code, and that nothing is written then."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers.support import PY, closed_port, scaled

pytestmark = pytest.mark.e2e

FILE = 'format = 1\n[target]\n{target}\n[[scenarios]]\nname = "a"\nsteps = [{{ list = "tools" }}]\n'


def cassette(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "cassette", *args],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
        cwd=cwd,
    )


def one_error(result: subprocess.CompletedProcess[str], code: int) -> str:
    assert result.returncode == code, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith("cassette: error: ")
    return lines[0]


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--upstream", "http://127.0.0.1:9/mcp"], "cannot be combined with --upstream"),
        (["--era", "modern"], "takes the era from the file"),
        (["--", "node", "server.js"], "not after --"),
        (["--report", "r.jsonl"], "cannot be combined with --report"),
    ],
)
def test_options_that_name_the_server_are_usage_errors(
    tmp_path: Path, extra: list[str], words: str
) -> None:
    (tmp_path / "s.toml").write_text(FILE.format(target='command = ["true"]'))
    line = one_error(cassette("record", "--scenarios", "s.toml", *extra, cwd=tmp_path), 2)
    assert words in line
    assert not (tmp_path / "a.jsonl").exists()


def test_record_without_a_cassette_or_scenarios_says_what_it_needs(tmp_path: Path) -> None:
    line = one_error(cassette("record", "--", "node", "server.js", cwd=tmp_path), 2)
    assert (
        line == "cassette: error: record needs -o TAPE, the cassette to write (or --scenarios FILE)"
    )
    line = one_error(cassette("record", "--scenario", "a", "-o", "x", cwd=tmp_path), 2)
    assert "give --scenarios FILE" in line


def test_an_unreachable_url_is_one_error_and_writes_nothing(tmp_path: Path) -> None:
    with closed_port() as port:
        url = f"http://127.0.0.1:{port}/mcp"
        (tmp_path / "s.toml").write_text(FILE.format(target=f'url = "{url}"'))
        line = one_error(cassette("record", "--scenarios", "s.toml", cwd=tmp_path), 4)
    assert line.startswith(f"cassette: error: {url} cannot be reached: ")
    assert list(tmp_path.iterdir()) == [tmp_path / "s.toml"]


def test_cassettes_in_the_way_are_named_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(FILE.format(target='command = ["/nonexistent/server"]'))
    (tmp_path / "a.jsonl").write_text('{"kind":"header"}\n')
    line = one_error(cassette("record", "--scenarios", "s.toml", cwd=tmp_path), 3)
    assert line.startswith("cassette: error: a.jsonl: already recorded; refusing to overwrite")
    assert (tmp_path / "a.jsonl").read_text() == '{"kind":"header"}\n'


def test_mode_none_never_starts_the_server(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(FILE.format(target='command = ["/nonexistent/server"]'))
    result = cassette("record", "--scenarios", "s.toml", "--mode", "none", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert result.stderr.splitlines()[-1].startswith("cassette: error: a.jsonl: no such cassette")
    assert not (tmp_path / "a.jsonl").exists()


def test_verify_takes_http_for_streamable_http(tmp_path: Path) -> None:
    tape = tmp_path / "t.jsonl"
    tape.write_text("")
    with closed_port() as port:
        url = f"http://127.0.0.1:{port}/mcp"
        argv = ("verify", "t.jsonl", "--transport", "http", "--upstream", url)
        result = cassette(*argv, cwd=tmp_path)
    assert "unknown" not in result.stderr  # the short name is known
    stdio = cassette("verify", "t.jsonl", "--transport", "stdio", "--upstream", url, cwd=tmp_path)
    assert one_error(stdio, 2).endswith("--transport stdio needs a server command (-- COMMAND)")
