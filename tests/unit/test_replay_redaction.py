"""A replay of a redacted cassette matches a live request as it came, and shows none of
its secrets: not in a miss, a miss's summary, nor a warning.

The replay redacts a live request only where something of it may be shown (a request the
recording holds is never walked); redacted positions of the recording are wildcards, so a
live secret there still matches. Fake credentials only."""

from __future__ import annotations

import json
from typing import Any

import attrs

from cassette.core.replay.replayer import Replayer
from tests.unit.test_replayer import req, res, tape

TOKEN = "ghp_" + "Zz09" * 10  # the shape of a GitHub token, not one
PLACEHOLDER = "[REDACTED:github-token:3f9a0c1d2e4b]"


def redacted_tape(*messages: tuple[str, dict[str, Any]]) -> Any:
    recording = tape(*messages)
    header = attrs.evolve(recording.header, redaction={"placeholders": "random"})
    return attrs.evolve(recording, header=header)


def call(msg_id: int, **arguments: Any) -> dict[str, Any]:
    return req(msg_id, "tools/call", {"name": "login", "arguments": arguments})


def frame(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


def test_a_live_secret_where_the_recording_has_a_placeholder_matches() -> None:
    replayer = Replayer(
        redacted_tape(("c2s", call(1, token=PLACEHOLDER)), ("s2c", res(1, {"ok": True})))
    )
    reply = replayer.receive_frame(frame(call(7, token=TOKEN)))
    assert reply.miss is None
    assert reply.messages == (res(7, {"ok": True}),)


def test_a_miss_shows_the_request_redacted() -> None:
    replayer = Replayer(redacted_tape(("c2s", call(1, user="ada")), ("s2c", res(1, {"ok": True}))))
    reply = replayer.receive_frame(frame(call(7, user="bob", token=TOKEN)))
    assert reply.miss is not None
    shown = [json.dumps(reply.messages), replayer.describe(reply.miss), replayer.summary()]
    shown.append(json.dumps(reply.miss.as_data()))
    assert all(TOKEN not in text for text in shown)
    assert any("[REDACTED:" in text for text in shown)  # the diff names what differs


def test_a_warning_about_input_responses_shows_them_redacted() -> None:
    asked = {"name": "login", "arguments": {}, "inputResponses": {"a": {"token": "x"}}}
    replayer = Replayer(
        redacted_tape(("c2s", req(1, "tools/call", asked)), ("s2c", res(1, {"ok": True})))
    )
    live = {**asked, "inputResponses": {"a": {"token": TOKEN}}}
    reply = replayer.receive_frame(frame(req(7, "tools/call", live)))
    assert reply.messages == (res(7, {"ok": True}),)
    assert reply.warnings
    assert all(TOKEN not in warning for warning in reply.warnings)


def test_without_redaction_in_the_header_nothing_is_redacted() -> None:
    replayer = Replayer(tape(("c2s", call(1, user="ada")), ("s2c", res(1, {"ok": True}))))
    reply = replayer.receive_frame(frame(call(7, user=TOKEN)))
    assert reply.miss is not None
    assert TOKEN in replayer.describe(reply.miss) or TOKEN in json.dumps(reply.miss.as_data())
