"""Load on the HTTP replay front: many concurrent sessions, zero errors, nothing leaking.

    .venv/bin/python benchmarks/http_load.py [--sessions 50] [--requests 200] [--json PATH]

Builds a legacy streamable-HTTP cassette with one distinct ``echo`` exchange per
(session, request) pair, serves it with ``cassette replay --front http`` on a free port,
and drives it with ``--sessions`` concurrent clients of ``--requests`` calls each. Each
session must get exactly its own answers (an answer from another session's request is a
leak), with no HTTP or JSON-RPC error. Prints requests per second and p50/p99 latency and
writes them as JSON. The figures are this machine's, at this moment: a 2-core shared box.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import attrs
import httpx

from cassette import Cassette, Header, MessageEvent
from cassette.core.wire.model import RecorderInfo

ROOT = Path(__file__).resolve().parent.parent


@attrs.define
class Tally:
    """What the sessions measured and what went wrong."""

    latencies: list[float] = attrs.field(factory=list)
    errors: list[str] = attrs.field(factory=list)


def build_cassette(sessions: int, requests: int) -> Cassette:
    events: list[Any] = []

    def add(direction: str, message: dict[str, Any], stream: str) -> None:
        meta = {"stream": stream, "session": 1}
        events.append(
            MessageEvent(t=0.0, dir=direction, message=message, meta=meta, seq=len(events) + 1)
        )  # type: ignore[arg-type]

    add(
        "c2s",
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25"},
        },
        "post-0",
    )
    add(
        "s2c",
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}},
        },
        "post-0",
    )
    n = 0
    for s in range(sessions):
        for r in range(requests):
            n += 1
            text = f"session {s} request {r}"
            add(
                "c2s",
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": text}},
                },
                f"post-{n}",
            )
            add(
                "s2c",
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "result": {"content": [{"type": "text", "text": text}]},
                },
                f"post-{n}",
            )
    header = Header(
        transport="streamable-http",
        recorder=RecorderInfo("bench", "0"),
        started_at="x",
        target={"url": "http://127.0.0.1/mcp"},
        era="legacy",
        protocol_version="2025-11-25",
    )
    return Cassette(header, tuple(events))


async def one_session(
    client: httpx.AsyncClient, url: str, s: int, requests: int, tally: Tally
) -> None:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    init = await client.post(
        url,
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25"},
        },
        headers=headers,
    )
    headers["mcp-session-id"] = init.headers["mcp-session-id"]
    for r in range(requests):
        text = f"session {s} request {r}"
        body = {
            "jsonrpc": "2.0",
            "id": r + 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}},
        }
        started = time.perf_counter()
        response = await client.post(url, json=body, headers=headers)
        tally.latencies.append(time.perf_counter() - started)
        if response.status_code != 200:
            tally.errors.append(f"session {s} request {r}: HTTP {response.status_code}")
            continue
        reply = response.json()
        got = reply.get("result", {}).get("content", [{}])[0].get("text")
        if reply.get("id") != r + 1 or got != text:
            tally.errors.append(f"session {s} request {r}: got {reply}")


async def drive(url: str, sessions: int, requests: int) -> dict[str, Any]:
    tally = Tally()
    latencies, errors = tally.latencies, tally.errors
    limits = httpx.Limits(max_connections=sessions, max_keepalive_connections=sessions)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for s in range(sessions):
                tg.start_soon(one_session, client, url, s, requests, tally)
        elapsed = time.perf_counter() - started
    ordered = sorted(latencies)
    return {
        "sessions": sessions,
        "requests_per_session": requests,
        "requests": len(latencies),
        "errors": errors[:10],
        "error_count": len(errors),
        "seconds": elapsed,
        "requests_per_second": len(latencies) / elapsed,
        "p50_ms": 1000 * statistics.median(ordered),
        "p99_ms": 1000 * ordered[int(0.99 * (len(ordered) - 1))],
    }


#: A raw ASGI app under uvicorn answering the same requests with the same JSON shape: the
#: floor an HTTP front on uvicorn can reach (``run_raw``). Prints the line ``run`` waits for.
RAW_ASGI = """
import json, socket, sys
import uvicorn

async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    request = json.loads(body)
    if request.get("method") == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}}
    else:
        text = request["params"]["arguments"]["text"]
        result = {"content": [{"type": "text", "text": text}]}
    answer = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(answer)).encode()),
        (b"mcp-session-id", b"raw"),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": answer})

sock = socket.socket()  # as cassette's front binds it (cassette.transports.http._http.bind)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
sock.bind(("127.0.0.1", 0))
sock.listen(128)
print(f"serving on http://127.0.0.1:{sock.getsockname()[1]}/mcp", file=sys.stderr, flush=True)
config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
uvicorn.Server(config).run(sockets=[sock])
"""


def run(sessions: int, requests: int) -> dict[str, Any]:
    """The cassette's HTTP replay front under load."""
    with tempfile.TemporaryDirectory() as tmp:
        tape = Path(tmp) / "load.jsonl"
        build_cassette(sessions, requests).dump(tape)
        argv = [sys.executable, "-m", "cassette", "replay", str(tape), "--front", "http"]
        return _serve_and_drive(
            [*argv, "--port", "0", "-q", "--strategy", "loose"], sessions, requests
        )


def run_raw(sessions: int, requests: int) -> dict[str, Any]:
    """The same load on ``RAW_ASGI``."""
    return _serve_and_drive([sys.executable, "-c", RAW_ASGI], sessions, requests)


def _serve_and_drive(argv: list[str], sessions: int, requests: int) -> dict[str, Any]:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        url = None
        deadline = time.monotonic() + 30
        while url is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                raise RuntimeError("the HTTP server exited before serving")
            match = re.search(r"serving on (http://\S+)", line)
            url = match.group(1) if match else None
        if url is None:
            raise RuntimeError("the HTTP server did not start within 30 s")
        return anyio.run(drive, url, sessions, requests)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument(
        "--json", type=Path, default=ROOT / "benchmarks" / "results" / "http_load.json"
    )
    args = parser.parse_args()
    result = run(args.sessions, args.requests)
    print(
        f"{result['sessions']} sessions x {result['requests_per_session']} requests: "
        f"{result['requests_per_second']:.0f} req/s, p50 {result['p50_ms']:.2f} ms, "
        f"p99 {result['p99_ms']:.2f} ms, {result['error_count']} errors"
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 1 if result["error_count"] else 0


if __name__ == "__main__":
    sys.exit(main())
