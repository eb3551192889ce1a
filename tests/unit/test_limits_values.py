"""Limits as a value: built once, passed down, carried by the run's context, never a
setting of the whole process."""

from __future__ import annotations

import contextvars
import json
import threading
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from cassette.core.wire import limits as limits_module
from cassette.core.wire.jsonrpc import classify
from cassette.core.wire.limits import (
    DEFAULT_LIMITS,
    DEFAULT_MAX_BYTES,
    LINE_OVERHEAD,
    Limits,
    current_limits,
    max_depth,
    set_max_depth,
    use_limits,
)
from cassette.errors import CassetteError, CassetteFormatError, UsageError
from cassette.store.files import read_definitions
from cassette.store.storage import Cassette
from tests.unit.test_hostile_input import HEADER


def deep(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


def test_a_value_checked_once_frozen_and_compared_by_value() -> None:
    assert Limits() == DEFAULT_LIMITS == Limits(DEFAULT_MAX_BYTES, 256)
    assert hash(Limits(10, 3)) == hash(Limits(10, 3))
    assert Limits(10, 3).line_limit == 10 + LINE_OVERHEAD
    assert Limits(10, 3).definitions_limit == DEFAULT_MAX_BYTES  # never below the default
    assert repr(Limits(10, 3)) == "Limits(max_message_bytes=10, max_depth=3)"
    with pytest.raises(AttributeError):
        Limits().max_depth = 3  # type: ignore[misc]
    with pytest.raises(UsageError, match="size limit must be a whole number"):
        Limits(0)
    with pytest.raises(UsageError, match="nesting limit must be a whole number"):
        Limits(max_depth=True)


def test_a_cassette_read_with_its_own_limits_leaves_the_runs_alone() -> None:
    line = json.dumps({"kind": "stderr", "t": 0, "text": "x" * LINE_OVERHEAD}) + "\n"
    inner = '{"jsonrpc":"2.0","id":1,"method":"x","params":{"p":' + deep(5) + "}}"
    message = '{"kind":"message","t":0,"dir":"c2s","message":' + inner + "}\n"
    with pytest.raises(CassetteFormatError, match="nested deeper than the limit of 3"):
        Cassette.loads(HEADER + message.encode(), "d.jsonl", limits=Limits(max_depth=3))
    assert len(Cassette.loads(HEADER + message.encode(), "d.jsonl").events) == 1
    with pytest.raises(CassetteFormatError, match="line longer than"):
        Cassette.loads(HEADER + line.encode(), "l.jsonl", limits=Limits(1))
    assert len(Cassette.loads(HEADER + line.encode(), "l.jsonl").events) == 1
    assert current_limits() == DEFAULT_LIMITS


def test_a_definitions_file_read_with_its_own_limits(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_bytes(b"x" * (DEFAULT_MAX_BYTES + 1))
    with pytest.raises(CassetteError, match="larger than"):
        read_definitions(path, "manifest", Limits(1))
    assert read_definitions(path, "manifest", Limits(DEFAULT_MAX_BYTES + 1)).startswith("x")


def test_the_runs_limits_reach_its_tasks_and_threads_but_not_another_run() -> None:
    seen: dict[str, object] = {}

    def run() -> None:
        use_limits(Limits(max_depth=3))

        async def main() -> None:
            async def task() -> None:
                seen["task"] = classify(deep(4)).problem

            async with anyio.create_task_group() as group:
                group.start_soon(task)
            seen["thread"] = await anyio.to_thread.run_sync(max_depth)

        anyio.run(main)

    contextvars.copy_context().run(run)
    assert seen == {"task": "JSON nested deeper than 3 levels", "thread": 3}
    assert max_depth() == 256  # the caller's run kept its own
    other: list[int] = []
    thread = threading.Thread(target=lambda: other.append(max_depth()))
    thread.start()
    thread.join()
    assert other == [256]


def test_set_max_depth_changes_the_run_and_its_token_puts_it_back() -> None:
    token = use_limits(current_limits())
    try:
        set_max_depth(3)
        assert current_limits() == Limits(DEFAULT_MAX_BYTES, 3)
    finally:
        limits_module._CURRENT.reset(token)
    assert current_limits() == DEFAULT_LIMITS


def test_the_module_holds_no_mutable_state() -> None:
    mutable = [
        name
        for name, value in vars(limits_module).items()
        if isinstance(value, dict | list | set) and not name.startswith("__")
    ]
    assert mutable == []
