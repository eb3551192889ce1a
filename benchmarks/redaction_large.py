"""What redaction costs when recording a large response, against same-run baselines.

Usage::

    .venv/bin/python benchmarks/redaction_large.py [--mib 38] [--rounds 5] [--json PATH]

A stdlib-only MCP server answers one ``tools/call`` with a text of ``--mib`` MiB (36.2 MiB
is 38 MB: the size issue 16 measured) made of realistic lines: prose, log lines full of
``key=value`` pairs, JSON records, URLs, and a handful of planted fake credentials, so the
detector has matches to make and triggers to reject. A stdlib client (raw JSON lines over
pipes, reads bounded by ``select`` deadlines) times the call from the request written to
the response read and parsed, through three targets, interleaved in every round:

* ``live``: the server itself;
* ``record-off``: ``python -m cassette record --no-redact`` in front of it;
* ``record``: ``python -m cassette record`` (redaction on, the default).

The figure the issue sets a limit on is ``record / record-off`` (at most 1.5): what
redaction adds to a recording of the same response. ``record / live`` is reported too.
Medians over rounds; read the ratios, not the seconds (a shared, noisy machine). Every
cassette written is checked: the planted values must be gone (or, with ``--no-redact``,
present). Nothing here is asserted by the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import stdio_replay as sr

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_JSON = ROOT / "benchmarks/results/redaction_large.json"

# The text, from a fixed seed: the server builds it once at start-up (before any timing),
# and benchmarks/redaction_instructions.py builds the same text in process.
TEXT_MAKER = r"""
import json, random
WORDS = ("the a server client request response cache value field record user session "
         "error warning retry timeout window token budget model prompt tool result "
         "stream buffer index page cursor item list read write open close").split()
def make_text(mib, planted):
    rng = random.Random(38)
    def prose():
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "."
    def log():
        return (f"2026-01-0{rng.randint(1, 9)}T12:{rng.randint(10, 59)}:00Z INFO "
                f"request id={rng.randint(1000, 99999)} status={rng.choice([200, 404, 500])} "
                f"path=/api/v1/items/{rng.randint(1, 999)} duration_ms={rng.randint(1, 900)}")
    def record():
        return json.dumps({"name": rng.choice(WORDS), "count": rng.randint(0, 99),
                           "url": f"https://example.com/{rng.choice(WORDS)}?page=2",
                           "tags": rng.sample(WORDS, 3)})
    lines, size, target = [], 0, int(mib * 1024 * 1024)
    while size < target:
        line = rng.choice((prose, prose, prose, log, log, record))()
        lines.append(line)
        size += len(line) + 1
    for i, secret in enumerate(planted):
        lines[(i + 1) * len(lines) // (len(planted) + 1)] += f" api_key={secret}"
    return "\n".join(lines)
"""

SERVER = (
    TEXT_MAKER
    + r"""
import sys
TEXT = make_text(float(sys.argv[1]), sys.argv[2:])
for raw in sys.stdin:
    msg = json.loads(raw)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "large", "version": "1"}}
    else:
        result = {"content": [{"type": "text", "text": TEXT}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""
)

# Fake credentials, assembled so that no scanner flags this file.
PLANTED = ["gh" + "p_" + "Bench0123456789abcdefghijklmnopqrstu", "sk" + "_live_" + "B" * 24]


class LineClient:
    """A JSON-lines client whose reads of a very long line stay linear (chunks joined once)."""

    def __init__(self, argv: list[str], stderr: Path) -> None:
        self._err = stderr.open("wb")
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            bufsize=0,
            start_new_session=True,
        )
        sr._CHILDREN.append(self.proc)
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self._in, self._out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        self._rest = b""

    def call(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        os.write(self._in, (json.dumps(message) + "\n").encode())
        deadline = time.perf_counter() + timeout
        chunks = [self._rest]
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise sr.BenchError(f"no reply in {timeout} s from {self.proc.args}")
            ready, _, _ = select.select([self._out], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._out, 1 << 20)
            if not chunk:
                raise sr.BenchError(f"{self.proc.args} closed its stdout")
            chunks.append(chunk)
            if b"\n" in chunk:
                data = b"".join(chunks)
                line, _, self._rest = data.partition(b"\n")
                reply: dict[str, Any] = json.loads(line)
                return reply

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        finally:
            sr._kill_group(self.proc)
            self._err.close()


def session(argv: list[str], tmp: Path, timeout: float) -> float:
    """Seconds for the large call (request written to response parsed) in one session."""
    client = LineClient(argv, tmp / "stderr.log")
    try:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}}
        init_msg = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
        client.call(
            {**init_msg, "params": {**init, "clientInfo": {"name": "b", "version": "1"}}}, timeout
        )
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        call["params"] = {"name": "large", "arguments": {}}
        start = time.perf_counter()
        reply = client.call(call, timeout)
        elapsed = time.perf_counter() - start
        if len(reply["result"]["content"][0]["text"]) < 1_000_000:
            raise sr.BenchError("the large response was not large")
        return elapsed
    finally:
        client.close()


