"""Fault plans as values: selection, counting, seeded chance, the dry run, plan files, and the
overlay on a memory stream (every fault kind as bytes on the wire)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from cassette.core.replay.faults import FaultPlan, FaultRule, preview
from cassette.errors import CassetteNotFoundError, FaultExit, UsageError
from cassette.store.faults import load_fault_plan


def call(name: str, n: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name}}


def test_a_rule_selects_by_method_and_name() -> None:
    rule = FaultRule(kind="timeout", method="tools/call", name="search")
    assert rule.selects(call("search"))
    assert not rule.selects(call("fetch"))
    read = {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "search"}}
    assert not rule.selects(read)
    assert FaultRule(kind="timeout", name="file:///a").selects(
        {"id": 1, "method": "resources/read", "params": {"uri": "file:///a"}}
    )


def test_nth_faults_exactly_the_nth_matching_call() -> None:
    injector = FaultPlan.of([{"kind": "error", "name": "search", "nth": 2}]).injector()
    decided = [injector.decide(call(name)) for name in ("search", "fetch", "search", "search")]
    assert [d is not None for d in decided] == [False, False, True, False]


def test_the_first_rule_that_fires_wins_and_every_rule_counts() -> None:
    plan = FaultPlan.of(
        [{"kind": "timeout", "name": "a", "nth": 1}, {"kind": "error", "method": "tools/call"}]
    )
    injector = plan.injector()
    kinds = [getattr(injector.decide(call(n)), "kind", None) for n in ("a", "a", "b")]
    assert kinds == ["timeout", "error", "error"]


def test_a_probability_is_the_same_on_every_run_for_a_seed() -> None:
    plan = FaultPlan.of([{"kind": "timeout", "probability": 0.5}], seed=42)
    runs = []
    for _ in range(2):
        injector = plan.injector()  # a fresh session: the same draws again
        runs.append([injector.decide(call("x", i)) is not None for i in range(40)])
    assert runs[0] == runs[1]
    assert 0 < sum(runs[0]) < 40  # some calls, not all
    other = FaultPlan.of([{"kind": "timeout", "probability": 0.5}], seed=7).injector()
    assert [other.decide(call("x", i)) is not None for i in range(40)] != runs[0]


def test_preview_lists_the_lines_a_plan_would_hit() -> None:
    plan = FaultPlan.of([{"kind": "error", "name": "b"}, {"kind": "timeout", "nth": 3}])
    requests = [(2, call("a")), (4, call("b")), (6, call("a")), (8, call("c"))]
    assert preview(plan, requests) == [(4, 0), (6, 1)]


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ({"kind": "hang"}, "unknown fault kind 'hang'"),
        ({"kind": "timeout", "nth": 0}, "nth counts matching calls from 1"),
        ({"kind": "timeout", "probability": 2}, "probability must be between 0 and 1"),
        ({"kind": "delay"}, "a delay needs seconds > 0"),
        ({"kind": "exit", "exit-code": 300}, "exit-code must be 0 to 255"),
        ({"kind": "error", "code": "x"}, "code must be a int, not 'x'"),
        ({"kind": "error", "colour": 1}, "unknown key(s) colour"),
        ({"method": "tools/call"}, "a fault needs a kind"),
    ],
)
def test_a_bad_rule_says_what_is_wrong(rule: dict[str, Any], problem: str) -> None:
    with pytest.raises(UsageError, match=r"^fault 1: ") as raised:
        FaultPlan.of([rule])
    assert problem in str(raised.value)


def test_a_plan_file_error_names_the_line_of_its_rule(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text('[[fault]]\nkind = "timeout"\n\n# two\n[[fault]]\nkind = "error"\nnth = -1\n')
    with pytest.raises(UsageError) as raised:
        load_fault_plan(plan)
    assert str(raised.value).startswith(f"{plan}:5: fault 2: nth counts matching calls from 1")


def test_a_plan_that_is_not_toml_names_the_line(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text('[[fault]]\nkind = "timeout"\nnth = \n')
    with pytest.raises(UsageError, match=rf"^{plan}:3: not TOML: "):
        load_fault_plan(plan)


def test_a_json_plan_reads_like_the_toml_one(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    rules = [{"kind": "error", "code": -1, "message": "no", "data": {"a": 1}}]
    plan.write_text(json.dumps({"seed": 3, "fault": rules}))
    loaded = load_fault_plan(plan)
    assert loaded == FaultPlan((FaultRule(kind="error", code=-1, message="no", data={"a": 1}),), 3)
    with pytest.raises(CassetteNotFoundError, match="no such fault plan"):
        load_fault_plan(tmp_path / "missing.toml")


# -- the overlay, on the memory transport ----------------------------------------------------


def _recording() -> Any:
    from cassette.core.wire.model import Header, MessageEvent, RecorderInfo
    from tests.unit.test_replayer import Tape

    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    answer = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}}
    echo = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}}
    result = {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}
    events = [
        MessageEvent(0.0, "c2s", init, seq=1),
        MessageEvent(0.0, "s2c", answer, seq=2),
        MessageEvent(0.0, "c2s", echo, seq=3),
        MessageEvent(0.0, "s2c", result, seq=4),
    ]
    header = Header(transport="stdio", recorder=RecorderInfo("t", "0"), started_at="x")
    return Tape(header, tuple(events))


async def _exchange(plan: FaultPlan, sends: list[dict[str, Any]]) -> tuple[list[bytes], Any]:
    """Serve the recording under ``plan`` over a memory stream; what came back, and how
    the serving ended (its results, or the ``FaultExit`` it raised)."""
    from cassette.core.replay.replayer import Replayer
    from cassette.runtime.conversation import DeliveryPolicy
    from cassette.runtime.serve import replay
    from cassette.transport import Frame
    from cassette.transports.memory import memory_pair

    client, server = memory_pair()
    received: list[bytes] = []
    ended: list[Any] = []

    async def serve() -> None:
        try:
            ended.append(await replay(server, Replayer(_recording()), DeliveryPolicy(faults=plan)))
        except FaultExit as exc:
            ended.append(exc)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            for message in sends:
                await client.send(Frame(json.dumps(message).encode() + b"\n"))
            await client.send_eof()
            while True:
                try:
                    received.append((await client.receive()).data)
                except anyio.EndOfStream:
                    break
    return received, ended[0]


def _echo_plan(kind: str, **extra: Any) -> FaultPlan:
    return FaultPlan.of([{"kind": kind, "method": "tools/call", **extra}])


def test_an_error_fault_is_the_rule_s_error_for_that_request() -> None:
    plan = _echo_plan("error", code=-32050, message="quota", data={"retryAfter": 7})
    out, _ = anyio.run(_exchange, plan, [call("echo", 9)])
    assert json.loads(out[0]) == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {"code": -32050, "message": "quota", "data": {"retryAfter": 7}},
    }


def test_a_malformed_fault_writes_a_line_that_is_not_json() -> None:
    out, _ = anyio.run(_exchange, _echo_plan("malformed"), [call("echo", 9)])
    assert out == [b'{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":\n']
    out, _ = anyio.run(_exchange, _echo_plan("malformed", text="<html>"), [call("echo", 9)])
    assert out == [b"<html>\n"]


def test_a_disconnect_closes_the_stream_and_an_exit_also_raises_its_code() -> None:
    out, ended = anyio.run(_exchange, _echo_plan("disconnect"), [call("echo"), call("echo", 2)])
    assert out == []
    assert not isinstance(ended, FaultExit)
    out, ended = anyio.run(_exchange, _echo_plan("exit", **{"exit-code": 4}), [call("echo")])
    assert out == []
    assert isinstance(ended, FaultExit)
    assert ended.code == 4


def test_a_timed_out_request_leaves_its_recording_for_the_retry() -> None:
    plan = FaultPlan.of([{"kind": "timeout", "nth": 1}])
    out, _ = anyio.run(_exchange, plan, [call("echo", 1), call("echo", 2)])
    assert [json.loads(line) for line in out] == [
        {"jsonrpc": "2.0", "id": 2, "result": {"content": []}}
    ]
