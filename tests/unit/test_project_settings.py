"""``[tool.cassette]`` is read from the nearest pyproject.toml, and only a file that may
hold it is parsed (``cassette.store.config._may_hold_table``): every spelling TOML allows
for the table must still be found, with what the standard library's parser says."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from cassette.errors import UsageError
from cassette.store import config

#: Each a pyproject.toml holding the table, written another way TOML allows.
HOLDS_THE_TABLE = [
    "[tool.cassette]\nredact = false\n",
    '[tool.cassette.redact]\npatterns = ["acct-[0-9]{6}"]\n',
    "[tool . cassette]\nmax-depth = 12\n",
    '[tool."cassette"]\nmax-depth = 12\n',
    "[tool.'cassette']\nmax-depth = 12\n",
    "[ tool.cassette ]\nmax-depth = 12\n",
    "tool.cassette.max-depth = 12\n",
    "tool.cassette = { max-depth = 12 }\n",
    "tool = { cassette = { max-depth = 12 } }\n",
    "[tool]\ncassette = { max-depth = 12 }\n",
    "[tool]\ncassette.max-depth = 12\n",
    '[tool]\n"cassette" . max-depth = 12\n',
    '[tool."\\u0063assette"]\nmax-depth = 12\n',  # an escape spells the key
    "[tool]\ncassette" + " " * 60 + "= { max-depth = 12 }\n",  # far from its equals sign
    '[project]\ndependencies = ["cassette-mcp"]\n\n[tool.cassette.pytest]\nmode = "once"\n',
    '[project.scripts]\ncassette = "app:main"\n\n[tool]\ncassette.max-depth = 12\n',
    '"tool" = { cassette = { max-depth = 12 } }\n\n[project]\nname = "app"\n',
]

#: Each a pyproject.toml of a project that uses us without the table.
LACKS_THE_TABLE = [
    '[project]\nname = "app"\ndependencies = ["cassette-mcp>=0.2", "anyio"]\n',
    '[dependency-groups]\ntest = ["cassette-mcp[http]"]\n',
    "[tool.cassette-extra]\nx = 1\n",  # another table whose name starts the same
    '[tool.ruff]\nexclude = ["tests/cassettes/*.jsonl"]\n',
    "# the cassette tests live in tests/\n[tool.pytest.ini_options]\n",
    '[project.scripts]\ncassette = "app.cli:main"\n',  # a script of the same name
    '[tool.importlinter]\nroot_packages = ["app"]\n# app.cassette.x = the recordings\n',
    '[project.entry-points."cassette.transports"]\nws = "app.ws:Front"\n',
    "",
]


@pytest.mark.parametrize("text", HOLDS_THE_TABLE)
def test_every_spelling_of_the_table_is_read(tmp_path: Path, text: str) -> None:
    expected = tomllib.loads(text)["tool"]["cassette"]
    assert expected  # the case is what it says
    assert config._may_hold_table(text)
    (tmp_path / "pyproject.toml").write_text(text)
    assert config.load_settings(tmp_path) == expected


@pytest.mark.parametrize("text", LACKS_THE_TABLE)
def test_a_project_without_the_table_is_not_parsed(tmp_path: Path, text: str) -> None:
    assert "cassette" not in tomllib.loads(text).get("tool", {})
    assert not config._may_hold_table(text)
    (tmp_path / "pyproject.toml").write_text(text)
    assert config.load_settings(tmp_path) == {}


def test_an_escape_that_could_spell_the_key_means_parse() -> None:
    # TOML 1.1 spells a byte as \xHH; whatever tomllib reads, the file is parsed
    assert config._may_hold_table('[tool."\\x63assette"]\nmax-depth = 12\n')


def test_a_broken_file_holding_the_table_is_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.cassette]\nmax-depth = \n")
    with pytest.raises(UsageError, match=r"pyproject\.toml: cannot read \[tool\.cassette\]"):
        config.load_settings(tmp_path)


def test_a_broken_file_without_the_table_is_not_ours_to_judge(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "app\n')
    assert config.load_settings(tmp_path) == {}


def test_probe_is_read_from_the_project_and_the_option_wins(tmp_path: Path) -> None:
    assert config.probe_setting(None, tmp_path) is True  # no project: probes
    (tmp_path / "pyproject.toml").write_text("[tool.cassette]\nprobe = false\n")
    assert config.probe_setting(None, tmp_path) is False
    assert config.probe_setting(True, tmp_path) is True  # --probe over the project's
    assert config.probe_setting(False, tmp_path) is False


def test_a_probe_that_is_no_boolean_is_one_line_naming_the_key(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.cassette]\nname = 1\nprobe = "no"\n')
    with pytest.raises(UsageError, match=r"pyproject\.toml:3: \[tool\.cassette\] probe must be"):
        config.probe_setting(None, tmp_path)
