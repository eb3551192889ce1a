"""A legacy client's tool call answered from a 2026-07-28 recording that asked for input
or refused the call: the replay serves the recorded answer and announces, once per tool in
a warning and in every error it answers for it, that the tool's legacy behaviour was not
recorded (cassette.core.eras.legacy_calls). Plain values in and out."""

from __future__ import annotations

from typing import Any

from cassette.core.eras.legacy_calls import ANNOUNCED, announcement
from cassette.core.replay.replayer import Replayer
from cassette.core.wire.jsonrpc import REPLAY_MISS
from tests.unit.test_eras import (
    DISCOVER,
    ENVELOPE,
    asking_tape,
    legacy_client,
    modern_req,
    modern_tape,
)
from tests.unit.test_replayer import req, res, tape

REFUSED = {
    "content": [{"type": "text", "text": "sampling is unavailable on 2026-07-28 connections"}],
    "isError": True,
    "resultType": "complete",
}
DONE = {"content": [{"type": "text", "text": "5"}], "resultType": "complete"}


def refusing_tape() -> Any:
    """fastmcp's way: it cannot ask a 2026-07-28 client, so it refuses the call (twice);
    and a tool whose call failed outright; and a plain one."""
    return modern_tape(
        ("c2s", modern_req(2, "tools/call", {"name": "write"})),
        ("s2c", res(2, REFUSED)),
        ("c2s", modern_req(5, "tools/call", {"name": "write"})),
        ("s2c", res(5, REFUSED)),
        ("c2s", modern_req(3, "tools/call", {"name": "broken"})),
        ("s2c", {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "boom"}}),
        ("c2s", modern_req(4, "tools/call", {"name": "add"})),
        ("s2c", res(4, DONE)),
    )


def call(replayer: Replayer, msg_id: int, name: str) -> Any:
    return replayer.receive(req(msg_id, "tools/call", {"name": name}))


def test_a_recorded_refusal_is_served_with_what_the_recording_cannot_show() -> None:
    r = legacy_client(refusing_tape(), {})
    first = call(r, 9, "write")
    assert first.warnings == (announcement("write"),)
    assert "cassette variant TAPE --as legacy" in first.warnings[0]
    (answer,) = first.messages
    assert answer["id"] == 9
    texts = [item["text"] for item in answer["result"]["content"]]
    assert texts == [REFUSED["content"][0]["text"], f"cassette-mcp: {announcement('write')}"]
    assert answer["result"]["isError"] is True
    again = call(r, 10, "write")
    assert again.warnings == ()  # once per tool, in the log
    assert ANNOUNCED in again.messages[0]["result"]["content"][-1]["text"]  # every error
    assert not r.misses


def test_a_recorded_error_says_it_in_its_message() -> None:
    r = legacy_client(refusing_tape(), {})
    reply = call(r, 9, "broken")
    (error,) = reply.messages
    assert error["error"]["code"] == -32603
    assert error["error"]["message"] == f"boom; cassette-mcp: {announcement('broken')}"
    assert reply.warnings == (announcement("broken"),)


def test_a_plain_result_is_served_as_recorded_and_unannounced() -> None:
    r = legacy_client(refusing_tape(), {})
    reply = call(r, 9, "add")
    assert reply.messages == (res(9, {"content": DONE["content"]}),)
    assert reply.warnings == ()


def test_a_bridged_round_is_announced_once_and_its_result_is_untouched() -> None:
    """mcp 2.3.0's way: the recording asked for input with input_required; the legacy
    client is asked with server requests, and told what may differ live (the schema of
    what it is asked, the words of a refusal)."""
    r = legacy_client(asking_tape(), {"sampling": {}})
    asked = call(r, 9, "ask")
    assert asked.messages[0]["method"] == "sampling/createMessage"
    assert asked.warnings == (announcement("ask"),)
    wrote = {"role": "assistant", "content": {"type": "text", "text": "a haiku"}, "model": "m"}
    done = r.receive(res(0, wrote))
    assert done.messages == (res(9, {"content": [{"type": "text", "text": "done"}]}),)
    assert done.warnings == ()


def test_a_round_the_client_cannot_answer_is_a_miss_that_says_it() -> None:
    r = legacy_client(asking_tape(), {})  # no sampling declared: it cannot be asked
    reply = call(r, 9, "ask")
    (error,) = reply.messages
    assert error["error"]["code"] == REPLAY_MISS
    assert "input_required" in error["error"]["message"]
    assert announcement("ask") in error["error"]["message"]
    assert reply.miss is not None
    assert announcement("ask") in reply.miss.summary


def test_a_modern_client_is_not_told() -> None:
    r = Replayer(refusing_tape())
    r.receive(modern_req(1, "server/discover"))
    reply = r.receive(modern_req(9, "tools/call", {"name": "write"}))
    assert reply.warnings == ()
    assert reply.messages[0]["result"]["content"] == REFUSED["content"]


def caps(capabilities: dict[str, Any]) -> dict[str, Any]:
    return {"_meta": {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": capabilities}}


def test_a_client_of_other_capabilities_is_told_in_the_log() -> None:
    """A server that checks a file against the client's roots refused the recording's
    client, which declared none; a client declaring roots would be read the file live."""
    refused = {"code": -32021, "message": "Client did not declare the roots capability"}
    recorded = tape(
        ("c2s", req(1, "server/discover", caps({}))),
        ("s2c", res(1, DISCOVER)),
        ("c2s", req(2, "tools/call", {"name": "read_file", **caps({})})),
        ("s2c", {"jsonrpc": "2.0", "id": 2, "error": refused}),
        era="modern",
    )
    rooted = Replayer(recorded)
    rooted.receive(req(1, "server/discover", caps({"roots": {}})))
    reply = rooted.receive(req(9, "tools/call", {"name": "read_file", **caps({"roots": {}})}))
    note = announcement("read_file", legacy=False)
    assert reply.warnings == (note,)
    assert "--capabilities LIST records it" in note
    assert reply.messages[0]["error"] == refused  # told in the log; the answer unchanged
    same = Replayer(recorded)  # declaring what the recording's client declared: as recorded
    same.receive(req(1, "server/discover", caps({})))
    plain = same.receive(req(9, "tools/call", {"name": "read_file", **caps({})}))
    assert plain.warnings == ()
    assert plain.messages[0]["error"] == refused
