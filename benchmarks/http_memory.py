"""Resident memory of the HTTP replay front over many short sessions: flat after warm-up.

    .venv/bin/python benchmarks/http_memory.py [--sessions 10000] [--workers 4] [--json PATH]

Serves ``examples/everything.jsonl`` with ``cassette replay --front http`` and drives it
with ``--workers`` concurrent clients, each running short sessions one after another:
``initialize``, ``notifications/initialized``, ``tools/list``, then ``DELETE``, as a test
run of many short tests does. After 500 sessions, and then at every tenth of the run, it
reads the front's resident set size (``VmRSS`` in ``/proc/PID/status``) and prints it with
the growth since 500 sessions and the growth per session. The issue's target: within
5 MB at 10,000 sessions of what it was at 500 (it grew about 5 KB per session before).

Every answer is checked (a wrong or failed answer counts as an error), so a front that
stays small by answering nothing cannot pass. Nothing here is asserted by the tests.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent
TAPE = ROOT / "examples" / "everything.jsonl"
WARM = 500
TARGET_MB = 5.0
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "memory-bench", "version": "1"},
    },
}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def _answer(response: httpx.Response) -> Any:
    """The JSON-RPC answer in a JSON body or the last SSE data line."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [ln[5:].strip() for ln in response.text.splitlines() if ln.startswith("data:")]
        return json.loads([d for d in data if d][-1])
    return response.json()


async def one_session(client: httpx.AsyncClient, url: str) -> None:
    opened = await client.post(url, json=INITIALIZE, headers=HEADERS)
    session = opened.headers.get("mcp-session-id")
    if opened.status_code != 200 or session is None or "result" not in _answer(opened):
        raise RuntimeError(f"initialize: {opened.status_code} {opened.text[:200]}")
    headers = {**HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    if (await client.post(url, json=note, headers=headers)).status_code != 202:
        raise RuntimeError("notifications/initialized was not accepted")
    listed = await client.post(
        url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers
    )
    if not _answer(listed).get("result", {}).get("tools"):
        raise RuntimeError(f"tools/list: {listed.text[:200]}")
    if (await client.delete(url, headers=headers)).status_code != 200:
        raise RuntimeError("DELETE was refused")


async def drive(url: str, pid: int, sessions: int, workers: int) -> dict[str, Any]:
    marks = sorted({WARM, *(sessions * k // 10 for k in range(1, 11))})
    done = 0
    errors: list[str] = []
    samples: list[tuple[int, int]] = []
    started = time.monotonic()

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal done
        while done < sessions:
            done += 1
            try:
                await one_session(client, url)
            except (RuntimeError, httpx.HTTPError, ValueError) as exc:
                errors.append(str(exc))
            if marks and done >= marks[0]:
                samples.append((marks.pop(0), rss_kib(pid)))

    async with httpx.AsyncClient(timeout=30) as client, anyio.create_task_group() as tg:
        for _ in range(workers):
            tg.start_soon(worker, client)
    return {
        "sessions": sessions,
        "seconds": round(time.monotonic() - started, 1),
        "errors": len(errors),
        "first_errors": errors[:3],
        "rss_kib": samples,
    }


def start_front() -> tuple[subprocess.Popen[bytes], str]:
    argv = [sys.executable, "-m", "cassette", "replay", str(TAPE), "--front", "http", "-q"]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    for raw in proc.stderr:
        found = re.search(r"serving on (\S+)", raw.decode())
        if found:
            return proc, found.group(1)
    raise RuntimeError("the front never said where it serves")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks/results/http_memory.json")
    args = parser.parse_args()
    proc, url = start_front()
    try:
        result = anyio.run(drive, url, proc.pid, args.sessions, args.workers)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    base = dict(result["rss_kib"])[WARM]
    print(f"{args.sessions} sessions in {result['seconds']} s, {result['errors']} errors")
    print("| sessions | RSS MiB | growth since 500 (MiB) | KiB per session since 500 |")
    print("| ---: | ---: | ---: | ---: |")
    for count, kib in result["rss_kib"]:
        per = (kib - base) / (count - WARM) if count > WARM else 0.0
        print(f"| {count} | {kib / 1024:.1f} | {(kib - base) / 1024:+.2f} | {per:+.3f} |")
    last = result["rss_kib"][-1][1]
    growth = (last - base) / 1024
    held = growth <= TARGET_MB and result["errors"] == 0
    verdict = "held" if held else "missed"
    print(f"target: within {TARGET_MB} MB of the 500-session figure: {growth:+.2f} MB, {verdict}")
    result.update(growth_mib=round(growth, 3), target_mib=TARGET_MB, held=held)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main())
