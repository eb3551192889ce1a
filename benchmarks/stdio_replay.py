"""Start-up and per-call cost of ``cassette replay`` over stdio, against same-run baselines.

Usage::

    .venv/bin/python benchmarks/stdio_replay.py [--rounds N] [--calls M] [--json PATH]

Three MCP servers are driven over stdio by the same raw, stdlib-only client (JSON lines
over subprocess pipes, ids matched, non-JSON lines skipped):

* ``floor``: a minimal Python responder using only ``json`` and ``sys`` that answers from
  canned data. It is the cheapest a Python stdio server can be on this machine.
* ``live``: the pinned real server, ``@modelcontextprotocol/server-everything`` on Node.
* ``replay``: ``python -m cassette replay TAPE -q`` serving a cassette of ``live`` that
  this script records first (through ``python -m cassette record``).

For each, "init" is the wall time from just before ``Popen`` to the initialize response
being read, and "call" is the mean round trip of M ``tools/call echo`` requests, each reply
checked. Rounds interleave the targets (floor, live, replay, floor, live, replay, ...) so
that load drift on a shared machine hits all of them alike; medians over rounds are
reported with min-max. Interpreter baselines are interleaved too, spawn to exit:
``python -c pass``, ``python -c "import asyncio, anyio"`` and an ``anyio.run`` of an empty
coroutine (anyio imports lazily, so the second loads little of anyio itself).

Absolute figures mean little on a shared, noisy machine: read the ratios against the
baselines measured in the same run. Nothing here is asserted by the test suite.

Only the standard library is used. Every read has a deadline (``select``), and every child
is started in its own session and killed, with its process group, on the way out.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVER_EVERYTHING = (
    ROOT / "tests/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)
NODE = "/usr/bin/node"
PROTOCOL_VERSION = "2025-11-25"
DEFAULT_JSON = ROOT / "benchmarks/results/stdio_replay.json"

# The floor server. It imports only json and sys and answers each request line at once.
FLOOR_SERVER = """\
import json
import sys

INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {"listChanged": True}},
    "serverInfo": {"name": "floor", "version": "1.0.0"},
}


def main():
    stdin = sys.stdin
    stdout = sys.stdout
    while True:
        line = stdin.readline()
        if not line:
            return
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
            continue  # notifications and stray responses get no answer
        method = msg["method"]
        if method == "initialize":
            result = INIT
        elif method == "tools/call" and msg.get("params", {}).get("name") == "echo":
            message = msg["params"].get("arguments", {}).get("message", "")
            result = {"content": [{"type": "text", "text": "Echo: " + message}]}
        else:
            result = {}
        stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\\n")
        stdout.flush()


