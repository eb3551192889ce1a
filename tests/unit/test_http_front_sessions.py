"""Flat memory on long runs: what the HTTP replay front keeps for a session is let go when
the session ends, by DELETE or because its client abandoned it; the end-of-run summary
keeps the misses of ended sessions, not the sessions.

(The resident memory over 10,000 sessions is measured in ``benchmarks/http_memory.py``.)
"""

from __future__ import annotations

import httpx

from cassette.core.replay.sessions import ReplayPool
from cassette.runtime import replay_sessions
from cassette.store.storage import Cassette
from cassette.transports.http.streamable_http import HttpReplayApp
from tests.helpers.support import ROOT, front_app
from tests.unit.test_http_front import LEGACY, post, req, scenario

VERSION = {"mcp-protocol-version": "2025-11-25"}


async def _open(client: httpx.AsyncClient) -> str:
    opened = await post(client, req(1, "initialize", {"protocolVersion": "2025-11-25"}))
    assert opened.status_code == 200
    return opened.headers["mcp-session-id"]


def test_a_deleted_session_leaves_nothing_but_its_misses() -> None:
    app = front_app(HttpReplayApp, LEGACY)
    pool = app.pool.responders
    shared = pool.live  # the front's sessionless one, for probes sent without a session

    async def body(client: httpx.AsyncClient) -> None:
        ids = [await _open(client) for _ in range(3)]
        assert pool.live == shared + 3
        miss = await post(client, req(5, "prompts/list"), **{"mcp-session-id": ids[0]}, **VERSION)
        assert miss.status_code == 200
        for session_id in ids[:2]:
            ended = await client.delete(
                "/api/mcp", headers={"mcp-session-id": session_id, **VERSION}
            )
            assert ended.status_code == 200
        assert sorted(app.sessions) == [ids[2]]
        assert pool.live == shared + 1
        gone = await post(client, req(6, "tools/list"), **{"mcp-session-id": ids[0]}, **VERSION)
        assert gone.status_code == 404

    scenario(app, body)
    assert [m.method for m in app.pool.result().misses] == ["prompts/list"]
    assert "prompts/list" in app.pool.result().summary


def test_a_session_its_client_abandoned_is_ended_after_the_idle_timeout() -> None:
    now = [0.0]
    app = HttpReplayApp(replay_sessions(LEGACY), idle_timeout=60.0, clock=lambda: now[0])

    async def body(client: httpx.AsyncClient) -> None:
        abandoned = await _open(client)
        now[0] = 30.0
        kept = await _open(client)
        now[0] = 70.0  # the first was last used 70 s ago, the second 40 s ago
        still = await post(client, req(2, "tools/list"), **{"mcp-session-id": kept}, **VERSION)
        assert still.status_code == 200
        assert sorted(app.sessions) == [kept]
        late = await post(client, req(2, "tools/list"), **{"mcp-session-id": abandoned}, **VERSION)
        assert late.status_code == 404  # as after a DELETE: the client opens a new session

    scenario(app, body)


def test_a_session_with_an_open_stream_is_never_idle() -> None:
    now = [0.0]
    app = HttpReplayApp(replay_sessions(LEGACY), idle_timeout=60.0, clock=lambda: now[0])

    async def body(client: httpx.AsyncClient) -> None:
        listening = await _open(client)
        session = app.sessions[listening]
        session.get_streams += 1  # a GET stream open for as long as the client likes
        now[0] = 1000.0
        await _open(client)  # a request arrives, the sweep looks
        assert listening in app.sessions
        session.get_streams -= 1

    scenario(app, body)


def test_what_no_session_played_outlives_the_sessions() -> None:
    """The unused-recordings report needs the requests no session played; the pool folds
    each session's in as it ends instead of keeping the session."""
    pool = ReplayPool(Cassette.load(ROOT / "examples" / "everything.jsonl"))
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
    played = [
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 5, "method": "prompts/get", "params": {"name": "simple-prompt"}},
    ]
    for request in played:
        session = pool.new()
        assert session.receive(req(1, "initialize", hello)).miss is None
        assert session.receive(request).miss is None
        pool.release(session)
    assert pool.live == 0
    unplayed = [(seq, m["method"]) for seq, m in pool.unplayed()]
    # each session played the handshake and one request: only what both left stays
    assert unplayed == [(8, "tools/call"), (10, "tools/call")]


def test_over_max_sessions_the_least_recently_used_session_ends() -> None:
    now = [0.0]
    app = HttpReplayApp(replay_sessions(LEGACY), max_sessions=2, clock=lambda: now[0])

    async def body(client: httpx.AsyncClient) -> None:
        first = await _open(client)
        now[0] = 1.0
        second = await _open(client)
        now[0] = 2.0
        used = await post(client, req(2, "tools/list"), **{"mcp-session-id": first}, **VERSION)
        assert used.status_code == 200  # the first is now the more recently used
        now[0] = 3.0
        third = await _open(client)
        assert sorted(app.sessions) == sorted([first, third])
        gone = await post(client, req(3, "tools/list"), **{"mcp-session-id": second}, **VERSION)
        assert gone.status_code == 404  # what the specification gives for an ended session

    scenario(app, body)
