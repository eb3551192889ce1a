"""The whole benchmark suite in one command: ``.venv/bin/python -m benchmarks``.

Every figure is reported beside a baseline measured in the same run, because this is a
shared, noisy 2-core machine and only ratios carry from one run to the next:

* the floor: a stdlib Python responder (``json`` and ``sys`` only, canned answers);
* the live pinned ``@modelcontextprotocol/server-everything`` over stdio, on Node;
* the peer ``mcp-cassette`` 0.4.0 (``--with-peer``; it needs Python 3.12 and is installed
  into a throwaway venv in the temp directory, ``/tmp/cassette-mcp-bench-peer``; skipped
  with a note if it cannot be installed);
* ``python -c "import asyncio, anyio"`` for start-up.

The stdio sessions reuse ``benchmarks/stdio_replay.py`` (its raw client, floor and
cleanup), the SSE figures reuse ``benchmarks/sse_parser.py`` and the HTTP figure reuses
``benchmarks/http_load.py``. Synthetic cassettes are built with cassette's own API.

Every process runs from a throwaway user project (``USER_PYPROJECT``), as a test suite
would run it. Options: ``--quick`` (under 30 s), ``--with-peer``, ``--json PATH``,
``--rounds N``.
Nothing here is asserted by the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import json
import math
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import stdio_replay as sr

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PEER_VENV = Path(tempfile.gettempdir()) / "cassette-mcp-bench-peer"
PEER_PYTHON = Path("/root/.pyenv/versions/3.12.1/bin/python")
PEER_SPEC = "mcp-cassette==0.4.0"
LARGE_STDIO_CALLS = 30_000

#: The targets of the current performance round: (figure key, comparison, limit, what it
#: means). Every one is a ratio or a figure measured in this run; the instruction counts
#: (callgrind) are the ones the machine's load cannot move. The last four are guards: they
#: hold now and must keep holding.
TARGETS: list[tuple[str, str, float, str]] = [
    (
        "startup_instructions_vs_stack_floor",
        "<=",
        1.2,
        "replay start-up within 1.2x the stack floor (`anyio.run` of an empty coroutine "
        "after `import attrs, cattrs`), in instructions (callgrind)",
    ),
    ("init_vs_peer", "<=", 0.5, "replay answers initialize within 0.5x the peer (wall)"),
    (
        "record_init_delay_ms",
        "<=",
        30.0,
        "a recording answers initialize at most 30 ms after the live server (paired rounds)",
    ),
    (
        "record_call_vs_live",
        "<=",
        1.5,
        "a call through the recorder within 1.5x the live server's (paired rounds)",
    ),
    (
        "record_probes_vs_live",
        "<=",
        1.5,
        "a plain recording of server-everything, its probes included, within 1.5x the live "
        "session (the SDK 2 client listing tools, start to end; paired rounds)",
    ),
    (
        "init_large_vs_small",
        "<=",
        1.5,
        "a 30,000-call cassette answers initialize within 1.5x a 200-call one (paired rounds)",
    ),
    (
        "init_large_vs_small_banner",
        "<=",
        1.5,
        "the same with the default banner (no -q): a 30,000-call cassette answers "
        "initialize within 1.5x a 200-call one (paired rounds)",
    ),
    (
        "call_instructions_vs_floor",
        "<=",
        2.2,
        "guard: a stdio call within 2.2x the floor's instructions (callgrind)",
    ),
    (
        "load_100k_events_s",
        "<",
        1.0,
        "guard: 100,000 events load and prepare in under 1 s (with the fast-JSON extra)",
    ),
    ("inprocess_receive_us", "<", 30.0, "guard: in-process Replayer.receive under 30 us"),
    ("http_vs_raw_asgi", "<=", 1.1, "guard: HTTP front within 1.1x a raw ASGI app"),
]


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def _note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# -- synthetic cassettes ---------------------------------------------------------------------


def synthetic_cassette(calls: int) -> Any:
    """A stdio cassette of initialize plus ``calls`` distinct echo exchanges."""
    from cassette import Cassette, Header, MessageEvent
    from cassette.core.wire.model import RecorderInfo

    events: list[Any] = []

    def add(direction: str, message: dict[str, Any]) -> None:
        events.append(
            MessageEvent(t=0.0, dir=direction, message=message, seq=len(events) + 1)  # type: ignore[arg-type]
        )

    add(
        "c2s",
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": sr.PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1.0.0"},
            },
        },
    )
    add(
        "s2c",
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {
                "protocolVersion": sr.PROTOCOL_VERSION,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "synthetic", "version": "1.0.0"},
            },
        },
    )
    add("c2s", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i in range(calls):
        message = f"hello {i}"
        add(
            "c2s",
            {
                "jsonrpc": "2.0",
                "id": i + 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": message}},
            },
        )
        add(
            "s2c",
            {
                "jsonrpc": "2.0",
                "id": i + 1,
                "result": {"content": [{"type": "text", "text": f"Echo: {message}"}]},
            },
        )
    header = Header(
        transport="stdio",
        recorder=RecorderInfo("bench", "0"),
        started_at="2026-01-01T00:00:00Z",
        target={"command": ["synthetic"]},
        era="legacy",
        protocol_version=sr.PROTOCOL_VERSION,
    )
    return Cassette(header, tuple(events))


def _echo(i: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 10_000_000 + i,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": f"hello {i}"}},
    }


def measure_scaling(sizes: list[int], sample: int, tmp: Path, rounds: int = 7) -> dict[str, Any]:
    """Load time, memory and in-process per-call cost as the cassette grows.

    Per call: every size is loaded first, then each round times a fresh session of every
    size in turn, so the machine's noise falls on all sizes alike; a size's figure is the
    median of its rounds, and ``growth`` the median over rounds of largest / smallest.
    """
    from cassette import Cassette
    from cassette.core.replay.prepared import Prepared

    out: dict[str, Any] = {}
    loaded: dict[int, tuple[Any, Any, list[dict[str, Any]]]] = {}
    for calls in sizes:
        path = tmp / f"synthetic-{calls}.jsonl"
        if not path.exists():
            synthetic_cassette(calls).dump(path)
        gc.collect()
        start = time.perf_counter()
        tape = Cassette.load(path)
        load_s = time.perf_counter() - start
        prepared = Prepared.of(tape)
        prepare_s = time.perf_counter() - start - load_s
        events = len(tape.events)
        del tape, prepared
        gc.collect()
        tracemalloc.start()
        tape = Cassette.load(path)
        prepared = Prepared.of(tape)
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        step = max(1, calls // sample)
        loaded[calls] = (tape, prepared, [_echo(i) for i in range(0, calls, step)][:sample])
        out[str(calls)] = {
            "calls": calls,
            "events": events,
            "bytes": path.stat().st_size,
            "load_s": load_s,
            "prepare_s": prepare_s,
            "memory_bytes": current,
            "memory_peak_bytes": peak,
        }
        _note(f"  scaling {calls:>7} calls: load {load_s * 1e3:.0f} ms")
    per_round: dict[int, list[float]] = {calls: [] for calls in sizes}
    for _ in range(rounds):
        for calls, (tape, prepared, picks) in loaded.items():
            per_round[calls].append(_session_cost(tape, prepared, picks))
    for calls in sizes:
        out[str(calls)]["receive_s"] = _median(per_round[calls])
        out[str(calls)]["receive_rounds_s"] = per_round[calls]
    small, large = min(sizes), max(sizes)
    growth = [b / a for a, b in zip(per_round[small], per_round[large], strict=True)]
    out["growth"] = _median(growth)
    return out


def _session_cost(tape: Any, prepared: Any, picks: list[dict[str, Any]]) -> float:
    """Seconds per call of a fresh session answering ``picks``; every answer checked."""
    from cassette import Replayer

    gc.collect()
    replayer = Replayer(tape, prepared=prepared)
    start = time.perf_counter()
    for message in picks:
        reply = replayer.receive(message)
    elapsed = (time.perf_counter() - start) / len(picks)
    if not reply.messages or reply.miss is not None:
        raise sr.BenchError("synthetic cassette: a call missed")
    return elapsed


def measure_fast_json(path: Path, rounds: int) -> dict[str, Any]:
    """Load and prepare ``path`` with the ``fast`` extra's parser and with the standard
    library's, in interleaved rounds (``None`` figures without orjson installed)."""
    from cassette import Cassette
    from cassette.core.replay.prepared import Prepared
    from cassette.core.wire import jsonrpc

    if not jsonrpc.fast_json():
        return {"fast_s": None, "stdlib_s": None, "events": 0}
    saved = jsonrpc._fast[:]
    times: dict[str, list[float]] = {"fast": [], "stdlib": []}
    events = 0
    try:
        for _ in range(rounds):
            for name, taken in times.items():
                jsonrpc._fast[:] = saved if name == "fast" else [None]
                gc.collect()
                start = time.perf_counter()
                tape = Cassette.load(path)
                Prepared.of(tape)
                taken.append(time.perf_counter() - start)
                events = len(tape.events)
                del tape
    finally:
        jsonrpc._fast[:] = saved
    return {
        "fast_s": _median(times["fast"]),
        "stdlib_s": _median(times["stdlib"]),
        "fast_vs_stdlib": _median(
            [a / b for a, b in zip(times["fast"], times["stdlib"], strict=True)]
        ),
        "events": events,
    }


