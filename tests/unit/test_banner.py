"""The replay's banner, as ``cassette replay`` prints it before it serves
(``cassette.cli.replay.opened``): one plain line that says whether anything is wrong for
the clients people run, the details under ``-v``, the client configuration with its
``claude mcp add`` and ``gemini mcp add`` lines, and, for a long cassette, nothing read
but its opening and its probes."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from cassette.cli.main import parse
from cassette.cli.replay import ReplayCommand, opened
from cassette.core.eras.surface import capability_sets
from cassette.core.replay.opening import OpeningPool
from cassette.core.replay.sessions import ReplayPool
from cassette.store.storage import Cassette
from tests.helpers.opening_tapes import write_long
from tests.unit import test_fits

HEADER = {**test_fits.HEADER, "protocol_version": "2025-11-25"}
SERVER = test_fits.SERVER
FOR_DETAILS = "; run with -v for details"


def _line(direction: str, message: dict[str, Any], **meta: str) -> str:
    """One event line as the recorder writes it (compact; ``meta`` last)."""
    event: dict[str, Any] = {"kind": "message", "t": 0.0, "dir": direction, "message": message}
    if meta:
        event["meta"] = meta
    return json.dumps(event, separators=(",", ":")) + "\n"


def _legacy(capabilities: dict[str, Any], **meta: str) -> list[str]:
    params = {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {}}
    result = {**SERVER, "protocolVersion": "2025-11-25"}
    return [
        _line("c2s", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}, **meta),
        _line("s2c", {"jsonrpc": "2.0", "id": 1, "result": result}, **meta),
    ]


def _probes() -> list[str]:
    """The recorder's probes of a legacy server, one per known client's capability set:
    each one's handshake and tool list."""
    lines = []
    for chosen in capability_sets({}):
        name = f"legacy:{chosen.name}"
        lines += _legacy(chosen.capabilities, probe=name)
        listing = {"jsonrpc": "2.0", "id": "p2", "method": "tools/list", "params": {}}
        lines.append(_line("c2s", listing, probe=name))
        tools = {"jsonrpc": "2.0", "id": "p2", "result": {"tools": []}}
        lines.append(_line("s2c", tools, probe=name))
    return lines


def _modern() -> list[str]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    ask = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
    result = {**SERVER, "supportedVersions": ["2026-07-28"]}
    return [_line("c2s", ask), _line("s2c", {"jsonrpc": "2.0", "id": 1, "result": result})]


