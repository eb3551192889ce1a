"""``cassette record --upstream URL --mode new_episodes``: the official Python SDK client
against the pinned reference server over streamable HTTP, with what only the live leg can
carry: a sampling request on the forwarded call's stream (the client's answer goes back
to the server and into the cassette) and progress notifications. The appended exchanges
then replay with the server gone, callbacks included."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette
from tests.e2e.test_http_sdk import URL, start_everything_http
from tests.e2e.test_server_initiated import Callbacks
from tests.helpers.support import OFFLINE_ENV, PY, Background, dump, run

pytestmark = pytest.mark.e2e


def front(tape: Path, upstream: str, mode: str, report: Path) -> tuple[Background, str]:
    argv = [PY, "-m", "cassette", "record", "-o", str(tape), "--upstream", upstream]
    argv += ["--mode", mode, "--report", str(report), "--port", "0"]
    server = Background(argv, env=OFFLINE_ENV if mode == "none" else None)
    return server, server.wait_for(r"point your client at " + URL).group(1)


async def session(url: str, *, grown: bool) -> dict[str, Any]:
    """echo (recorded first); then a sampling round trip and a call reporting progress."""
    from mcp import Client

    calls = Callbacks()
    async with Client(url, sampling_callback=calls.sampling) as client:
        out: dict[str, Any] = {"echo": dump(await client.call_tool("echo", {"message": "hi"}))}
        if grown:
            sampled = client.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": 9})
            out["sampling"] = dump(await sampled)
            long = client.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.2, "steps": 2},
                progress_callback=calls.progress,
            )
            out["long"] = dump(await long)
    out["seen"] = calls.seen
    return out


def test_new_episodes_forwards_server_requests_and_their_answers(tmp_path: Path) -> None:
    tape, report = tmp_path / "t.jsonl", tmp_path / "report.jsonl"
    server, upstream = start_everything_http()
    with server:
        recording, url = front(tape, upstream, "once", report)
        with recording:
            run(lambda: session(url, grown=False))
            assert recording.stop(signal.SIGTERM) == 0, recording.output()
        recorded = tape.read_text()

        extending, url = front(tape, upstream, "new_episodes", report)
        with extending:
            live = run(lambda: session(url, grown=True))
            assert extending.stop(signal.SIGTERM) == 0, extending.output()
    assert "Echo: hi" in json.dumps(live["echo"])
    assert "a sampled answer" in json.dumps(live["sampling"])
    assert len(live["seen"]["sampling"]) == 1
    assert [value for value, _ in live["seen"]["progress"]] == [1.0, 2.0]
    assert "appended a new episode to" in extending.output()
    assert "warning" not in extending.output()

    facts = [json.loads(line) for line in report.read_text().splitlines()]
    actions = [f["action"] for f in facts if f["event"] == "session"]
    assert actions == ["record", "extend"]
    assert [f["method"] for f in facts if f["event"] == "episode"] == ["tools/call"] * 2

    # appended after the recording: the sampling request and the client's answer belong
    # to the call's exchange (the answer on its own POST, in the same client session)
    text = tape.read_text()
    assert text.startswith(recorded)
    added = [json.loads(line) for line in text[len(recorded) :].splitlines()]
    methods = [(e["dir"], e["message"].get("method")) for e in added if e["kind"] == "message"]
    assert ("s2c", "sampling/createMessage") in methods
    sampling = next(
        e for e in added if e.get("message", {}).get("method") == "sampling/createMessage"
    )
    answer = next(
        e
        for e in added
        if e["dir"] == "c2s" and e["message"].get("id") == sampling["message"]["id"]
    )
    assert answer["message"]["result"]["content"]["text"] == "a sampled answer"
    assert answer["meta"]["session"] == sampling["meta"]["session"]
    assert answer["meta"]["stream"] != sampling["meta"]["stream"]
    assert not Cassette.load(tape).warnings

    # the server gone, mode none: everything answers from the cassette, callbacks included
    replaying, url = front(tape, upstream, "none", report)
    with replaying:
        replayed = run(lambda: session(url, grown=True))
        assert replaying.stop(signal.SIGTERM) == 0, replaying.output()
    assert replayed == live

    # new_episodes with the server gone: what the cassette holds still replays, and a call
    # it lacks is a miss (a one-line reason, exit 1), nothing appended
    grown = tape.read_bytes()
    extending, url = front(tape, upstream, "new_episodes", report)
    with extending:
        replayed_again = run(lambda: session(url, grown=True))
        error = run(lambda: missing_call(url))
        assert extending.stop(signal.SIGTERM) == 1, extending.output()
    assert replayed_again == live
    assert "get-sum" in error
    assert "the server could not answer" in extending.output()
    assert "Traceback" not in extending.output()
    assert tape.read_bytes() == grown


async def missing_call(url: str) -> str:
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    async with Client(url) as client:
        try:
            await client.call_tool("get-sum", {"a": 1, "b": 1})
        except MCPError as exc:
            return str(exc)
    return "answered"
