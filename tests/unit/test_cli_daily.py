"""The command line as a person meets it: help on a bare ``cassette``, "did you mean",
one-line errors, examples and option groups, one spelling per concept, and impossible
combinations refused before anything starts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cassette.cli.main import _COMMANDS, main, parse
from tests.helpers.support import ROOT

EXAMPLE = str(ROOT / "examples" / "everything.jsonl")


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one line a usage error prints (and nothing else on stderr)."""
    with pytest.raises(SystemExit) as raised:
        parse(list(argv))
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err  # one line: no argparse usage block first
    assert err.startswith("cassette: error: ")
    return err.strip()


def test_a_bare_cassette_prints_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        parse([])
    assert raised.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: cassette [--version] [-h] COMMAND [options]")
    assert "Examples:" in out
    for command in _COMMANDS:
        assert f"\n  {command} " in out


def test_a_mistyped_command_gets_the_one_meant(capsys: pytest.CaptureFixture[str]) -> None:
    line = usage_error(capsys, "relpay")
    assert line == (
        "cassette: error: unknown command 'relpay' (did you mean replay?); "
        "cassette --help lists them"
    )
    assert "choose from record, replay" in usage_error(capsys, "zzzzzz")


def test_a_mistyped_option_gets_the_one_meant_and_no_dash_hint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = usage_error(capsys, "replay", "--frnt", "http", "x.jsonl")
    assert line == (
        "cassette: error: replay: unknown option --frnt (did you mean --front?); "
        "see cassette replay --help"
    )
    assert "did you mean --strategy?" in usage_error(capsys, "record", "--stratgey=x", "-o", "t")
    assert "did you mean modern?" in usage_error(capsys, "check", "--era", "modren")


def test_the_dash_hint_only_where_a_command_could_go(capsys: pytest.CaptureFixture[str]) -> None:
    hint = "a server command goes after --"
    assert usage_error(capsys, "check", "node", "s.js").endswith(
        f"{hint}: cassette check -- node s.js"
    )
    # after --, the words left over are not a misplaced command
    assert hint not in usage_error(capsys, "replay", "t.jsonl", "extra", "--", "node", "s.js")
    # lint takes no server command at all
    lint = usage_error(capsys, "lint", "a.jsonl", "b.jsonl")
    assert lint == (
        "cassette: error: lint: unrecognized arguments: b.jsonl; see cassette lint --help"
    )


def test_a_subcommands_own_error_names_it(capsys: pytest.CaptureFixture[str]) -> None:
    line = usage_error(capsys, "replay")
    assert line.startswith("cassette: error: replay: the following arguments are required: TAPE")
    assert line.endswith("see cassette replay --help")


@pytest.mark.parametrize("command", sorted(_COMMANDS))
def test_every_command_has_a_named_usage_groups_and_examples(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse([command, "--help"])
    out = capsys.readouterr().out
    assert out.startswith(f"usage: cassette {command} ")
    examples = out.split("Examples:\n", 1)[1].splitlines()
    shown = [line for line in examples if line.startswith("  cassette ")]
    assert 2 <= len(shown) <= 4
    titles = [line for line in out.splitlines() if line.endswith(":") and line[0].isalpha()]
    assert len(titles) >= 3, titles  # positionals/options and at least one group of our own


def test_record_help_reads_in_groups(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse(["record", "--help"])
    out = capsys.readouterr().out
    for title in ("what to record:", "secrets (redaction is on by default):", "record modes:"):
        assert f"\n{title}\n" in out


def test_one_spelling_per_concept_the_other_accepted() -> None:
    check = parse(["check", "--upstream", "http://127.0.0.1:1/mcp"])
    assert check.url == "http://127.0.0.1:1/mcp"
    assert parse(["check", "--url", "http://127.0.0.1:1/mcp"]).url == check.url
    assert parse(["verify", "t.jsonl", "--url", "http://h/mcp"]).upstream == "http://h/mcp"
    assert parse(["mock", "m.toml", "--transport", "http"]).front == "http"
    assert parse(["record", "-o", "t", "--timeout", "5", "--", "x"]).upstream_timeout == 5
    assert parse(["record", "-o", "t", "--upstream-timeout", "5", "--", "x"]).upstream_timeout == 5


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["replay", EXAMPLE, "--front", "stdio", "--port", "8080"],
            "--port 8080: the stdio front listens on nothing (try --front http)",
        ),
        (["replay", EXAMPLE, "--pace-scale", "-1"], "--pace-scale must be 0 or more, not -1"),
        (["replay", EXAMPLE, "--pace-cap", "-2"], "--pace-cap must be 0 or more, not -2"),
        (
            ["record", "-o", "t.jsonl", "--transport", "sse", "--", sys.executable],
            "--transport sse reaches a server at a URL: give --upstream URL instead of a "
            "server command (a command is recorded over stdio)",
        ),
        (
            ["record", "-o", "t.jsonl", "--port", "3", "--", sys.executable],
            "--port 3: a stdio recording listens on nothing: they are for --upstream",
        ),
    ],
)
def test_impossible_combinations_are_refused_before_the_banner(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = [str(tmp_path / a) if a == "t.jsonl" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"cassette: error: {message}\n"
    assert not (tmp_path / "t.jsonl").exists()


def test_mock_on_stdio_refuses_a_port(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text('{"tools": []}')
    assert main(["mock", str(manifest), "--port", "8080"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "cassette: error: --port 8080: the stdio front listens on nothing (try --front http)\n"
    )


def test_parsing_a_replay_imports_no_difflib() -> None:
    import subprocess

    code = (
        "import sys; from cassette.cli.main import parse; parse(['replay', 't.jsonl']); "
        "print('difflib' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert out.strip() == "False"