# -- in-process ------------------------------------------------------------------------------


def measure_inprocess(path: Path, calls: int, rounds: int) -> dict[str, Any]:
    """Replayer.receive directly, and a request through open_replay, against the floor's
    own per-message work (json.loads + json.dumps in the same process)."""
    import anyio

    from cassette import Cassette, Replayer, open_replay

    tape = Cassette.load(path)
    picks = [_echo(i % calls) for i in range(calls)]
    lines = [json.dumps(m) for m in picks]
    direct: list[float] = []
    floor: list[float] = []
    via_api: list[float] = []
    for _ in range(rounds):
        replayer = Replayer(tape)
        start = time.perf_counter()
        for message in picks:
            replayer.receive(message)
        direct.append((time.perf_counter() - start) / calls)
        start = time.perf_counter()
        for line in lines:
            msg = json.loads(line)
            json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"content": []}})
        floor.append((time.perf_counter() - start) / calls)

        async def session() -> float:
            async with open_replay(tape) as conn:
                await conn.request("initialize", {"protocolVersion": sr.PROTOCOL_VERSION})
                begin = time.perf_counter()
                for i in range(calls):
                    await conn.request(
                        "tools/call", {"name": "echo", "arguments": {"message": f"hello {i}"}}
                    )
                return (time.perf_counter() - begin) / calls

        via_api.append(anyio.run(session))
    return {
        "receive_s": _median(direct),
        "open_replay_s": _median(via_api),
        "json_floor_s": _median(floor),
        "raw": {"receive_s": direct, "open_replay_s": via_api, "json_floor_s": floor},
    }