main()
"""


class BenchError(RuntimeError):
    """A target misbehaved: a timeout, a wrong reply, an early exit."""


_CHILDREN: list[subprocess.Popen[bytes]] = []


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill a child and everything it started (each child leads its own session)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    else:
        # The leader is gone but grandchildren (the recorder's node) may remain.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def _kill_all_children() -> None:
    while _CHILDREN:
        _kill_group(_CHILDREN.pop())


class RawClient:
    """A stdlib JSON-lines client on a child's pipes, every read under a deadline."""

    def __init__(
        self, name: str, argv: list[str], stderr_path: Path, env: dict[str, str] | None = None
    ) -> None:
        self.name = name
        self.argv = argv
        self.stderr_path = stderr_path
        self._stderr = stderr_path.open("wb")
        self._buffer = b""
        self._lines: list[bytes] = []
        self.skipped_lines = 0
        self.notifications = 0
        self.server_requests = 0
        self.t_spawn = time.perf_counter()  # just before Popen, as "init" is defined
        self.proc: subprocess.Popen[bytes] = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            bufsize=0,
            start_new_session=True,  # so the whole group (node under the recorder) dies
            env=env,
        )
        _CHILDREN.append(self.proc)
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self._in_fd = self.proc.stdin.fileno()
        self._out_fd = self.proc.stdout.fileno()

    # -- wire ---------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        view = memoryview(data)
        try:
            while view:
                written = os.write(self._in_fd, view)
                view = view[written:]
        except BrokenPipeError as exc:
            raise BenchError(f"{self.name}: server closed its stdin{self._stderr_tail()}") from exc

    def _readline(self, deadline: float) -> bytes:
        """The next stdout line; a blocking readline, but one that gives up at deadline."""
        while not self._lines:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise BenchError(f"{self.name}: no reply before the deadline{self._stderr_tail()}")
            ready, _, _ = select.select([self._out_fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self._out_fd, 65536)
            if not chunk:
                raise BenchError(
                    f"{self.name}: server closed stdout (exit {self.proc.poll()})"
                    f"{self._stderr_tail()}"
                )
            parts = (self._buffer + chunk).split(b"\n")
            self._buffer = parts.pop()
            self._lines = parts
        return self._lines.pop(0)

    def response(self, request_id: int, deadline: float) -> dict[str, Any]:
        """Read until the response to request_id, skipping noise and notifications."""
        while True:
            line = self._readline(deadline)
            try:
                msg = json.loads(line)
            except ValueError:
                self.skipped_lines += 1
                continue
            if not isinstance(msg, dict):
                self.skipped_lines += 1
                continue
            if "method" in msg:
                if "id" in msg:  # a server->client request: answer it so nothing stalls
                    self.server_requests += 1
                    self.send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
                else:
                    self.notifications += 1
                continue
            if msg.get("id") == request_id:
                if "error" in msg:
                    raise BenchError(f"{self.name}: request {request_id} failed: {msg['error']}")
                return msg
            self.skipped_lines += 1

    # -- MCP ----------------------------------------------------------------------------

    def initialize(self, timeout: float) -> float:
        """Send initialize at once; return seconds from spawn to its response."""
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "stdio-replay-bench", "version": "1.0.0"},
                },
            }
        )
        msg = self.response(0, self.t_spawn + timeout)
        elapsed = time.perf_counter() - self.t_spawn
        result = msg.get("result")
        if not isinstance(result, dict) or "protocolVersion" not in result:
            raise BenchError(f"{self.name}: bad initialize result: {msg}")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return elapsed

    def echo_calls(self, count: int, timeout: float) -> list[float]:
        """Make count echo calls (ids 1..count); return each round trip in seconds."""
        times: list[float] = []
        perf = time.perf_counter
        for i in range(count):
            request_id = i + 1
            message = f"hello {i}"
            request = {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": message}},
            }
            start = perf()
            self.send(request)
            msg = self.response(request_id, start + timeout)
            times.append(perf() - start)
            try:
                text = msg["result"]["content"][0]["text"]
            except (KeyError, IndexError, TypeError):
                text = None
            if text != f"Echo: {message}":
                raise BenchError(f"{self.name}: call {request_id} got {msg}")
        return times

    # -- ending -------------------------------------------------------------------------

    def finish(self, timeout: float) -> int | None:
        """Close stdin and wait for a clean exit; kill the group if it does not come."""
        with contextlib.suppress(OSError):
            self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            code: int | None = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        _kill_group(self.proc)  # stragglers in the group, or the child itself on timeout
        with contextlib.suppress(ValueError):
            _CHILDREN.remove(self.proc)
        with contextlib.suppress(OSError):
            self.proc.stdout.close()  # type: ignore[union-attr]
        self._stderr.close()
        return code

    def _stderr_tail(self) -> str:
        with contextlib.suppress(OSError):
            self._stderr.flush()
            tail = self.stderr_path.read_bytes()[-2000:].decode(errors="replace").strip()
            if tail:
                return f"\n--- {self.name} stderr (tail) ---\n{tail}"
        return ""


