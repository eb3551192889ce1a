"""A ``--before-record`` hook that raises, or returns what is not a message: one line
naming the hook, exit 3, and a cassette that still reads, holding every frame before."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassette.store.storage import Cassette
from tests.support import PY, RAW_SERVER, LineClient, record_command

HOOKS = """
def raises(message, direction):
    if message.get("method") == "tools/call":
        raise ValueError("cannot scrub this")
    return message


def not_json(message, direction):
    if message.get("method") == "tools/call":
        message["params"]["when"] = object()
    return message


def not_a_message(message, direction):
    if message.get("method") == "tools/call":
        return {"hello": 1}
    return message


def drops_it(message, direction):
    return None if message.get("method") == "tools/call" else message
"""


@pytest.mark.parametrize(
    ("hook", "said"),
    [
        ("raises", "raised ValueError: cannot scrub this"),
        (
            "not_json",
            "returned a message that is not JSON (Object of type object is not JSON serializable)",
        ),
        ("not_a_message", "returned dict that is not a JSON-RPC message (nor None)"),
    ],
)
def test_a_failing_hook_is_one_line_naming_it(tmp_path: Path, hook: str, said: str) -> None:
    (tmp_path / "scrub.py").write_text(HOOKS)
    tape = tmp_path / "t.jsonl"
    spec = f"{tmp_path / 'scrub.py'}:{hook}"
    client = LineClient(record_command(tape, [PY, str(RAW_SERVER)], "--before-record", spec))
    client.initialize()
    with pytest.raises(EOFError):
        client.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    code, err = client.finish()
    assert code == 3, err
    errors = [line for line in err.splitlines() if line.startswith("cassette: error:")]
    assert errors == [
        f"cassette: error: the before-record hook scrub.py:{hook} {said}; the recording "
        "stopped here, and every frame the client saw before is in the file"
    ]
    assert "Traceback" not in err
    methods = [m.get("method") for m in Cassette.load(tape).messages("c2s")]
    assert methods == ["initialize", "notifications/initialized"]


def test_a_hook_that_keeps_nothing_still_records_the_rest(tmp_path: Path) -> None:
    (tmp_path / "scrub.py").write_text(HOOKS)
    tape = tmp_path / "t.jsonl"
    spec = f"{tmp_path / 'scrub.py'}:drops_it"
    client = LineClient(record_command(tape, [PY, str(RAW_SERVER)], "--before-record", spec))
    client.initialize()
    assert "result" in client.request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    code, err = client.finish()
    assert code == 0, err
    assert "tools/call" not in [m.get("method") for m in Cassette.load(tape).messages()]