def measure_recorder_work(calls: int, rounds: int, tmp: Path) -> dict[str, Any]:
    """What recording costs beside the hot path, per message: ``Recorder.observe`` with
    the default redaction plus ``CassetteWriter.write`` (one append per message), against
    the floor's own work on a message (``json.loads`` of the line)."""
    from cassette import CassetteWriter, Recorder
    from cassette.core.redaction.redactor import Redactor

    frames: list[tuple[str, bytes]] = []
    for i in range(calls):
        request = _echo(i)
        frames.append(("c2s", json.dumps(request).encode() + b"\n"))
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"content": []}}
        answer["result"]["content"] = [{"type": "text", "text": f"Echo: hello {i}"}]
        frames.append(("s2c", json.dumps(answer).encode() + b"\n"))
    work: list[float] = []
    floor: list[float] = []
    for r in range(rounds):
        recorder = Recorder("stdio", "2026-01-01T00:00:00Z", redactor=Redactor())
        recorder.decide_era("legacy", sr.PROTOCOL_VERSION)
        with CassetteWriter(tmp / f"work-{r}.jsonl", overwrite=True) as writer:
            writer.write([recorder.header])  # type: ignore[list-item]
            start = time.perf_counter()
            for t, (direction, data) in enumerate(frames):
                records = recorder.observe(direction, data, float(t))  # type: ignore[arg-type]
                writer.write(records)
            work.append((time.perf_counter() - start) / len(frames))
        start = time.perf_counter()
        for _direction, data in frames:
            json.loads(data)
        floor.append((time.perf_counter() - start) / len(frames))
    return {"per_message_s": _median(work), "json_floor_s": _median(floor)}


# -- the peer --------------------------------------------------------------------------------