def run_session(
    name: str,
    argv: list[str],
    calls: int,
    stderr_path: Path,
    timeout: float,
    *,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One full client session: spawn, initialize, M echo calls, clean exit."""
    client = RawClient(name, argv, stderr_path, env)
    try:
        init = client.initialize(timeout)
        times = client.echo_calls(calls, timeout)
    except BaseException:
        client.finish(0)  # no grace on the way out of an error or an interrupt
        raise
    code = client.finish(timeout)
    if code is None:
        raise BenchError(f"{name}: did not exit within {timeout}s of its stdin closing")
    if code != 0:
        raise BenchError(f"{name}: exit code {code}{client._stderr_tail()}")
    return {
        "init_s": init,
        "call_mean_s": statistics.fmean(times) if times else float("nan"),
        "call_median_s": statistics.median(times) if times else float("nan"),
        "call_times_s": times,
        "exit_code": code,
        "skipped_lines": client.skipped_lines,
        "notifications": client.notifications,
        "server_requests": client.server_requests,
    }


def _wait_exit(proc: subprocess.Popen[bytes], deadline: float) -> None:
    """Block until proc exits, or raise at deadline.

    Not ``Popen.wait(timeout=...)``: that polls with sleeps of up to 50 ms, which would be
    a large part of what is measured. A pidfd becomes readable the moment the child exits.
    """
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:  # not Linux: fall back to polling, coarser but bounded
        try:
            proc.wait(timeout=max(0.0, deadline - time.perf_counter()))
        except subprocess.TimeoutExpired as exc:
            raise BenchError(f"{proc.args} did not finish before the deadline") from exc
        return
    fd = pidfd_open(proc.pid)
    try:
        remaining = deadline - time.perf_counter()
        ready, _, _ = select.select([fd], [], [], max(0.0, remaining))
        if not ready:
            raise BenchError(f"{proc.args} did not finish before the deadline")
    finally:
        os.close(fd)


def time_command(argv: list[str], timeout: float) -> float:
    """Wall time from spawn to exit of a short command."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, start_new_session=True)
    _CHILDREN.append(proc)
    try:
        _wait_exit(proc, start + timeout)
        elapsed = time.perf_counter() - start
        code = proc.wait()
    finally:
        _kill_group(proc)
        with contextlib.suppress(ValueError):
            _CHILDREN.remove(proc)
    if code != 0:
        raise BenchError(f"{argv} exited {code}")
    return elapsed


def summarize(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _fmt_range(scale: float, stats: dict[str, float], digits: int) -> str:
    return (
        f"{stats['median'] * scale:.{digits}f} "
        f"({stats['min'] * scale:.{digits}f}-{stats['max'] * scale:.{digits}f})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds (default 5)")
    parser.add_argument("--calls", type=int, default=200, help="echo calls per session")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write results")
    parser.add_argument(
        "--warmup", type=int, default=1, help="unreported warm-up rounds (default 1)"
    )
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per read or exit")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.calls < 1 or args.warmup < 0:
        parser.error("--rounds and --calls must be >= 1, --warmup >= 0")
    if not SERVER_EVERYTHING.is_file():
        parser.error(f"server-everything not installed at {SERVER_EVERYTHING}")

    # SIGTERM should run the finally clauses too, so no child outlives us.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        return _run(args)
    except BenchError as exc:
        print(f"stdio_replay: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("stdio_replay: interrupted", file=sys.stderr)
        return 130
    finally:
        _kill_all_children()


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def _run(args: argparse.Namespace) -> int:
    load_before = os.getloadavg()
    data = _measure(args)
    data["loadavg"] = (load_before, os.getloadavg())
    summary = _summarize(args, data)
    _print_table(args, data, summary)
    sys.stdout.flush()
    _write_json(args, data, summary)
    return 0


def _measure(args: argparse.Namespace) -> dict[str, Any]:
    """Record the cassette, then run the interleaved rounds; return everything raw."""
    python = sys.executable
    live_argv = [NODE, str(SERVER_EVERYTHING), "stdio"]
    with tempfile.TemporaryDirectory(prefix="stdio-replay-bench-") as tmp_name:
        tmp = Path(tmp_name)
        floor_path = tmp / "floor_server.py"
        floor_path.write_text(FLOOR_SERVER)
        tape = tmp / "everything.jsonl"

        # Record the cassette through the real proxy, with exactly the calls replayed later.
        print(f"recording {args.calls} echo calls of server-everything ...", file=sys.stderr)
        record = run_session(
            "record",
            [python, "-m", "cassette", "record", "-o", str(tape), "--", *live_argv],
            args.calls,
            tmp / "record.stderr",
            args.timeout,
        )
        if not tape.is_file():
            raise BenchError("record exited cleanly but wrote no cassette")

        # The floor runs under the same interpreter as replay, started the normal way (no
        # -S, -I or -X flags): both pay the same interpreter and site start-up, so the
        # ratio isolates what cassette adds on top of "a Python process answering".
        targets: dict[str, list[str]] = {
            "floor": [python, str(floor_path)],
            "live": live_argv,
            "replay": [python, "-m", "cassette", "replay", str(tape), "-q"],
        }
        baselines: dict[str, list[str]] = {
            "python -c pass": [python, "-c", "pass"],
            "import asyncio, anyio": [python, "-c", "import asyncio, anyio"],
            # anyio imports its submodules lazily, so the line above loads little of it;
            # this one also starts (and ends) an event loop on the asyncio backend.
            "anyio.run(noop)": [python, "-c", "import anyio\nasync def f(): pass\nanyio.run(f)"],
        }
        raw: dict[str, list[dict[str, Any]]] = {name: [] for name in targets}
        base_raw: dict[str, list[float]] = {name: [] for name in baselines}

        for round_no in range(args.warmup + args.rounds):
            warm = round_no < args.warmup
            label = "warm-up" if warm else f"round {round_no - args.warmup + 1}/{args.rounds}"
            print(f"{label} ...", file=sys.stderr)
            for name, argv in targets.items():
                session = run_session(name, argv, args.calls, tmp / f"{name}.stderr", args.timeout)
                if not warm:
                    raw[name].append(session)
            for name, argv in baselines.items():
                elapsed = time_command(argv, args.timeout)
                if not warm:
                    base_raw[name].append(elapsed)
        cassette_info = {
            "bytes": tape.stat().st_size,
            "lines": len(tape.read_bytes().splitlines()),
        }
    return {
        "targets": targets,
        "baselines": baselines,
        "raw": raw,
        "base_raw": base_raw,
        "record": record,
        "cassette": cassette_info,
    }


def _summarize(args: argparse.Namespace, data: dict[str, Any]) -> dict[str, Any]:
    """Medians over rounds (a round's "call" is the mean of its M calls) and ratios."""
    raw = data["raw"]
    init = {n: summarize([s["init_s"] for s in raw[n]]) for n in data["targets"]}
    call = {n: summarize([s["call_mean_s"] for s in raw[n]]) for n in data["targets"]}
    base = {n: summarize(v) for n, v in data["base_raw"].items()}
    ratios = {
        n: {
            "init_vs_floor": _ratio(init[n]["median"], init["floor"]["median"]),
            "call_vs_floor": _ratio(call[n]["median"], call["floor"]["median"]),
            "init_vs_live": _ratio(init[n]["median"], init["live"]["median"]),
            "call_vs_live": _ratio(call[n]["median"], call["live"]["median"]),
        }
        for n in data["targets"]
    }
    # Paired per-round ratios too: each compares runs taken seconds apart.
    paired = {
        n: {
            f"{kind}_vs_{ref}": statistics.median(
                _ratio(raw[n][r][key], raw[ref][r][key]) for r in range(args.rounds)
            )
            for kind, key in (("init", "init_s"), ("call", "call_mean_s"))
            for ref in ("floor", "live")
        }
        for n in data["targets"]
    }
    replay_init = init["replay"]["median"]
    replay_vs_baselines = {
        name: _ratio(replay_init, stats["median"]) for name, stats in base.items()
    }
    return {
        "init_s": init,
        "call_mean_s": call,
        "baselines_s": base,
        "ratios": ratios,
        "paired_round_ratios": paired,
        "replay_init_vs_baselines": replay_vs_baselines,
    }


def _print_table(args: argparse.Namespace, data: dict[str, Any], summary: dict[str, Any]) -> None:
    init, call, base = summary["init_s"], summary["call_mean_s"], summary["baselines_s"]
    header = (
        f"{'target':<8} | {'init ms (min-max)':<22} | {'per-call µs (min-max)':<24} | "
        f"{'init/floor':>10} | {'call/floor':>10} | {'vs live init/call':>17}"
    )
    print(
        f"\nstdio MCP: {args.rounds} rounds (+{args.warmup} warm-up), {args.calls} echo "
        f"calls per session; medians over rounds\n"
    )
    print(header)
    print("-" * len(header))
    for n in data["targets"]:
        r = summary["ratios"][n]
        vs_live = f"{r['init_vs_live']:.2f} / {r['call_vs_live']:.2f}"
        print(
            f"{n:<8} | {_fmt_range(1e3, init[n], 1):<22} | {_fmt_range(1e6, call[n], 0):<24} | "
            f"{r['init_vs_floor']:>10.2f} | {r['call_vs_floor']:>10.2f} | {vs_live:>17}"
        )
    print()
    for n in data["baselines"]:
        print(f"baseline {n!r:<24}: {_fmt_range(1e3, base[n], 1)} ms (spawn to exit)")
    replay_init = init["replay"]["median"]
    anyio_base = base["import asyncio, anyio"]["median"]
    others = "; ".join(
        f"/ {name!r} = {value:.2f}"
        for name, value in summary["replay_init_vs_baselines"].items()
        if name != "import asyncio, anyio"
    )
    print(
        f"replay init / 'import asyncio, anyio' = "
        f"{summary['replay_init_vs_baselines']['import asyncio, anyio']:.2f}  "
        f"(difference {(replay_init - anyio_base) * 1e3:.1f} ms; {others})"
    )
    print(
        "ratios are of medians; paired per-round medians are in the JSON. Figures are "
        "only meaningful as ratios within this run."
    )


def _write_json(args: argparse.Namespace, data: dict[str, Any], summary: dict[str, Any]) -> None:
    node = subprocess.run(
        [NODE, "--version"], check=False, capture_output=True, text=True, timeout=args.timeout
    )
    result = {
        "benchmark": "stdio_replay",
        "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "config": {
            "rounds": args.rounds,
            "warmup": args.warmup,
            "calls": args.calls,
            "timeout_s": args.timeout,
            "protocol_version": PROTOCOL_VERSION,
            "targets": data["targets"],
            "baselines": data["baselines"],
        },
        "machine": {
            "python": sys.version,
            "executable": sys.executable,
            "node": node.stdout.strip(),
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "loadavg_before": data["loadavg"][0],
            "loadavg_after": data["loadavg"][1],
        },
        "cassette": data["cassette"],
        "record_session": {k: v for k, v in data["record"].items() if k != "call_times_s"},
        "medians": {
            "init_s": summary["init_s"],
            "call_mean_s": summary["call_mean_s"],
            "baselines_s": summary["baselines_s"],
        },
        "ratios": summary["ratios"],
        "paired_round_ratios": summary["paired_round_ratios"],
        "replay_init_vs_baselines": summary["replay_init_vs_baselines"],
        "raw": {"sessions": data["raw"], "baselines_s": data["base_raw"]},
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.json}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
