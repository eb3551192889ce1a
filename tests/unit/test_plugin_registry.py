"""Plugins as a user meets them: installed distributions (fake ones, as dist-info folders in
a temporary directory on sys.path) whose import fails, or that claim the same name; and a
built-in transport whose optional dependency is missing."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cassette import registry
from cassette._install import install_command
from cassette.cli import main
from cassette.errors import DuplicateTransportError, PluginLoadError, UnknownTransportError


def install(site: Path, dist: str, entry_points: str) -> None:
    """What pip leaves behind for a distribution: its metadata and its entry points."""
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[cassette.transports]\n{entry_points}\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    registry._registered.cache_clear()
    yield tmp_path
    registry._registered.cache_clear()


def test_a_plugin_whose_dependency_is_missing_gets_a_hint(site: Path) -> None:
    (site / "cassette_fancy.py").write_text("import cassette_fancy_dependency_xyz\n")
    install(site, "cassette-fancy", "fancy = cassette_fancy:FancyTransport")
    assert "fancy" in registry.available()  # listed without importing anything
    with pytest.raises(PluginLoadError) as raised:
        registry.load_transport("fancy")
    message = str(raised.value)
    assert "missing module 'cassette_fancy_dependency_xyz'" in message
    assert "cassette-fancy needs the module 'cassette_fancy_dependency_xyz'" in message
    assert isinstance(raised.value, ImportError)  # what a caller would naturally catch


def test_a_plugin_names_the_extra_its_dependencies_come_with(site: Path) -> None:
    (site / "cassette_ws.py").write_text("import websockets_not_installed_xyz\n")
    install(site, "cassette-ws", "ws = cassette_ws:WsTransport [ws]")
    with pytest.raises(PluginLoadError, match=r"pip install 'cassette-ws\[ws\]'"):
        registry.load_transport("ws")


def test_a_plugin_whose_own_module_is_gone_says_reinstall(site: Path) -> None:
    install(site, "cassette-gone", "gone = cassette_gone_module_xyz:Transport")
    with pytest.raises(PluginLoadError, match=r"reinstall cassette-gone"):
        registry.load_transport("gone")


def test_two_plugins_claiming_one_name_is_a_clear_error(site: Path) -> None:
    install(site, "cassette-twin-a", "twin = twin_a:Transport")
    install(site, "cassette-twin-b", "twin = twin_b:Transport")
    with pytest.raises(DuplicateTransportError) as raised:
        registry.load_transport("twin")
    message = str(raised.value)
    assert "'twin' is claimed by" in message
    assert "cassette-twin-a (twin_a:Transport)" in message
    assert "cassette-twin-b (twin_b:Transport)" in message
    assert "uninstall one of them" in message


def test_a_plugin_claiming_a_built_in_name_is_a_duplicate_too(site: Path) -> None:
    install(site, "cassette-impostor", "stdio = impostor:Transport")
    with pytest.raises(DuplicateTransportError, match="cassette-mcp"):
        registry.load_transport("stdio")


def test_the_command_line_reports_plugin_errors_as_usage_errors(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(site, "cassette-twin-a", "twin = twin_a:Transport")
    install(site, "cassette-twin-b", "twin = twin_b:Transport")
    tape = Path(__file__).resolve().parents[2] / "examples" / "everything.jsonl"
    assert main(["replay", str(tape), "--front", "twin", "-q"]) == 2
    err = capsys.readouterr().err
    assert "cassette: error: transport name 'twin' is claimed by" in err
    assert "Traceback" not in err


def test_a_built_in_transport_without_its_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keep = ("_http", "sse_parser", "_lines", "_fdio", "memory", "stdio")  # no httpx in these
    for module in [m for m in sys.modules if m.startswith("cassette.transports.")]:
        if module.rsplit(".", 1)[-1] not in keep:
            monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "httpx", None)  # as if the http extra were not installed
    for name in ("sse", "streamable-http"):
        with pytest.raises(PluginLoadError) as raised:
            registry.load_transport(name)
        assert "missing module 'httpx'" in str(raised.value)
        # the command for this install: from a checkout, the checkout's folder with -e
        assert install_command("http") in str(raised.value)


def test_an_unknown_name_lists_what_is_installed() -> None:
    with pytest.raises(UnknownTransportError) as raised:
        registry.load_transport("carrier-pigeon")
    listed = str(raised.value).split("installed: ", 1)[1].split(", ")
    assert {"sse", "stdio", "streamable-http (or http)"} <= set(listed)
    assert "memory" not in listed  # reached in process only: no person can use it


def test_http_is_short_for_streamable_http_wherever_a_name_is_taken() -> None:
    """One alias table in the registry, so the library (``serve_replay(transport=...)``,
    ``record(transport=...)``) takes ``http`` exactly as the command line does."""
    from cassette.mock.serve import check_front
    from cassette.runtime.serve import front_of

    assert registry.load_transport("http") is registry.load_transport("streamable-http")
    assert registry.get_transport("http").name == "streamable-http"
    assert registry.get_connector("http").name == "streamable-http"
    assert front_of("http").name == "streamable-http"
    assert check_front("http").name == "streamable-http"
