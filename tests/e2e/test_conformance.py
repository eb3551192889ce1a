"""The official MCP conformance suite's server scenarios, live, through the recording proxy
and on replay: every check that passes against live server-everything must pass through
``cassette record --upstream`` and against ``cassette replay --front http`` of that
recording (``@modelcontextprotocol/conformance``, pinned in tests/node)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_http_sdk import http_replay, recording_proxy, start_everything_http
from tests.helpers.support import NODE_DIR, node, scaled

pytestmark = pytest.mark.e2e

CONFORMANCE = (
    NODE_DIR / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
)
#: Checks that pass against live server-everything 2026.8.31 with conformance 0.1.13.
PASSING_LIVE = 13

#: A scenario's results directory ends with the time it ran: 2026-12-01T09-36-14-035Z.
STAMPED = re.compile(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$")

Results = dict[str, dict[str, str]]  # scenario -> check id -> status


def conformance(url: str, out: Path) -> Results:
    """Run the server scenarios against ``url``; each scenario's checks and their status,
    read from the results it writes (``OUT/server-<scenario>-<time>/checks.json``)."""
    if not CONFORMANCE.exists():
        pytest.skip("the conformance suite is missing: run `npm ci --prefix tests/node`")
    command = [node(), str(CONFORMANCE), "server", "--url", url, "--output-dir", str(out)]
    # It exits 1 when any check fails, as some do against server-everything itself.
    run = subprocess.run(command, capture_output=True, text=True, timeout=scaled(180), check=False)
    assert "=== SUMMARY ===" in run.stdout, run.stdout + run.stderr
    results: Results = {}
    for checks in sorted(out.glob("server-*/checks.json")):
        scenario = STAMPED.sub("", checks.parent.name.removeprefix("server-"))
        results[scenario] = {c["id"]: c["status"] for c in json.loads(checks.read_text())}
    return results


def passing(results: Results) -> set[tuple[str, str]]:
    return {
        (scenario, check)
        for scenario, checks in results.items()
        for check, status in checks.items()
        if status == "SUCCESS"
    }


def test_what_passes_live_passes_through_the_proxy_and_on_replay(tmp_path: Path) -> None:
    tape = tmp_path / "conformance.jsonl"
    server, upstream = start_everything_http()
    with server:
        live = conformance(upstream, tmp_path / "live")
        proxy, url = recording_proxy(tape, upstream)
        with proxy:
            proxied = conformance(url, tmp_path / "proxied")
            assert proxy.stop() == 0, proxy.output()
    front, url = http_replay(tape)
    with front:
        replayed = conformance(url, tmp_path / "replayed")
        front.stop()
    assert len(passing(live)) == PASSING_LIVE, live
    assert "server-initialize" in live
    assert set(live) == set(proxied) == set(replayed)  # every scenario ran each time
    assert passing(live) - passing(proxied) == set()
    assert passing(live) - passing(replayed) == set()
