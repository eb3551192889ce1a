"""``cassette prune`` on small hand-written cassettes and reports: which lines go with a
recorded request (``cassette.core.tape.prune``, plain values), and the command's rules: every
replay must have left a request unplayed, a report must name the cassette, a cassette
changed since the run is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette
from cassette.core.tape.prune import pruned_seqs, request_digest
from cassette.errors import CassetteError, UsageError
from cassette.tools.lint import lint_cassette
from cassette.tools.prune import prune_cassette
from tests.unit.test_tools_lint import INIT, INIT_OK, msg, tape

CALL_A = msg("c2s", id=2, method="tools/call", params={"name": "a", "_meta": {"progressToken": 7}})
PROGRESS = msg("s2c", method="notifications/progress", params={"progressToken": 7, "progress": 1})
ASK = msg("s2c", id=0, method="sampling/createMessage", params={"messages": []})
ANSWER = msg("c2s", id=0, result={"content": {"type": "text", "text": "ok"}})
A_OK = msg("s2c", id=2, result={"content": []})
CALL_B = msg("c2s", id=3, method="tools/call", params={"name": "b"})
B_OK = msg("s2c", id=3, result={"content": []})
CALL_C = msg("c2s", id=4, method="tools/call", params={"name": "c"})
CANCEL_C = msg("c2s", method="notifications/cancelled", params={"requestId": 4})
STDERR = {"kind": "stderr", "t": 0.5, "text": "working"}
EVENTS = (
    INIT,
    INIT_OK,
    CALL_A,
    PROGRESS,
    ASK,
    ANSWER,
    STDERR,
    A_OK,
    CALL_B,
    B_OK,
    CALL_C,
    CANCEL_C,
)


def test_a_request_goes_with_everything_the_recording_gives_it() -> None:
    recorded = tape({"era": "legacy"}, *EVENTS)
    # lines: 1 header, 2-3 handshake, 4 call a, 5 progress, 6 the server's question,
    # 7 the client's answer, 8 stderr, 9 a's answer, 10-11 b, 12 c, 13 c cancelled
    assert sorted(s + 1 for s in pruned_seqs(recorded.events, [3])) == [4, 5, 6, 7, 9]
    assert sorted(s + 1 for s in pruned_seqs(recorded.events, [9])) == [10, 11]
    assert sorted(s + 1 for s in pruned_seqs(recorded.events, [11])) == [12, 13]
    assert pruned_seqs(recorded.events, [7]) == set()  # stderr: no request there


def test_over_http_the_post_status_goes_too() -> None:
    post = {"stream": "post-2", "session": 1}
    call = {**CALL_B, "meta": post}
    answer = {**B_OK, "meta": post}
    status = {"kind": "http", "t": 0.1, "method": "POST", "stream": "post-2", "status": 202}
    other = {"kind": "http", "t": 0.1, "method": "GET", "stream": "get-1", "status": 200}
    recorded = tape({"era": "legacy", "transport": "streamable-http"}, call, status, answer, other)
    assert sorted(s + 1 for s in pruned_seqs(recorded.events, [1])) == [2, 3, 4]


def files(tmp_path: Path, *events: dict[str, Any]) -> Path:
    """The cassette of ``events`` as a file, as the recorder writes lines."""
    header = {
        "kind": "header",
        "format": 1,
        "transport": "stdio",
        "recorder": {"name": "cassette-mcp", "version": "0"},
        "started_at": "2026-11-29T00:00:00Z",
        "era": "legacy",
    }
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in (header, *events)) + "\n")
    return path


def unplayed(path: Path, *lines: int, cassette: str = "t.jsonl") -> dict[str, Any]:
    events = Cassette.load(path).events
    by_line = {e.seq + 1: e for e in events}
    requests = [
        {
            "line": n,
            "request": f'tools/call "{by_line[n].message["params"]["name"]}"',
            "digest": request_digest(by_line[n].message),
        }
        for n in lines
    ]
    return {"event": "unplayed", "cassette": cassette, "pid": 1, "requests": requests}


def report(tmp_path: Path, *facts: dict[str, Any]) -> Path:
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(f) + "\n" for f in facts))
    return path


SIMPLE = (INIT, INIT_OK, CALL_B, B_OK, CALL_C, msg("s2c", id=4, result={"content": []}))


def test_only_what_every_replay_left_unplayed_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = files(tmp_path, *SIMPLE)
    before = path.read_bytes().splitlines(keepends=True)
    # one replay played neither call, another played c: only b goes
    run = report(tmp_path, unplayed(path, 4, 6), unplayed(path, 4), {"event": "end"})
    dry = prune_cassette("t.jsonl", run.name, dry_run=True)
    assert (dry.requests, dry.lines, dry.replays, dry.written) == (
        ((4, 'tools/call "b"'),),
        (4, 5),
        2,
        False,
    )
    assert dry.text().startswith('would prune: t.jsonl:4: tools/call "b"')
    assert path.read_bytes() == b"".join(before)  # a dry run changes nothing
    done = prune_cassette("t.jsonl", run.name)
    assert done.written
    assert path.read_bytes() == b"".join([*before[:3], *before[5:]])  # the rest, byte for byte
    assert lint_cassette(Cassette.load(path)) == []


def test_a_report_that_names_another_cassette_prunes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = files(tmp_path, *SIMPLE)
    before = path.read_bytes()
    run = report(tmp_path, unplayed(path, 4, cassette="other.jsonl"))
    with pytest.raises(UsageError, match=r"holds no replay of t\.jsonl.*it names other\.jsonl"):
        prune_cassette("t.jsonl", run.name)
    assert path.read_bytes() == before


def test_a_cassette_changed_since_the_run_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = files(tmp_path, *SIMPLE)
    run = report(tmp_path, unplayed(path, 4))
    prune_cassette(path, run)
    after = path.read_bytes()
    # line 4 now holds c's call: another request, named the same way but for its tool
    with pytest.raises(CassetteError, match=r't\.jsonl:4: the report names tools/call "b"'):
        prune_cassette(path, run)
    assert path.read_bytes() == after
    bad = report(tmp_path, {"event": "unplayed", "cassette": "t.jsonl", "requests": "all"})
    with pytest.raises(CassetteError, match="without its list of requests"):
        prune_cassette(path, bad)
