"""Install hints name what works for the running install: a checkout installed with
``-e`` gets ``pip install -e '.[http]'``, an install from the index the index's name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import cassette_mcp._install as door
from cassette import _install
from cassette._install import install_command
from cassette_mcp._install import reinstall_command

#: What pip writes for ``pip install 'cassette-mcp @ git+https://...'``.
GIT = {
    "url": "https://github.com/cassette-mcp/cassette-mcp",
    "vcs_info": {"vcs": "git", "commit_id": "0123456789abcdef0123456789abcdef01234567"},
}


class _Dist:
    def __init__(self, direct: dict[str, Any] | None) -> None:
        self.direct = direct

    def read_text(self, name: str) -> str | None:
        assert name == "direct_url.json"
        return None if self.direct is None else json.dumps(self.direct)


def installed(monkeypatch: pytest.MonkeyPatch, direct: dict[str, Any] | None) -> None:
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: _Dist(direct))


def test_a_checkout_installed_with_e_is_told_to_install_from_itself(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    installed(monkeypatch, {"url": tmp_path.as_uri(), "dir_info": {"editable": True}})
    monkeypatch.chdir(tmp_path)
    assert install_command("http") == "pip install -e '.[http]'"
    assert reinstall_command() == "pip install --force-reinstall --no-deps -e ."
    monkeypatch.chdir(tmp_path.parent)
    assert install_command("http") == f"pip install -e '{tmp_path}[http]'"


def test_an_install_from_the_index_or_a_wheel_names_the_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    installed(monkeypatch, None)
    assert install_command("http") == "pip install 'cassette-mcp[http]'"
    assert reinstall_command() == "pip install --force-reinstall --no-deps cassette-mcp"
    installed(monkeypatch, {"url": "file:///w/cassette_mcp-0.2.0.whl", "archive_info": {}})
    assert install_command("toml") == "pip install 'cassette-mcp[toml]'"


def test_the_transport_hint_uses_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from cassette import registry

    installed(monkeypatch, {"url": tmp_path.as_uri(), "dir_info": {"editable": True}})
    monkeypatch.chdir(tmp_path)
    assert registry._install("http") == "pip install -e '.[http]'"
    assert _install._DIST == "cassette-mcp"


@pytest.mark.parametrize(
    "direct",
    [
        None,
        {"url": "file:///w/cassette_mcp-0.2.0.whl", "archive_info": {}},
        {"url": "file:///w/checkout", "dir_info": {"editable": True}},
        {"url": "file:///w/checkout", "dir_info": {}},
        {"url": "https://example.invalid/x.tar.gz", "archive_info": {}},
        {"url": 7, "dir_info": {}},
        {"url": "file:///w/checkout"},
        [],
        GIT,
        {"url": "https://h.example/r", "vcs_info": {"vcs": "hg"}},
    ],
)
def test_the_front_door_and_the_library_read_an_install_alike(
    monkeypatch: pytest.MonkeyPatch, direct: Any
) -> None:
    """``_checkout`` is written twice (the library never imports the front door, and the
    front door cannot import the library): both read every record the same way."""
    installed(monkeypatch, direct)
    assert _install._checkout() == door._checkout()
    assert _install._vcs() == door._vcs()


def test_an_install_from_a_repository_names_the_repository_and_its_commit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before a release is on the index, the README installs from the repository: a hint
    that named the index's ``cassette-mcp`` would find nothing there."""
    installed(monkeypatch, GIT)
    source = (
        "git+https://github.com/cassette-mcp/cassette-mcp@" + "0123456789abcdef" * 2 + "01234567"
    )
    assert install_command("http") == f"pip install 'cassette-mcp[http] @ {source}'"
    reinstall = f"pip install --force-reinstall --no-deps 'cassette-mcp @ {source}'"
    assert reinstall_command() == reinstall


@pytest.mark.parametrize(
    "direct",
    [
        {"url": "https://h.example/r", "vcs_info": {"vcs": "git"}},
        {"url": "https://h.example/r'; rm -rf ~", "vcs_info": {"vcs": "git"}},
        {"url": "https://h.example/r", "vcs_info": {"vcs": "git;x", "commit_id": "abc"}},
        {"url": "https://h.example/r", "vcs_info": {"vcs": "git", "commit_id": "a b"}},
        {"url": "", "vcs_info": {"vcs": "git"}},
        {"url": "https://h.example/r", "vcs_info": []},
    ],
)
def test_a_repository_record_is_named_only_as_it_can_be_quoted(
    monkeypatch: pytest.MonkeyPatch, direct: dict[str, Any]
) -> None:
    """What pip recorded goes into a line a person pastes into a shell: a URL or commit
    that cannot stand inside single quotes as it is leaves the repository out."""
    installed(monkeypatch, direct)
    hint = install_command("http")
    assert hint.count("'") == 2
    assert "rm -rf" not in hint
    assert "git;x" not in hint
    assert "a b" not in hint
