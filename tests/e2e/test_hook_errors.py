"""A ``--before-record`` hook that raises, or returns what is not JSON: one line naming
the hook, its documented exit code, and a cassette that still reads, holding every frame
before."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassette.store.storage import Cassette
from tests.helpers.support import PY, RAW_SERVER, LineClient, record_command

HOOKS = """
def raises(message, direction):
    if message.get("method") == "tools/call":
        raise ValueError("cannot scrub this")
    return message


def not_json(message, direction):
    if message.get("method") == "tools/call":
        message["params"]["when"] = object()
    return message


def drops_it(message, direction):
    return None if message.get("method") == "tools/call" else message
"""


@pytest.mark.parametrize(
    ("hook", "said"),
    [
        ("raises", "failed on a c2s message: ValueError: cannot scrub this"),
        ("not_json", "returned a message that is not JSON: Object of type object is not JSON"),
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
    assert code == 2, err  # the hook is the user's code: a usage error (docs/cli.md)
    errors = [line for line in err.splitlines() if line.startswith("cassette: error:")]
    assert len(errors) == 1, err
    assert errors[0].startswith(f"cassette: error: before_record hook scrub.py:{hook} {said}")
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
