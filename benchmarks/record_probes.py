"""A plain recording of server-everything, its probes included, against the live session.

Usage::

    .venv/bin/python benchmarks/record_probes.py [--rounds 5] [--json PATH]

The session is the plain recording's: the Python SDK 2 client (``mcp.Client``, declaring
nothing) lists the tools, as the SDKs and the agent frameworks connect, and ends. It is
timed from the client process's start to its end (it waits for its server to exit, as a
test does), against the pinned server-everything over stdio three ways, interleaved in
every round:

* ``live``: the server itself;
* ``record``: ``cassette record`` in front of it, with its probes (``cassette.runtime.probe``:
  the server started again per capability set, beside the session; the recording ends
  once they are written);
* ``record-off``: ``cassette record --no-probe``, for what the probes add.

Figure: ``record / live`` paired by round (the median of each round's ratio), with its
limit of 1.5; ``record-off / live`` beside it. Read the ratio, not the seconds (a shared,
noisy machine). Nothing here is asserted by the test suite.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import stdio_replay as sr

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_JSON = ROOT / "benchmarks/results/record_probes.json"
#: the most a recording with its probes may take, against the live session
LIMIT: Final = 1.5

CLIENT = r"""
import sys, anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

async def main():
    command = sys.argv[1:]
    async with Client(StdioServerParameters(command=command[0], args=command[1:])) as client:
        await client.list_tools()

anyio.run(main)
"""


def _session(server: list[str]) -> float:
    """Seconds the client's whole session takes with ``server`` as its server command."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, *server],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
    )
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise sr.BenchError(f"the client failed: {done.stderr.decode(errors='replace')[-300:]}")
    return took


def measure(rounds: int, tmp: Path) -> dict[str, Any]:
    """Each way's seconds per round (one warm-up round first, not counted), and the
    ratios paired by round."""
    live = [sr.NODE, str(sr.SERVER_EVERYTHING), "stdio"]
    tape = tmp / "probed.jsonl"
    record = [sys.executable, "-m", "cassette", "record", "-o", str(tape), "--overwrite"]
    ways = {
        "live": live,
        "record": [*record, "--", *live],
        "record-off": [*record, "--no-probe", "--", *live],
    }
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    for index in range(rounds + 1):
        for name, server in ways.items():
            tape.unlink(missing_ok=True)  # a fresh recording every time, never a merge
            took = _session(server)
            if index:
                seconds[name].append(took)
    paired = [r / lv for r, lv in zip(seconds["record"], seconds["live"], strict=True)]
    off = [r / lv for r, lv in zip(seconds["record-off"], seconds["live"], strict=True)]
    return {
        "seconds": {name: statistics.median(values) for name, values in seconds.items()},
        "rounds": seconds,
        "record_vs_live": statistics.median(paired),
        "record_off_vs_live": statistics.median(off),
        "limit": LIMIT,
    }


def report(result: dict[str, Any]) -> list[str]:
    seconds = result["seconds"]
    ratio = result["record_vs_live"]
    held = "holds" if ratio <= LIMIT else "does NOT hold"
    return [
        "a plain recording of server-everything (SDK 2 client listing tools), medians:",
        *(f"  {name:<11} {value:.3f} s" for name, value in seconds.items()),
        f"  record / live {ratio:.2f} (limit {LIMIT}: {held}); "
        f"record-off / live {result['record_off_vs_live']:.2f}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    if not sr.SERVER_EVERYTHING.is_file():
        parser.error(f"server-everything not installed at {sr.SERVER_EVERYTHING}")
    with tempfile.TemporaryDirectory(prefix="cassette-bench-probes-") as name:
        result = measure(args.rounds, Path(name))
    print("\n".join(report(result)))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
