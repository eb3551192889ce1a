"""``replay_pool``, the one place a cassette becomes a replay, with plain values and real
files: the strategy (given, else recorded, else ``default``) with ignored params and
repeats, what a miss is shown through, the first server start, the opening, and the
warnings of a cassette it loads. And the promise it keeps: nothing else in the package
makes a ``ReplayPool``."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from cassette import (
    Cassette,
    DeliveryPolicy,
    Header,
    ReplayOptions,
    ReplayPool,
    Strategy,
    replay_pool,
)
from cassette.core.redaction.redactor import Redactor
from cassette.core.replay.opening import OpeningPool
from cassette.core.wire.model import RecorderInfo
from cassette.transports.memory import MemoryTransport
from tests.helpers.opening_tapes import write_long
from tests.helpers.support import ROOT
from tests.unit.test_starts import session

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}


def _tape(target: dict[str, Any] | None = None, events: list[Any] | None = None) -> Cassette:
    header = Header(
        "stdio", RecorderInfo("t", "0"), "2026-01-01T00:00:00Z", target=target or {}, era="legacy"
    )
    return Cassette(header, tuple(events if events is not None else session("home", None)))


def test_the_strategy_given_else_the_recorded_one_else_default() -> None:
    strict = _tape({"strategy": "strict"})
    assert replay_pool(strict).strategy.name == "strict"
    assert replay_pool(strict, ReplayOptions(strategy="loose")).strategy.name == "loose"
    assert replay_pool(_tape()).strategy.name == "default"
    assert replay_pool(_tape({"strategy": 3})).strategy.name == "default"  # not a name


def test_ignored_params_and_repeats_are_laid_on_the_recorded_strategy() -> None:
    options = ReplayOptions(ignore=("/params/arguments/now",), allow_repeats=True)
    chosen = replay_pool(_tape({"strategy": "strict"}), options).strategy
    assert chosen == Strategy(
        "strict",
        repeat_listings=False,
        fallback_to_method=False,
        ignore=("/params/arguments/now",),
        allow_repeats=True,
    )


def _miss_text(pool: ReplayPool | OpeningPool) -> str:
    """The error a client gets for a ``visit`` the recording does not hold."""
    responder = pool.new()
    responder.receive({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    call = {"name": "visit", "arguments": {"where": "zebra-4242"}}  # recorded: {}
    reply = responder.receive({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    return str(reply.messages[0]["error"]["message"])


def test_a_miss_is_shown_through_the_project_policy_unless_told_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cassette.redact]\npatterns = ["zebra-[0-9]+"]\n', encoding="utf-8"
    )
    assert "zebra-4242" not in _miss_text(replay_pool(_tape()))
    told = ReplayOptions(redactor=Redactor(patterns=("visit",)))
    assert "zebra-4242" in _miss_text(replay_pool(_tape(), told))


def test_on_stdio_a_cassette_of_several_starts_serves_the_runs_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setenv("CASSETTE_CLIENT_RUN", "run-1")
    path = tmp_path / "starts.jsonl"
    _tape(events=[*session("one", None), *session("two", 2)]).dump(path)
    assert [replay_pool(path).first_start for _ in range(3)] == [1, 2, 1]
    loaded = Cassette.load(path)
    assert replay_pool(loaded).first_start == 2  # the same count, a loaded cassette too
    for front in ("streamable-http", MemoryTransport()):  # a session of its own each
        assert replay_pool(path, ReplayOptions(transport=front)).first_start == 1
    unsaved = _tape(events=[*session("one", None), *session("two", 2)])
    assert replay_pool(unsaved).first_start == 1  # no file: no run to count in


def test_a_long_cassette_on_stdio_answers_from_its_opening(tmp_path: Path) -> None:
    path = write_long(tmp_path / "long.jsonl")
    early = replay_pool(path)
    assert isinstance(early, OpeningPool)
    assert not early.loaded
    assert early.strategy.name == "default"
    assert isinstance(replay_pool(path, ReplayOptions(opening=False)), ReplayPool)
    assert isinstance(replay_pool(path, ReplayOptions(transport="sse")), ReplayPool)
    assert isinstance(replay_pool(Cassette.load(path)), ReplayPool)  # nothing to read


def test_a_cassette_read_from_a_path_tells_its_warnings(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    _tape().dump(path)
    with path.open("a", encoding="utf-8") as file:
        file.write('{"t": 0.2, "kind": "hologram"}\n')
    told: list[str] = []
    policy = DeliveryPolicy(on_warning=told.append)
    replay_pool(path, ReplayOptions(policy=policy, transport="memory"))
    assert len(told) == 1
    assert "skipped unknown event kind 'hologram'" in told[0]


def test_only_the_resolver_makes_a_replay_sessions() -> None:
    """One construction site: every door into a replay decides through ``replay_pool``."""
    makers = []
    for path in sorted((ROOT / "cassette").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", None))
                if name == "ReplayPool":
                    makers.append(path.relative_to(ROOT).as_posix())
    assert makers == ["cassette/runtime/replay_pool.py"]
