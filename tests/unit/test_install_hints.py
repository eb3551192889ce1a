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
    ],
)
def test_the_front_door_and_the_library_read_an_install_alike(
    monkeypatch: pytest.MonkeyPatch, direct: Any
) -> None:
    """``_checkout`` is written twice (the library never imports the front door, and the
    front door cannot import the library): both read every record the same way."""
    installed(monkeypatch, direct)
    assert _install._checkout() == door._checkout()
