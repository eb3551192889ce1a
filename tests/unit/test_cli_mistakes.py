"""The mistakes a person makes on the command line, each answered the same way wherever it
is made: a server command without ``--`` on every command that takes one, a mistyped value
(an option's, an environment variable's) with the public choice most likely meant, and an
abbreviated option refused with the one it stands for. Every case is refused before any
process starts or any file is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassette.cli.main import main, parser
from cassette.cli.parser import TAKES_COMMAND
from cassette.cli.suggest import _WITH_COMMAND
from tests.helpers.support import ROOT

EXAMPLE = str(ROOT / "examples" / "everything.jsonl")
HINT = "; a server command goes after --: cassette "


def refused(capsys: pytest.CaptureFixture[str], *argv: str, code: int = 2) -> str:
    """The one line a refused command prints, and its exit code checked."""
    try:
        got = main(list(argv))
    except SystemExit as exc:  # argparse's usage errors
        got = exc.code  # type: ignore[assignment]
    assert got == code
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("cassette: error: ")
    return lines[0].removeprefix("cassette: error: ")


def test_every_command_that_takes_a_server_has_its_example() -> None:
    assert set(_WITH_COMMAND) == set(TAKES_COMMAND)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["verify", EXAMPLE, "python", "srv.py"],
            "verify: python srv.py: not a cassette or an option"
            + HINT
            + "verify TAPE -- python srv.py",
        ),
        (
            ["verify", "python", "srv.py"],
            "verify: python srv.py: not a cassette or an option"
            + HINT
            + "verify TAPE -- python srv.py",
        ),
        (
            ["check", "python", "srv.py"],
            "check: python srv.py: not a cassette or an option" + HINT + "check -- python srv.py",
        ),
        (
            ["check", "srv.py"],
            "check: srv.py: not a cassette or an option" + HINT + "check -- srv.py",
        ),
        (
            ["replay", EXAMPLE, "python", "srv.py"],
            "replay: python srv.py: not a cassette or an option"
            + HINT
            + "replay TAPE -- python srv.py",
        ),
        (
            ["variant", EXAMPLE, "--as", "bare", "node", "s.js"],
            "variant: node s.js: not a cassette or an option"
            + HINT
            + "variant TAPE --as NAME -- node s.js",
        ),
        (
            ["record", "-o", "t.jsonl"],
            "record: no server command, and no --upstream URL"
            + HINT
            + "record -o TAPE -- node server.js",
        ),
        (
            ["replay", EXAMPLE, "--mode", "once"],
            "replay: mode once (from --mode) may start the server, so it needs its command"
            + HINT
            + "replay TAPE --mode once -- node server.js",
        ),
    ],
)
def test_a_server_command_without_double_dash_is_explained_the_same_everywhere(
    argv: list[str],
    expected: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # srv.py, s.js: no such files here
    assert refused(capsys, *argv) == expected
    assert list(tmp_path.iterdir()) == []  # nothing recorded, nothing started


def test_a_program_given_as_a_cassette_is_a_lost_double_dash(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``/usr/bin/python3`` is a file, but a program: no cassette."""
    import shlex
    import sys

    line = refused(capsys, "check", sys.executable, "srv.py")
    assert line.endswith(f"{HINT}check -- {shlex.join([sys.executable, 'srv.py'])}")


def test_a_missing_cassette_is_still_a_missing_cassette(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = str(tmp_path / "gone.jsonl")
    line = refused(capsys, "verify", missing, code=3)
    assert line == f"{missing}: no such cassette"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["replay", EXAMPLE, "--front", "htp"],
            "no transport named 'htp' (did you mean http?); installed: sse, stdio, "
            "streamable-http (or http)",
        ),
        (
            ["record", "-o", "t.jsonl", "--transport", "stido", "--", "x"],
            "no transport named 'stido' (did you mean stdio?)",
        ),
        (
            ["replay", EXAMPLE, "--mode", "onse"],
            "unknown record mode 'onse' (from --mode; did you mean once?); choose one of: "
            "once, none, all (or its synonym rewrite), new_episodes",
        ),
        (
            ["replay", EXAMPLE, "--strategy", "lose"],
            "unknown strategy 'lose' (did you mean loose?); choose one of: strict, default, loose",
        ),
        (["record", "-o", "t.jsonl", "--era", "modren", "--", "x"], "(did you mean modern?)"),
        (["variant", EXAMPLE, "--as", "bear"], "--as bear: unknown client (did you mean bare?)"),
    ],
)
def test_a_mistyped_value_gets_the_public_choice_meant(
    argv: list[str],
    expected: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    line = refused(capsys, *argv)
    assert expected in line
    assert "memory" not in line  # an in-process transport is no choice for a person
    assert list(tmp_path.iterdir()) == []


def test_a_mistyped_mode_in_the_environment_gets_the_mode_meant(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MCP_CASSETTE_MODE", "nonee")
    line = refused(capsys, "record", "-o", str(tmp_path / "t.jsonl"), "--", "x")
    assert line.startswith(
        "unknown record mode 'nonee' (from MCP_CASSETTE_MODE; did you mean none?); choose one of:"
    )
    monkeypatch.setenv("MCP_CASSETTE_MODE", "zzzzzz")  # nothing close: the list alone
    line = refused(capsys, "record", "-o", str(tmp_path / "t.jsonl"), "--", "x")
    assert line.startswith("unknown record mode 'zzzzzz' (from MCP_CASSETTE_MODE); choose one of:")
    assert list(tmp_path.iterdir()) == []


def test_an_internal_transport_is_never_suggested(capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, "replay", EXAMPLE, "--front", "memroy")
    assert line.startswith("no transport named 'memroy'; installed: ")
    assert "memory" not in line.split("installed: ", 1)[1]


def test_no_option_may_be_abbreviated(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    page = tmp_path / "x.html"
    line = refused(capsys, "show", EXAMPLE, "--htm", str(page))
    assert line == "show: unknown option --htm (did you mean --html?); see cassette show --help"
    assert not page.exists()
    line = refused(capsys, "replay", EXAMPLE, "--fro", "http")
    assert (
        line == "replay: unknown option --fro (did you mean --front?); see cassette replay --help"
    )
    top = parser()
    assert not top.allow_abbrev
    assert all(not command.allow_abbrev for command in top.commands.values())
