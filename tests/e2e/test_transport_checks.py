"""Every built-in transport passes the plugin check-suite (`cassette.testing`): stdio
against the reference peer and against a chatty stdlib server, memory on its serving side,
and the two HTTP transports against the reference server (node), fronts included."""

from __future__ import annotations

import pytest

from cassette import Target
from cassette.testing import PEER_COMMAND, PROPERTIES, check_transport_sync
from cassette.transports.memory import MemoryTransport
from tests.helpers.support import PY, RAW_SERVER, everything_server


def test_stdio_passes_every_check_against_the_reference_peer() -> None:
    report = check_transport_sync("stdio", target=Target(command=PEER_COMMAND))
    assert report.passed == PROPERTIES, str(report)
    assert not any("not checked" in r.detail for r in report.results), str(report)  # exact ones too


def test_stdio_passes_against_a_chatty_stdlib_server() -> None:
    report = check_transport_sync("stdio", target=Target(command=(PY, str(RAW_SERVER))))
    assert report.passed == PROPERTIES, str(report)


def test_memory_passes_what_applies_to_it() -> None:
    memory = MemoryTransport()

    async def client(_address: object) -> object:
        return memory.open_connection()

    report = check_transport_sync(memory, client=client)
    assert report.passed == (
        "plugin",
        *(f"serve: {p}" for p in PROPERTIES if p not in ("plugin", "error conversion")),
    ), str(report)
    # it reaches no server: a FrameServer only, so nothing of the connect side applies
    assert {r.property for r in report.skipped} == set(PROPERTIES) - {"plugin"}
    assert all("not an UpstreamConnector" in r.detail for r in report.skipped)
    assert dict((r.property, r.detail) for r in report.results)["plugin"] == "FrameServer"


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("name", "mode", "path"),
    [("sse", "sse", "/sse"), ("streamable-http", "streamableHttp", "/mcp")],
)
def test_http_transports_pass_against_the_reference_server(name: str, mode: str, path: str) -> None:
    server, port = everything_server(mode)
    with server:
        report = check_transport_sync(name, target=Target(url=f"http://127.0.0.1:{port}{path}"))
    assert report.passed == PROPERTIES, str(report)
    fronts = dict((r.property, r.detail) for r in report.results)["record/replay"]
    assert "through the plugin's own fronts" in fronts
