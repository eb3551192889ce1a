"""A SIGKILL at any point of a real recording leaves a readable cassette whose events are a
prefix of the session, with nothing invented."""

from __future__ import annotations

import json
import os
import random
import signal
from pathlib import Path

import pytest

from cassette import Cassette
from tests.helpers.support import PY, RAW_SERVER, LineClient, record_command, scaled

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("seed", range(8))
def test_sigkill_at_a_random_point_leaves_a_prefix(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    tape = tmp_path / "killed.jsonl"
    client = LineClient(record_command(tape, [PY, str(RAW_SERVER)]))
    sent: list[dict[str, object]] = []
    received: list[dict[str, object]] = []
    try:
        received.append(client.initialize())
        answered = rng.randint(0, 6)  # exchanges completed before the kill
        in_flight = rng.randint(0, 4)  # requests written but not waited for
        for n in range(answered):
            params = {"name": "echo", "arguments": {"text": f"answered {n}"}}
            sent.append(params)
            received.append(client.request("tools/call", params))
        for n in range(in_flight):
            params = {"name": "echo", "arguments": {"text": f"in flight {n}"}}
            sent.append(params)
            client.send(
                {"jsonrpc": "2.0", "id": 1000 + n, "method": "tools/call", "params": params}
            )
        os.kill(client.proc.pid, signal.SIGKILL)
        client.proc.wait(timeout=scaled(10))
    finally:
        client.kill_group()

    cassette = Cassette.load(tape)  # readable: no error
    assert cassette.header.era == "legacy"
    s2c = list(cassette.messages("s2c"))
    for reply in received:  # everything the client saw was on disk before it saw it
        assert reply in s2c
    calls = [m["params"] for m in cassette.messages("c2s") if m.get("method") == "tools/call"]
    assert calls == sent[: len(calls)]  # a prefix of what was sent, in order
    assert len(calls) >= answered
    texts = {json.dumps(m.get("result")) for m in s2c if m.get("id") not in (None, 1)}
    expected = {
        json.dumps({"content": [{"type": "text", "text": p["arguments"]["text"]}]}) for p in sent
    }  # type: ignore[index]
    assert texts <= expected  # nothing invented