def measure(args: argparse.Namespace, tmp: Path) -> dict[str, list[float]]:
    server = tmp / "server.py"
    server.write_text(SERVER)
    serve = [sys.executable, str(server), str(args.mib), *PLANTED]
    tape = tmp / "large.jsonl"
    # no probes: they start the server again beside the session, each building its 38 MB text,
    # which is not redaction (record_probes.py measures them)
    record = [sys.executable, "-m", "cassette", "record", "--no-probe", "--overwrite"]
    record += ["-o", str(tape)]
    targets = {
        "live": serve,
        "record-off": [*record, "--no-redact", "--", *serve],
        "record": [*record, "--", *serve],
    }
    times: dict[str, list[float]] = {name: [] for name in targets}
    for round_ in range(args.rounds + 1):  # round 0 warms the caches and is not kept
        for name, argv in targets.items():
            elapsed = session(argv, tmp, args.timeout)
            if name != "live":
                check(tape, redacted=name == "record")
            if round_:
                times[name].append(elapsed)
            print(f"  round {round_} {name:<10} {elapsed:.3f} s", file=sys.stderr, flush=True)
    return times


def check(tape: Path, *, redacted: bool) -> None:
    raw = tape.read_bytes()
    found = [p for p in PLANTED if p.encode() in raw]
    if redacted and found:
        raise sr.BenchError(f"{tape}: planted values left in the cassette: {len(found)}")
    if not redacted and len(found) != len(PLANTED):
        raise sr.BenchError(f"{tape}: --no-redact lost planted values")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--mib", type=float, default=38_000_000 / 2**20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    try:
        with tempfile.TemporaryDirectory(prefix="cassette-redaction-") as name:
            times = measure(args, Path(name))
    except sr.BenchError as exc:
        print(f"redaction_large: error: {exc}", file=sys.stderr)
        return 1
    finally:
        sr._kill_all_children()
    med = {name: statistics.median(values) for name, values in times.items()}
    paired = [r / o for r, o in zip(times["record"], times["record-off"], strict=True)]
    summary = {
        "response_mb": args.mib * 2**20 / 1e6,
        "median_s": med,
        "record_vs_record_off": med["record"] / med["record-off"],
        "record_vs_record_off_paired_median": statistics.median(paired),
        "record_vs_live": med["record"] / med["live"],
        "record_off_vs_live": med["record-off"] / med["live"],
        "limit_record_vs_record_off": 1.5,
    }
    print(f"| {summary['response_mb']:.0f} MB response | median s | vs live | vs record-off |")
    print("|---|---|---|---|")
    for name in ("live", "record-off", "record"):
        print(
            f"| {name} | {med[name]:.3f} | {med[name] / med['live']:.2f}x | "
            f"{med[name] / med['record-off']:.2f}x |"
        )
    verdict = "within" if summary["record_vs_record_off"] <= 1.5 else "OVER"
    print(f"\nredaction adds {summary['record_vs_record_off']:.2f}x to recording ({verdict} 1.5x)")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    data = {"times": times, "summary": summary, "loadavg": [load_before, os.getloadavg()]}
    args.json.write_text(json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