def peer_command() -> tuple[list[str] | None, str]:
    """The peer's executable, installing it into a throwaway venv if needed."""
    exe = PEER_VENV / "bin" / "mcp-cassette"
    if exe.exists():
        return [str(exe)], "mcp-cassette 0.4.0 (cached venv)"
    if not PEER_PYTHON.exists():
        return None, f"peer skipped: {PEER_PYTHON} not found (mcp-cassette needs Python 3.12)"
    _note(f"installing {PEER_SPEC} into {PEER_VENV} ...")
    try:
        subprocess.run([str(PEER_PYTHON), "-m", "venv", str(PEER_VENV)], check=True, timeout=120)
        subprocess.run(
            [str(PEER_VENV / "bin" / "pip"), "install", "-q", PEER_SPEC],
            check=True,
            timeout=600,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        shutil.rmtree(PEER_VENV, ignore_errors=True)
        return None, f"peer skipped: could not install {PEER_SPEC}: {exc}"
    if not exe.exists():
        return None, f"peer skipped: {PEER_SPEC} installed no mcp-cassette command"
    return [str(exe)], "mcp-cassette 0.4.0"


# -- stdio -----------------------------------------------------------------------------------


def measure_stdio(
    args: argparse.Namespace,
    tmp: Path,
    peer: list[str] | None,
    big: Path | None,
    notes: list[str],
) -> dict[str, Any]:
    """Interleaved rounds of the stdio targets; the recorder is one of them."""
    python = sys.executable
    floor_path = tmp / "floor_server.py"
    floor_path.write_text(sr.FLOOR_SERVER)
    live = [sr.NODE, str(sr.SERVER_EVERYTHING), "stdio"]
    tape = tmp / "everything.jsonl"
    _note(f"recording {args.calls} echo calls of server-everything ...")
    sr.run_session(
        "record",
        [python, "-m", "cassette", "record", "-o", str(tape), "--", *live],
        args.calls,
        tmp / "record.stderr",
        args.timeout,
    )
    targets: dict[str, Callable[[int], list[str]]] = {
        "floor": lambda _r: [python, str(floor_path)],
        "live": lambda _r: live,
        "replay": lambda _r: [python, "-m", "cassette", "replay", str(tape), "-q"],
        # the recorder's own cost at start and per call: its probes, which start the
        # server again beside the session, are the record_probes figure's
        "record": lambda r: [
            python,
            "-m",
            "cassette",
            "record",
            "-o",
            str(tmp / f"rec-{r}.jsonl"),
            "--no-probe",
            "--",
            *live,
        ],
    }
    if big is not None:
        targets["replay-large"] = lambda _r: [python, "-m", "cassette", "replay", str(big), "-q"]
        # the same two replays with the banner every user sees (no -q)
        targets["replay-banner"] = lambda _r: [python, "-m", "cassette", "replay", str(tape)]
        targets["replay-large-banner"] = lambda _r: [python, "-m", "cassette", "replay", str(big)]
    if peer is not None:
        peer_tape = tmp / "peer.json"
        _note("recording a peer cassette ...")
        try:
            sr.run_session(
                "peer-record",
                [*peer, "record", "--cassette", str(peer_tape), "--", *live],
                args.calls,
                tmp / "peer-record.stderr",
                args.timeout,
            )
        except sr.BenchError as exc:
            notes.append(f"peer skipped: its recording failed: {exc}")
        else:
            targets["peer"] = lambda _r: [*peer, "serve", str(peer_tape)]
    baselines = {
        "python -c pass": [python, "-c", "pass"],
        "import asyncio, anyio": [python, "-c", "import asyncio, anyio"],
    }
    raw: dict[str, list[dict[str, Any]]] = {n: [] for n in targets}
    base: dict[str, list[float]] = {n: [] for n in baselines}
    for r in range(1 + args.rounds):
        _note("warm-up ..." if r == 0 else f"stdio round {r}/{args.rounds} ...")
        for name, argv in targets.items():
            (tmp / f"rec-{r}.jsonl").unlink(missing_ok=True)
            session = sr.run_session(
                name, argv(r), args.calls, tmp / f"{name}.stderr", args.timeout
            )
            if r:
                session.pop("call_times_s")
                raw[name].append(session)
        for name, argv2 in baselines.items():
            elapsed = sr.time_command(argv2, args.timeout)
            if r:
                base[name].append(elapsed)
    init = {n: _median([s["init_s"] for s in v]) for n, v in raw.items()}
    call = {n: _median([s["call_mean_s"] for s in v]) for n, v in raw.items()}
    paired_record = _median(
        [
            (rec["call_mean_s"] - lv["call_mean_s"]) / 2
            for rec, lv in zip(raw["record"], raw["live"], strict=True)
        ]
    )
    sizes = {
        "replay": args.calls,
        "peer": args.calls,
        "replay-large": LARGE_STDIO_CALLS,
        "replay-banner": args.calls,
        "replay-large-banner": LARGE_STDIO_CALLS,
    }
    # The targets' ratios are paired by round: each compares sessions taken seconds apart,
    # so drift on the shared machine between rounds cancels out.
    paired = {
        "call_vs_floor": _median(
            [
                _ratio(a["call_mean_s"], b["call_mean_s"])
                for a, b in zip(raw["replay"], raw["floor"], strict=True)
            ]
        ),
        "init_vs_import_anyio": _median(
            [
                _ratio(a["init_s"], b)
                for a, b in zip(raw["replay"], base["import asyncio, anyio"], strict=True)
            ]
        ),
        "record_init_delay_s": _median(
            [a["init_s"] - b["init_s"] for a, b in zip(raw["record"], raw["live"], strict=True)]
        ),
        "record_call_vs_live": _median(
            [
                _ratio(a["call_mean_s"], b["call_mean_s"])
                for a, b in zip(raw["record"], raw["live"], strict=True)
            ]
        ),
    }
    if "replay-large" in raw:
        paired["init_large_vs_small"] = _init_ratio(raw["replay-large"], raw["replay"])
        paired["init_large_vs_small_banner"] = _init_ratio(
            raw["replay-large-banner"], raw["replay-banner"]
        )
    return {
        "cassette_calls": {n: sizes[n] for n in raw if n in sizes},
        "init_s": init,
        "call_s": call,
        "paired": paired,
        "baselines_s": {n: _median(v) for n, v in base.items()},
        "recorder_per_message_s": paired_record,
        "raw": raw,
        "raw_baselines_s": base,
    }


def _init_ratio(large: list[dict[str, Any]], small: list[dict[str, Any]]) -> float:
    """The median over rounds of ``large``'s init over ``small``'s in the same round."""
    return _median([_ratio(a["init_s"], b["init_s"]) for a, b in zip(large, small, strict=True)])


# -- instructions ----------------------------------------------------------------------------


def measure_instructions(tape: Path, notes: list[str], quick: bool) -> dict[str, Any] | None:
    """Instruction counts of the replay's start-up and per call, beside their baselines
    (``benchmarks/instructions.py``); ``None``, with a note, without valgrind."""
    from benchmarks import instructions

    valgrind = instructions.ensure_valgrind(notes)
    if valgrind is None:
        return None
    _note("callgrind: counting instructions (start-up, per call) ...")
    folder = RESULTS / "callgrind"
    result: dict[str, Any] = instructions.measure(valgrind, tape, 60 if quick else 200, folder)
    return result


# -- HTTP and SSE ----------------------------------------------------------------------------


def measure_http(requests: int, rounds: int) -> dict[str, Any]:
    """The HTTP front beside a raw ASGI app on uvicorn answering the same requests, in
    interleaved rounds; the ratio is the median over rounds of the paired p50s."""
    from benchmarks import http_load

    ours: list[float] = []
    raw: list[float] = []
    for _ in range(rounds):
        result = http_load.run(1, requests)
        if result["error_count"]:
            raise sr.BenchError(f"http: {result['errors']}")
        floor = http_load.run_raw(1, requests)
        if floor["error_count"]:
            raise sr.BenchError(f"http (raw ASGI): {floor['errors']}")
        ours.append(result["p50_ms"] / 1e3)
        raw.append(floor["p50_ms"] / 1e3)
    return {
        "p50_s": _median(ours),
        "raw_asgi_p50_s": _median(raw),
        "vs_raw_asgi": _median([a / b for a, b in zip(ours, raw, strict=True)]),
        "requests": requests,
    }


def measure_sse(mib: float, rounds: int) -> dict[str, Any]:
    from benchmarks import sse_parser

    contenders, version = sse_parser.load_contenders()
    cases = []
    for kind in ("mixed", "small"):
        stream = sse_parser.build_stream(kind, int(mib * 1024 * 1024))
        case = sse_parser.measure(kind, stream, 65536, contenders, rounds)
        del case["seconds"]
        cases.append(case)
    return {"httpx_sse": version, "cases": cases}


# -- the report ------------------------------------------------------------------------------


def build_figures(data: dict[str, Any]) -> dict[str, float]:
    stdio, scaling, inproc = data["stdio"], data["scaling"], data["inprocess"]
    sizes = sorted((v for v in scaling.values() if isinstance(v, dict)), key=lambda s: s["calls"])
    small, large = sizes[0], sizes[-1]
    per_100k = max(s["events"] for s in sizes)
    biggest = next(s for s in sizes if s["events"] == per_100k)
    figures = {
        "init_vs_import_anyio": stdio["paired"]["init_vs_import_anyio"],
        "init_vs_live": _ratio(stdio["init_s"]["replay"], stdio["init_s"]["live"]),
        "stdio_call_vs_floor": stdio["paired"]["call_vs_floor"],
        "stdio_call_vs_live": _ratio(stdio["call_s"]["replay"], stdio["call_s"]["live"]),
        "call_growth_300_to_max": scaling.get("growth")
        or _ratio(large["receive_s"], small["receive_s"]),
        "load_100k_events_s": (biggest["load_s"] + biggest["prepare_s"])
        * 100_000
        / biggest["events"],
        "memory_mb_per_100k_events": biggest["memory_bytes"] / 1e6 * 100_000 / biggest["events"],
        "recorder_us_per_message": stdio["recorder_per_message_s"] * 1e6,
        "record_init_delay_ms": stdio["paired"]["record_init_delay_s"] * 1e3,
        "record_call_vs_live": stdio["paired"]["record_call_vs_live"],
        "recorder_work_us_per_message": data["recorder_work"]["per_message_s"] * 1e6,
        "inprocess_receive_us": inproc["receive_s"] * 1e6,
        "inprocess_open_replay_us": inproc["open_replay_s"] * 1e6,
        "http_call_vs_stdio_floor": _ratio(data["http"]["p50_s"], stdio["call_s"]["floor"]),
        "http_vs_raw_asgi": data["http"]["vs_raw_asgi"],
    }
    if "replay-large" in stdio["call_s"]:
        figures["stdio_call_large_vs_small"] = _ratio(
            stdio["call_s"]["replay-large"], stdio["call_s"]["replay"]
        )
        figures["init_large_vs_small"] = stdio["paired"]["init_large_vs_small"]
        figures["init_large_vs_small_banner"] = stdio["paired"]["init_large_vs_small_banner"]
    if "peer" in stdio["call_s"]:
        figures["init_vs_peer"] = _ratio(stdio["init_s"]["replay"], stdio["init_s"]["peer"])
        figures["stdio_call_vs_peer"] = _ratio(stdio["call_s"]["replay"], stdio["call_s"]["peer"])
    fast = data.get("fast_json") or {}
    if fast.get("fast_s") is not None:
        per = 100_000 / fast["events"]
        figures["load_100k_events_s"] = fast["fast_s"] * per
        figures["load_100k_events_stdlib_s"] = fast["stdlib_s"] * per
        figures["load_fast_vs_stdlib"] = fast["fast_vs_stdlib"]
    counted = data.get("instructions")
    if counted:
        figures["startup_instructions_vs_import_anyio"] = counted["startup_vs_import_anyio"]
        figures["startup_instructions_vs_stack_floor"] = counted["startup_vs_stack_floor"]
        figures["call_instructions_vs_floor"] = counted["call_vs_floor"]
        figures["startup_instructions_M"] = counted["startup"]["replay"] / 1e6
        figures["call_instructions_k"] = counted["per_call"]["replay"] / 1e3
    probed = data.get("record_probes")
    if probed:
        figures["record_probes_vs_live"] = probed["record_vs_live"]
        figures["record_probes_off_vs_live"] = probed["record_off_vs_live"]
    ratios = [c["ratio"]["median"] for c in data["sse"]["cases"] if "ratio" in c]
    if ratios:
        figures["sse_vs_httpx_sse"] = min(ratios)
    return figures


def check_targets(figures: dict[str, float]) -> list[dict[str, Any]]:
    rows = []
    for key, op, limit, text in TARGETS:
        value = figures.get(key)
        if value is None:
            held: bool | None = None
        elif op == "<=":
            held = value <= limit
        elif op == "<":
            held = value < limit
        else:
            held = value >= limit
        rows.append(
            {"figure": key, "target": f"{op} {limit:g}", "value": value, "held": held, "what": text}
        )
    return rows


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def report_lines(data: dict[str, Any]) -> list[str]:
    """The report as Markdown tables (what docs/performance.md shows)."""
    stdio = data["stdio"]
    floor_init, floor_call = stdio["init_s"]["floor"], stdio["call_s"]["floor"]
    live_call = stdio["call_s"]["live"]
    lines = ["stdio sessions, raw stdlib client, medians over rounds:", ""]
    lines.append(_row(["target", "init ms", "per call µs", "init / floor", "call / floor"]))
    lines.append(_row(["---"] + ["---:"] * 4))
    for name in stdio["init_s"]:
        init, call = stdio["init_s"][name], stdio["call_s"][name]
        lines.append(
            _row(
                [
                    name,
                    f"{init * 1e3:.1f}",
                    f"{call * 1e6:.0f}",
                    f"{_ratio(init, floor_init):.2f}",
                    f"{_ratio(call, floor_call):.2f}",
                ]
            )
        )
    for name, value in stdio["baselines_s"].items():
        init_ratio = f"{_ratio(value, floor_init):.2f}"
        lines.append(_row([f"baseline `{name}`", f"{value * 1e3:.1f}", "", init_ratio, ""]))
    lines.append("")
    vs_live = _ratio(stdio["call_s"]["replay"], live_call)
    lines.append(f"(replay per call / live per call: {vs_live:.2f})")
    lines += ["", "cassette size, in process (load, prepare, Replayer.receive):", ""]
    lines.append(_row(["calls", "events", "MB", "load ms", "prepare ms", "memory MB", "µs/call"]))
    lines.append(_row(["---:"] * 7))
    rows = [v for v in data["scaling"].values() if isinstance(v, dict)]
    for s in sorted(rows, key=lambda s: s["calls"]):
        lines.append(
            _row(
                [
                    f"{s['calls']:,}",
                    f"{s['events']:,}",
                    f"{s['bytes'] / 1e6:.1f}",
                    f"{s['load_s'] * 1e3:.0f}",
                    f"{s['prepare_s'] * 1e3:.0f}",
                    f"{s['memory_bytes'] / 1e6:.0f}",
                    f"{s['receive_s'] * 1e6:.1f}",
                ]
            )
        )
    if data.get("instructions"):
        from benchmarks import instructions

        lines += ["", "instructions (valgrind --tool=callgrind, PYTHONHASHSEED=0):", ""]
        lines += instructions.report(data["instructions"])
    lines += ["", "targets:", ""]
    lines.append(_row(["figure", "value", "target", "holds", "meaning"]))
    lines.append(_row(["---", "---:", "---", "---", "---"]))
    for row in data["targets"]:
        held = {True: "yes", False: "**no**", None: "not measured"}[row["held"]]
        value = "-" if row["value"] is None else f"{row['value']:.2f}"
        lines.append(_row([row["figure"], value, row["target"], held, row["what"]]))
    lines += ["", "other figures:", ""]
    lines.append(_row(["figure", "value"]))
    lines.append(_row(["---", "---:"]))
    lines += [_row([key, f"{value:.3f}"]) for key, value in data["figures"].items()]
    lines.append("")
    lines += [f"note: {note}" for note in data["notes"]]
    return lines


def write_svg(data: dict[str, Any], path: Path) -> None:
    """Per-call cost and start-up against cassette size, as a dependency-free SVG.

    Ours over stdio at each measured cassette size, the live server and the peer beside
    it (each at the size it served; the live server has no cassette, so it is a line).
    """
    stdio = data["stdio"]
    sizes = stdio["cassette_calls"]
    panels = [
        ("per-call round trip over stdio (µs)", "call_s", 1e6),
        ("start-up to initialize (ms)", "init_s", 1e3),
    ]
    colors = {"replay": "#1f77b4", "replay-large": "#1f77b4", "peer": "#d62728"}
    width, height, pad = 360, 260, 50
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * width}" height="{height}" '
        'font-family="sans-serif" font-size="11">'
    ]
    for index, (title, key, scale) in enumerate(panels):
        x0 = index * width
        values = {n: stdio[key][n] * scale for n in sizes if n in colors}  # not the banner's
        live = stdio[key]["live"] * scale
        floor = stdio[key]["floor"] * scale
        top = max([*values.values(), live, floor]) * 1.15
        lo, hi = math.log10(100), math.log10(100_000)

        def px(calls: float, lo: float = lo, hi: float = hi, x0: int = x0) -> float:
            return x0 + pad + (math.log10(calls) - lo) / (hi - lo) * (width - 1.5 * pad)

        def py(value: float, top: float = top) -> float:
            return height - pad - value / top * (height - 1.6 * pad)

        parts.append(f'<text x="{x0 + pad}" y="18" font-weight="bold">{title}</text>')
        parts.append(
            f'<line x1="{px(100)}" y1="{py(0)}" x2="{px(100_000)}" y2="{py(0)}" stroke="black"/>'
        )
        parts.append(
            f'<line x1="{px(100)}" y1="{py(0)}" x2="{px(100)}" y2="{py(top)}" stroke="black"/>'
        )
        for calls in (100, 1000, 10_000, 100_000):
            parts.append(
                f'<text x="{px(calls)}" y="{py(0) + 14}" text-anchor="middle">{calls:,}</text>'
            )
        parts.append(
            f'<text x="{px(3000)}" y="{height - 8}" text-anchor="middle">'
            "recorded calls in the cassette</text>"
        )
        for tick in (0.25, 0.5, 0.75, 1.0):
            value = top * tick
            parts.append(
                f'<text x="{x0 + pad - 4}" y="{py(value) + 4}" text-anchor="end">{value:.0f}</text>'
            )
        for label, value, dash in (("live server", live, "6,3"), ("floor", floor, "2,3")):
            parts.append(
                f'<line x1="{px(100)}" y1="{py(value)}" x2="{px(100_000)}" y2="{py(value)}" '
                f'stroke="#555" stroke-dasharray="{dash}"/>'
            )
            parts.append(
                f'<text x="{px(100_000)}" y="{py(value) - 3}" text-anchor="end" '
                f'fill="#555">{label}</text>'
            )
        ours = sorted((sizes[n], values[n]) for n in values if n != "peer")
        if len(ours) > 1:
            points = " ".join(f"{px(c):.1f},{py(v):.1f}" for c, v in ours)
            parts.append(f'<polyline points="{points}" fill="none" stroke="{colors["replay"]}"/>')
        for name, value in values.items():
            label = "peer" if name == "peer" else "cassette-mcp"
            parts.append(
                f'<circle cx="{px(sizes[name]):.1f}" cy="{py(value):.1f}" r="4" '
                f'fill="{colors[name]}"/>'
            )
            # a point in the right half is labelled on its left, so the text stays inside
            right = sizes[name] > 3000
            parts.append(
                f'<text x="{px(sizes[name]) + (-6 if right else 6):.1f}" '
                f'y="{py(value) - 6:.1f}" text-anchor="{"end" if right else "start"}" '
                f'fill="{colors[name]}">{label} {value:.0f}</text>'
            )
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n")


