"""Time and peak memory of every command on every bad input of the suite's catalogue.

    .venv/bin/python benchmarks/bad_inputs.py [--json PATH] [--only SUBSTRING]

Runs each case of ``tests/helpers/catalogue.py`` (the cases
``tests/e2e/test_bad_input_catalogue.py`` checks for one line and a documented exit code) as a
process, and reads its wall time and peak resident memory (``ru_maxrss`` from ``wait4``). Prints the
slowest and the largest cases, and the largest per kind of input, beside the same figures for
``cassette
--version`` (the floor: an interpreter and the command line, nothing read). A bad input
must cost about what reading nothing costs, whatever its size: the sparse gigabyte is
refused after one line of at most the size limit. Nothing here is asserted by the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.helpers.catalogue import (  # noqa: E402  (the repository root must be on the path first)
    CASSETTES,
    MANIFESTS,
    SCENARIOS,
    Case,
    cassette_cases,
    make_files,
    manifest_cases,
    other_cases,
    scenarios_cases,
)


def measure(argv: list[str], cwd: Path) -> tuple[int, float, int]:
    """Exit code, seconds and peak RSS (KiB) of one run."""
    started = time.monotonic()
    quiet = subprocess.DEVNULL
    proc = subprocess.Popen(argv, cwd=cwd, stdin=quiet, stdout=quiet, stderr=quiet)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, time.monotonic() - started, int(usage.ru_maxrss)


def all_cases(folder: Path, port: int) -> list[tuple[str, Case]]:
    files = make_files(folder)
    out: list[tuple[str, Case]] = []
    for bad in [*CASSETTES, "through-a-file"]:
        out += [(bad, case) for case in cassette_cases(files[bad], folder / "out")]
    for bad in MANIFESTS:
        out += [(bad, case) for case in manifest_cases(files[bad])]
    for bad in SCENARIOS:
        out += [(bad, case) for case in scenarios_cases(files[bad], folder / "out")]
    out += [("option", case) for case in other_cases(folder, port)]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks/results/bad_inputs.json")
    parser.add_argument("--only", default="", help="run only cases whose input or command has this")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        folder = Path(tmp)
        floor = measure([sys.executable, "-m", "cassette", "--version"], folder)
        for bad, case in all_cases(folder, int(taken.getsockname()[1])):
            if args.only and args.only not in bad and args.only not in case.name:
                continue
            code, seconds, kib = measure([sys.executable, "-m", "cassette", *case.argv], folder)
            row = {"input": bad, "command": case.name, "exit": code, "s": seconds, "kib": kib}
            rows.append(row)
    print(f"floor (cassette --version): {floor[1]:.2f} s, {floor[2] / 1024:.1f} MiB")
    print(f"{len(rows)} cases; exit 70 in {sum(r['exit'] == 70 for r in rows)}")
    for key, unit, scale in (("s", "s", 1.0), ("kib", "MiB", 1024.0)):
        worst = sorted(rows, key=lambda r: -r[key])[:8]
        print(f"\nlargest {key}:")
        for r in worst:
            figure = f"{r[key] / scale:8.2f} {unit}"
            print(f"  {r['input']:>22} x {r['command']:<20} {figure}  exit {r['exit']}")
    by_input: dict[str, float] = {}
    for r in rows:
        by_input[r["input"]] = max(by_input.get(r["input"], 0.0), r["kib"] / 1024)
    print("\npeak MiB by input: " + ", ".join(f"{k} {v:.0f}" for k, v in by_input.items()))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    summary = {"floor_s": floor[1], "floor_kib": floor[2], "cases": rows}
    args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
