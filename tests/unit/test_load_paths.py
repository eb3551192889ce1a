"""The cheap load path builds the same events as the converter, and refuses nothing new.

``codec._plain_message`` builds well-typed message events without cattrs; everything else
goes through the converter. These tests pin that both ways agree, value for value and
error for error. The last test holds the lean import path of a stdio replay (issue 9:
nothing it does not use). (Speed is measured in ``python -m benchmarks``, never asserted
here.)
"""

from __future__ import annotations

import gc
import json
from typing import Any

import pytest

from cassette.core.tape import codec
from cassette.core.wire._gc import paused_gc
from cassette.core.wire.model import MessageEvent
from cassette.errors import CassetteFormatError
from cassette.store.storage import Cassette
from tests.helpers.support import scaled

HEADER = {
    "kind": "header",
    "format": 1,
    "transport": "stdio",
    "recorder": {"name": "test", "version": "0"},
    "started_at": "2026-01-01T00:00:00Z",
}
MESSAGE = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def _tape(*events: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in (HEADER, *events))


def _load_both(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    fast = Cassette.loads(data, "tape.jsonl")
    with monkeypatch.context() as patch:
        patch.setattr(codec, "_plain_message", lambda _obj, _seq: None)
        slow = Cassette.loads(data, "tape.jsonl")
    return fast, slow


@pytest.mark.parametrize(
    "event",
    [
        {"kind": "message", "t": 0.5, "dir": "c2s", "message": MESSAGE},
        {"kind": "message", "t": 3, "dir": "s2c", "message": MESSAGE},
        {"kind": "message", "t": 1.0, "dir": "c2s", "message": MESSAGE, "meta": None},
        {"kind": "message", "t": 1.0, "dir": "c2s", "message": MESSAGE, "meta": {"a": 1}},
        {"kind": "message", "t": 1.0, "dir": "c2s", "message": MESSAGE, "extra": "ignored"},
    ],
)
def test_the_fast_path_builds_what_the_converter_builds(
    event: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow = _load_both(_tape(event, event), monkeypatch)
    assert fast.events == slow.events
    assert [e.seq for e in fast.events] == [e.seq for e in slow.events] == [1, 2]
    for built in fast.events:
        assert isinstance(built, MessageEvent)
        assert type(built.t) is float


@pytest.mark.parametrize(
    "changes",
    [{"t": True}, {"t": "1.5"}, {"dir": "sideways"}, {"message": [MESSAGE]}, {"meta": [1]}],
)
def test_what_the_fast_path_refuses_fails_exactly_as_before(
    changes: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    event = {"kind": "message", "t": 0.0, "dir": "c2s", "message": MESSAGE, **changes}
    errors = []
    for plain in (codec._plain_message, lambda _obj, _seq: None):
        with monkeypatch.context() as patch:
            patch.setattr(codec, "_plain_message", plain)
            with pytest.raises(CassetteFormatError) as info:
                Cassette.loads(_tape(event), "tape.jsonl")
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith("tape.jsonl:2: bad message event")


def test_paused_gc_restores_the_collector_as_it_found_it() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the caller had it off: it stays off
    finally:
        gc.enable()


def test_paused_gc_leaves_nothing_frozen_and_keeps_what_the_caller_froze() -> None:
    """What was loaded is promoted to the oldest generation, not frozen; a caller's own
    frozen objects stay frozen. Checked by identity in the collector's generations (a
    frozen object is in none of them), not by ``gc.get_freeze_count()``, which drops
    whenever a frozen object is freed, as other threads may do at any time."""

    def tracked(obj: object) -> bool:
        return any(o is obj for o in gc.get_objects())

    with paused_gc():
        loaded = [{"n": i} for i in range(1000)]
    assert any(o is loaded for o in gc.get_objects(generation=2))  # promoted, not frozen
    kept = {"caller": "froze this"}
    gc.freeze()
    try:
        assert not tracked(kept)
        with paused_gc():
            more = [{"n": i} for i in range(1000)]
        assert not tracked(kept)  # not unfrozen
        assert tracked(more)  # and nothing more frozen
    finally:
        gc.unfreeze()


def test_paused_gc_restores_it_on_an_error_too() -> None:
    with pytest.raises(CassetteFormatError), paused_gc():
        Cassette.loads(b"not json\n", "tape.jsonl")
    assert gc.isenabled()


# -- what a stdio replay imports -------------------------------------------------------------

#: Modules a stdio replay has no use for: HTTP libraries, entry-point metadata (the
#: registry reads entry_points.txt as text), the converter (well-formed cassettes are built
#: directly), the mode machinery (a plain replay has no mode to run), and the other
#: commands' modules (only the chosen command's parser is built), with the recorder (and
#: the recorder's core, which reading a cassette needs only as a type), and ``secrets``
#: (drawn from only when a placeholder is made, which a replay of clean requests never does),
#: and ``RecordOptions`` with the values of reaching a live server (``Target``, ``StderrLine``,
#: ``Exited``: ``cassette.transport`` exports them lazily), ``hashlib`` (only a cassette of
#: several server starts is digested), and the fault rules and
#: overlay (imported only when a fault plan is given), and the redactor with its rules (built
#: only for a miss or a warning), ``tomllib`` (a project's pyproject.toml that does not hold
#: ``[tool.cassette]`` is not parsed), ``tempfile`` (only where a file is written), the
#: pytest plugin's settings, and orjson (the ``fast`` extra reads only cassettes of
#: ``FAST_JSON_FROM`` bytes or more), and the structural diff (a miss's diagnosis, or a
#: client answer that may differ) with the URL checks (only for options that name a URL),
#: the redaction gate (a clean session has nothing to show) and the help's layout, and
#: ``shutil`` (argparse asks it for the terminal's width for every option it is given; our
#: formatter asks the operating system itself).
_NOT_ON_THE_STDIO_REPLAY_PATH = (
    "shutil",
    "orjson",
    "cassette.store.pytest_config",
    "cassette.core.redaction.redactor",
    "cassette.core.redaction.secret_rules",
    "tomllib",
    "tempfile",
    "cassette.core.replay.faults",
    "cassette.runtime.faults",
    "cassette.core.recording.recorder",
    "cassette._record_options",
    "cassette._upstream",
    "hashlib",
    "secrets",
    "cassette.cli.record",
    "cassette.cli.tools",
    "cassette.runtime.record",
    "httpx",
    "uvicorn",
    "starlette",
    "importlib.metadata",
    "cattrs",
    "cassette.modes.runner",
    "cassette.modes.extend",
    "cassette.transports.http.streamable_http",
    "cassette.transports.memory",
    "cassette.core.words.jsondiff",
    "cassette.core.wire.urls",
    "cassette.store.gate",
    "cassette.cli.layout",
)


#: Runs ``python -m cassette`` with ``os._exit`` (how a serving command ends) listing every
#: module in ``sys.modules`` on stderr first: unlike ``-X importtime``, this also sees
#: modules imported with ``importlib.import_module``.
_LIST_MODULES_AT_EXIT = """
import os, runpy, sys
leave = os._exit
def listing_exit(code):
    sys.stderr.write("".join(f"module: {name}\\n" for name in sys.modules))
    text = sys.modules.get("cassette.core.words.text")
    if text is not None:
        sys.stderr.write(f"text patterns compiled: {text._compiled.cache_info().currsize}\\n")
    rules = sys.modules.get("cassette.core.redaction.secret_rules")
    if rules is not None:
        sys.stderr.write(f"rules compiled: {rules._compiled.cache_info().currsize}\\n")
        sys.stderr.write(f"scout built: {rules._json_scout.cache_info().currsize}\\n")
        sys.stderr.write(f"probes built: {rules._json_probes.cache_info().currsize}\\n")
    sys.stderr.flush()
    leave(code)
os._exit = listing_exit
sys.argv = ["cassette", *sys.argv[1:]]
runpy.run_module("cassette", run_name="__main__", alter_sys=True)
"""


def test_a_stdio_replay_imports_nothing_it_does_not_use(tmp_path: Any) -> None:
    import subprocess

    from tests.helpers.support import PY, ROOT

    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}},
    }
    # a redacted cassette (a live request that missed would be shown redacted), replayed
    # in a project that depends on us and has no [tool.cassette]
    lines = (ROOT / "examples" / "everything.jsonl").read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["redaction"] = {"placeholders": "random"}
    tape = str(tmp_path / "everything.jsonl")
    (tmp_path / "everything.jsonl").write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "app"\ndependencies = ["cassette-mcp>=0.2"]\n'
        '[dependency-groups]\ntest = ["cassette-mcp[http]"]\n'
    )
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    result = subprocess.run(
        [PY, "-c", _LIST_MODULES_AT_EXIT, "replay", "-q", tape],
        input=f"{json.dumps(initialize)}\n{json.dumps(initialized)}\n".encode(),
        capture_output=True,
        timeout=scaled(60),
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert json.loads(result.stdout.splitlines()[0])["id"] == 1
    imported = {
        line.removeprefix("module: ")
        for line in result.stderr.decode().splitlines()
        if line.startswith("module: ")
    }
    # the listing is read right, and a serving command ended through os._exit
    assert {
        "cassette.runtime.serve",
        "cassette.cli.replay",
        "cassette.core.redaction.redacted",
    } <= imported
    assert not imported & set(_NOT_ON_THE_STDIO_REPLAY_PATH)
    # nothing that shows recorded text to a person was needed either
    assert "text patterns compiled: 0" in result.stderr.decode().splitlines()
