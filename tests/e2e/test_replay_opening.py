"""``cassette replay LONG`` answers ``initialize`` from the cassette's opening, before the
rest is loaded, with its banner (which reads no more) or without (``-q``), and a client
gets the same answers as from a replay that loads the whole cassette first (``-v``: its
details tell of the whole cassette, so it is loaded before anything is served)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.opening_tapes import CALLS, INITIALIZE, write_long
from tests.helpers.support import PY, LineClient

pytestmark = pytest.mark.e2e


def _argv(tape: Path, *extra: str) -> list[str]:
    return [PY, "-m", "cassette", "replay", str(tape), *extra]


def _session(argv: list[str]) -> tuple[list[dict[str, Any]], int, list[str]]:
    """A client's session, each answer awaited before the next request: the answers, the
    exit code, and the stderr lines about misses."""
    client = LineClient(argv)
    try:
        answers = [client.request("initialize", INITIALIZE)]
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for text in ("hello 0", f"hello {CALLS // 2}", f"hello {CALLS - 1}", "nope", "hello 0"):
            arguments = {"name": "echo", "arguments": {"message": text}}
            answers.append(client.request("tools/call", arguments))
        answers.append(client.request("initialize", INITIALIZE))
        answers.append(client.request("ping"))
        code, err = client.finish()
    finally:
        client.kill_group()
    return answers, code, [line for line in err.splitlines() if "miss" in line or "  - " in line]


@pytest.mark.parametrize("banner", [(), ("-q",)], ids=["banner", "quiet"])
def test_a_long_cassette_answers_as_the_whole_does(tmp_path: Path, banner: tuple[str]) -> None:
    tape = write_long(tmp_path / "long.jsonl")
    served = _session(_argv(tape, *banner))
    whole = _session(_argv(tape, "-v"))
    assert served == whole
    answers, code, misses = served
    assert answers[0]["result"]["serverInfo"]["name"] == "opening-test"
    assert answers[3]["result"]["content"][0]["text"].startswith(f"Echo: hello {CALLS - 1} ")
    assert answers[4]["error"]["code"] == -32099  # a miss names the closest of all
    assert code == 1
    assert misses


@pytest.mark.parametrize("banner", [(), ("-q",)], ids=["banner", "quiet"])
def test_a_fault_beyond_the_opening_is_reported_as_by_the_whole_load(
    tmp_path: Path, banner: tuple[str]
) -> None:
    """Proof that the handshake came from the opening, the banner printed or not: a broken
    line deep in the file is found only once the rest is loaded, after ``initialize`` was
    answered; the error and the exit code are the whole load's, as without the opening."""
    tape = write_long(tmp_path / "long.jsonl")
    lines = tape.read_bytes().split(b"\n")
    lines[4000] = b'{"kind":"message", broken'
    tape.write_bytes(b"\n".join(lines))
    served = LineClient(_argv(tape, *banner))
    try:
        answer = served.request("initialize", INITIALIZE)
        served.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        code, err = served.finish()
    finally:
        served.kill_group()
    assert answer["result"]["serverInfo"]["name"] == "opening-test"
    whole = LineClient(_argv(tape, "-v"))
    try:
        whole_code, whole_err = whole.finish()
    finally:
        whole.kill_group()
    error = f"{tape}:4001: not JSON"
    assert code == whole_code == 3
    assert error in err.strip().splitlines()[-1]
    assert error in whole_err.strip().splitlines()[-1]
