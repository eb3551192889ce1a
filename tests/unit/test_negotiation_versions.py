"""A legacy client's protocol revision, granted as the recorded server would grant it:
plain values in and out."""

from __future__ import annotations

from cassette.core.eras import granted_version
from cassette.core.replayer import Replayer
from tests.unit.test_replayer import Tape, req, res, tape


def test_an_older_legacy_revision_is_granted() -> None:
    assert granted_version("2025-06-18", "2025-11-25") == "2025-06-18"
    assert granted_version("2024-11-05", "2025-06-18") == "2024-11-05"


def test_a_newer_or_unknown_revision_gets_the_recorded_one() -> None:
    assert granted_version("2025-11-25", "2025-06-18") == "2025-06-18"
    assert granted_version("2026-07-28", "2025-06-18") == "2025-06-18"
    assert granted_version("1999-01-01", "2025-06-18") == "2025-06-18"
    assert granted_version(None, "2025-06-18") == "2025-06-18"


def test_evidence_of_what_the_server_supports_narrows_the_grant() -> None:
    listed = ["2026-07-28", "2025-11-25", "2025-06-18"]
    assert granted_version("2025-06-18", "2025-11-25", listed) == "2025-06-18"
    assert granted_version("2025-03-26", "2025-11-25", listed) == "2025-11-25"


def legacy_tape(version: str = "2025-11-25") -> Tape:
    return tape(
        ("c2s", req(0, "initialize", {"protocolVersion": version, "capabilities": {}})),
        ("s2c", res(0, {"protocolVersion": version, "capabilities": {"tools": {}}})),
        ("c2s", req(1, "tools/list")),
        ("s2c", res(1, {"tools": []})),
    )


def test_a_replay_grants_an_older_client_its_revision_silently() -> None:
    r = Replayer(legacy_tape())
    reply = r.receive(req(7, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
    (answer,) = reply.messages
    assert answer["id"] == 7
    assert answer["result"]["protocolVersion"] == "2025-06-18"
    assert answer["result"]["capabilities"] == {"tools": {}}
    assert reply.warnings == ()
    # the recording itself is untouched: a second session is granted what it asks
    again = Replayer(legacy_tape())
    init = again.receive(req(1, "initialize", {"protocolVersion": "2025-11-25"}))
    assert init.messages[0]["result"]["protocolVersion"] == "2025-11-25"


def test_a_replay_answers_a_newer_client_the_recorded_revision_with_a_warning() -> None:
    r = Replayer(legacy_tape("2025-06-18"))
    reply = r.receive(req(1, "initialize", {"protocolVersion": "2025-11-25"}))
    assert reply.messages[0]["result"]["protocolVersion"] == "2025-06-18"
    (warning,) = reply.warnings
    assert "asked for protocol 2025-11-25" in warning
    assert "answers 2025-06-18" in warning