#: The pyproject.toml of a project that tests with cassette-mcp and has no
#: ``[tool.cassette]``: what a replay finds above a user's test run.
USER_PYPROJECT = """\
[project]
name = "app"
version = "0.1.0"
dependencies = ["anyio>=4"]

[dependency-groups]
test = ["pytest>=8", "cassette-mcp[http]>=0.2"]

[tool.ruff]
line-length = 100
"""


def _user_project(folder: Path) -> Path:
    """``folder`` made a user's project, where every process of the suite runs: a replay reads
    the nearest pyproject.toml, and this repository's own is cassette-mcp's (its script
    entry ``cassette = ...`` makes a replay parse it), which no user's project is."""
    folder.mkdir()
    (folder / "pyproject.toml").write_text(USER_PYPROJECT)
    return folder


def _measure_all(
    args: argparse.Namespace,
    tmp: Path,
    peer: list[str] | None,
    sizes: list[int],
    data: dict[str, Any],
) -> None:
    """Every measurement, into ``data``."""
    notes = data["notes"]
    _note("building synthetic cassettes ...")
    data["scaling"] = measure_scaling(sizes, args.sample, tmp)
    # The stdio session on a large cassette: 30,000 calls (a 100,000-call one spends
    # ten seconds loading per session, which the in-process figures already cover).
    big = None if args.quick else tmp / f"synthetic-{LARGE_STDIO_CALLS}.jsonl"
    largest = max(sizes)
    data["fast_json"] = measure_fast_json(tmp / f"synthetic-{largest}.jsonl", 3)
    data["recorder_work"] = measure_recorder_work(200, max(3, args.rounds), tmp)
    data["inprocess"] = measure_inprocess(tmp / "synthetic-300.jsonl", 300, args.rounds)
    data["stdio"] = measure_stdio(args, tmp, peer, big, notes)
    data["instructions"] = measure_instructions(tmp / "everything.jsonl", notes, args.quick)
    _note("a plain recording with its probes ...")
    data["record_probes"] = _record_probes(args, tmp, notes)
    _note("HTTP ...")
    data["http"] = measure_http(args.http_requests, max(3, args.rounds))
    _note("SSE ...")
    data["sse"] = measure_sse(args.sse_mib, args.sse_rounds)