def _tape(tmp_path: Path, lines: list[str], era: str = "legacy", name: str = "t.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({**HEADER, "era": era}) + "\n" + "".join(lines), "utf-8")
    return path


def _banner(
    capsys: pytest.CaptureFixture[str], tape: Path, *options: str
) -> tuple[ReplayPool | OpeningPool, list[str]]:
    """The pool a replay of ``tape`` serves from, and the lines its banner printed."""
    command = ReplayCommand.from_args(parse(["replay", str(tape), *options]))
    pool, _ = opened(command)
    return pool, capsys.readouterr().err.splitlines()


def test_a_plain_recording_says_which_clients_would_be_answered_without_their_capabilities(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tape = _tape(tmp_path, _legacy({}))
    _, lines = _banner(capsys, tape)
    assert lines[0] == (
        f"cassette: replaying {tape}: serves any MCP client; Claude Code would be answered "
        "from a session without its elicitation and roots; Gemini CLI and the MCP "
        "Inspector from one without their roots; 4 other known clients from a session "
        "recorded with other capabilities" + FOR_DETAILS  # the SDKs' profiles, counted
    )
    assert lines[1] == "client configuration:"  # nothing else before it: no details


def test_a_probed_recording_has_nothing_to_warn_of(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tape = _tape(tmp_path, [*_legacy({}), *_probes()])
    _, lines = _banner(capsys, tape)
    assert lines[0] == (
        f"cassette: replaying {tape}: serves any MCP client; nothing to warn of: Claude "
        "Code, Gemini CLI, the MCP Inspector and 4 other known clients get the listings the "
        "live server gave them" + FOR_DETAILS
    )


def test_a_variant_answers_its_client_and_the_others_keep_their_caveat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    variant = _legacy({"roots": {}, "elicitation": {}}, variant="claude-code")
    tape = _tape(tmp_path, [*_legacy({}), *variant])
    _, lines = _banner(capsys, tape)
    assert lines[0] == (
        f"cassette: replaying {tape}: serves any MCP client; Gemini CLI and the MCP "
        "Inspector would be answered from a session without their roots; 4 other known "
        "clients from a session recorded with other capabilities" + FOR_DETAILS
    )


def test_a_client_declaring_less_than_the_recording_is_told_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ask = {"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}
    told = {"jsonrpc": "2.0", "id": "s1", "result": {"roots": []}}
    tape = _tape(tmp_path, [*_legacy({"roots": {}}), _line("s2c", ask), _line("c2s", told)])
    _, lines = _banner(capsys, tape)
    assert lines[0] == (
        f"cassette: replaying {tape}: serves any MCP client; the SDKs' default clients would "
        "be answered from a session with roots, which they do not declare; 1 other known "
        "client from a session recorded with other capabilities" + FOR_DETAILS  # the AI SDK
    )


def test_a_modern_only_recording_names_the_clients_it_refuses_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tape = _tape(tmp_path, _modern(), era="modern")
    _, lines = _banner(capsys, tape)
    assert lines[0].startswith(
        f"cassette: replaying {tape}: Gemini CLI, the MCP Inspector and 2 other known clients "
        "would be refused: the recording speaks only MCP 2026-07-28 (cassette variant TAPE "
        "--as legacy records a session for them); Claude Code would be answered from a "
        "session without its "
    )


def test_verbose_gives_the_details_of_the_whole_cassette(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tape = _tape(tmp_path, [*_legacy({}), *_probes()])
    _, lines = _banner(capsys, tape, "-v")
    assert not lines[0].endswith(FOR_DETAILS)
    assert lines[1] == (
        f"cassette:   {tape}: stdio recording, legacy era, 2025-11-25; 1 requests; strategy "
        "default; serving on stdio; serves legacy clients, and dual-era ones (they fall back "
        "to initialize)"
    )
    assert lines[2] == (
        "cassette:   session main: serves legacy 2024-10-07 to 2025-11-25; recorded with no "
        "capabilities; fits bare; listings as live (probed) for inspector (+roots), "
        "claude-code (+elicitation +roots), gemini-cli (+roots), sdk-handlers (+elicitation "
        "+roots +sampling), py-sdk1 (+elicitation +roots +sampling), ts-sdk1 (+elicitation "
        "+roots +sampling), ai-sdk (+elicitation)"
    )
    assert lines[3].startswith("cassette:   probed surface (the recorder's own sessions")
    assert lines[4] == "client configuration:"


def _pasted(lines: list[str]) -> tuple[dict[str, Any], list[str], list[str]]:
    """The printed configuration block and the two one-command lines, as argv."""
    text = "\n".join(lines)
    block = text.split("client configuration:\n", 1)[1]
    config, end = json.JSONDecoder().raw_decode(block)
    rest = block[end:].splitlines()
    assert rest[1] == "or add it with one command:"
    return config, shlex.split(rest[2]), shlex.split(rest[3])


@pytest.mark.skipif(sys.platform == "win32", reason="the lines are quoted for cmd there")
def test_the_add_commands_register_what_the_configuration_block_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tape = _tape(tmp_path, _legacy({}), name="my tape.v2.jsonl")  # a space to quote
    _, lines = _banner(capsys, tape, "--strategy", "loose", "--allow-repeats")
    config, claude, gemini = _pasted(lines)
    ((name, server),) = config["mcpServers"].items()
    assert name == "my-tape-v2"
    argv = [server["command"], *server["args"]]
    assert argv == [
        sys.executable,
        *("-m", "cassette", "replay", str(tape.resolve())),
        *("--strategy", "loose", "--allow-repeats"),
    ]
    assert claude == ["claude", "mcp", "add", name, "--", *argv]
    assert gemini == ["gemini", "mcp", "add", name, *argv]


def test_a_network_front_prints_no_add_commands_at_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tape = _tape(tmp_path, _legacy({}))
    _, lines = _banner(capsys, tape, "--front", "http")
    assert len(lines) == 1  # the URL's configuration comes once the front listens
    assert lines[0].startswith(f"cassette: replaying {tape}: serves any MCP client")


@pytest.fixture
def long_probed(tmp_path: Path) -> Path:
    """A cassette long enough to be served from its opening, its probes at the end."""
    tape = write_long(tmp_path / "long.jsonl")
    with tape.open("a", encoding="utf-8") as file:
        file.writelines(_probes())
    return tape


def test_the_banner_of_a_long_cassette_reads_only_its_opening_and_probes(
    long_probed: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def whole(*_args: object, **_kwargs: object) -> Cassette:
        raise AssertionError("the banner loaded the whole cassette")

    monkeypatch.setattr(Cassette, "load", whole)
    pool, lines = _banner(capsys, long_probed)
    assert isinstance(pool, OpeningPool)
    assert not pool.loaded
    assert lines[0] == (
        f"cassette: replaying {long_probed}: serves any MCP client; nothing to warn of: "
        "Claude Code, Gemini CLI, the MCP Inspector and 4 other known clients get the "
        "listings the live server gave them" + FOR_DETAILS
    )


def test_verbose_and_a_report_load_the_whole_cassette_first(
    long_probed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pool, lines = _banner(capsys, long_probed, "-v")
    assert isinstance(pool, ReplayPool)
    assert "; 2501 requests; " in lines[1]  # initialize and the 2,500 calls, no probe's
    report = str(tmp_path / "run.jsonl")
    pool, _ = _banner(capsys, long_probed, "--report", report)
    assert isinstance(pool, ReplayPool)


def test_quiet_and_verbose_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    from cassette.errors import UsageError

    with pytest.raises(UsageError, match="-q prints no banner and -v a longer one"):
        ReplayCommand.from_args(parse(["replay", "t.jsonl", "-q", "-v"]))


def test_a_server_reached_by_url_gets_no_add_commands() -> None:
    from cassette.cli.configs import add_commands

    assert add_commands({"mcpServers": {"t": {"url": "http://127.0.0.1:1/mcp"}}}) == []
    assert add_commands({"mcpServers": {}}) == []