def _record_probes(args: argparse.Namespace, tmp: Path, notes: list[str]) -> dict[str, Any] | None:
    """``benchmarks/record_probes.py``'s figure; ``None`` without the Python SDK to drive it."""
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        notes.append("the mcp SDK is not installed: record_probes_vs_live not measured")
        return None
    from benchmarks import record_probes

    folder = tmp / "record-probes"
    folder.mkdir()
    return record_probes.measure(max(2, args.rounds), folder)


def _compile_package() -> None:
    """Every module of ours compiled before anything is measured, as an installed package
    is: with ``PYTHONDONTWRITEBYTECODE`` set (or a source newer than its cache), each
    process the suite starts would compile the changed modules again, and count it."""
    import compileall

    for folder in ("cassette", "cassette_mcp"):
        compileall.compile_dir(ROOT / folder, quiet=1)


def _run(args: argparse.Namespace) -> dict[str, Any]:
    _compile_package()
    notes: list[str] = []
    data: dict[str, Any] = {"notes": notes}
    peer = None
    if args.with_peer:
        peer, text = peer_command()
        notes.append(text)
    else:
        notes.append("peer not measured (pass --with-peer)")
    sizes = [300, 3000, 30_000, 100_000] if not args.quick else [300, 10_000]
    with tempfile.TemporaryDirectory(prefix="cassette-bench-") as tmp_name:
        tmp = Path(tmp_name)
        with contextlib.chdir(_user_project(tmp / "project")):
            _measure_all(args, tmp, peer, sizes, data)
    if data["sse"]["httpx_sse"] is None:
        notes.append("httpx-sse not installed: SSE ratio not measured")
    if data["fast_json"]["fast_s"] is None:
        notes.append("orjson not installed: load_100k_events_s is the standard library's path")
    data["figures"] = build_figures(data)
    data["targets"] = check_targets(data["figures"])
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n\n")[0], allow_abbrev=False
    )
    parser.add_argument("--quick", action="store_true", help="a run of under 30 s, fewer rounds")
    parser.add_argument(
        "--with-peer", action="store_true", help="install and measure mcp-cassette 0.4.0"
    )
    parser.add_argument("--rounds", type=int, default=None, help="measured stdio rounds")
    parser.add_argument("--json", type=Path, default=RESULTS / "suite.json")
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args(argv)
    quick = args.quick
    args.rounds = args.rounds or (2 if quick else 5)
    args.calls = 100 if quick else 200
    args.sample = 2000
    args.http_requests = 200 if quick else 500
    args.sse_mib = 1.0 if quick else 4.0
    args.sse_rounds = 3 if quick else 5
    if not sr.SERVER_EVERYTHING.is_file():
        parser.error(f"server-everything not installed at {sr.SERVER_EVERYTHING}")
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    started = time.perf_counter()
    load_before = os.getloadavg()
    try:
        data = _run(args)
    except sr.BenchError as exc:
        print(f"benchmarks: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        sr._kill_all_children()
    data["machine"] = {
        "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "python": sys.version,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg(),
        "seconds": time.perf_counter() - started,
        "quick": quick,
        "rounds": args.rounds,
    }
    text = "\n".join(report_lines(data)) + "\n"
    print(text)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(data, indent=1) + "\n")
    args.json.with_suffix(".md").write_text(text)
    write_svg(data, args.json.with_suffix(".svg"))
    _note(f"wrote {args.json} ({data['machine']['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
