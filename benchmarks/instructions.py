"""Instruction counts of a stdio replay's start-up and per call, beside the same baselines.

Usage::

    .venv/bin/python benchmarks/instructions.py [--tape PATH] [--calls M] [--json PATH]

Wall-clock time on a shared machine moves with everything else that runs on it; the number
of instructions a process executes does not. ``valgrind --tool=callgrind`` counts them,
and for the same interpreter, the same input and a fixed hash seed (``PYTHONHASHSEED=0``)
the count repeats from run to run. So each change to a hot path can be judged on a figure
that the machine's load cannot move, with the wall-clock ratios beside it.

What is counted (the whole process, spawn to exit, user-space instructions):

* **start-up**: ``cassette replay -q TAPE`` answering one ``initialize``, then the client
  closes stdin and the replay exits; beside ``python -c pass``,
  ``python -c "import asyncio, anyio"``, an ``anyio.run`` of an empty coroutine, and the
  same after ``import attrs, cattrs``: the stack floor, the start-up target's yardstick;
* **per call**: the same session with ``--low`` and with M echo calls; the difference over
  the extra calls is what one call costs. The same for the floor (the stdlib responder of
  ``stdio_replay.py``), so ``replay / floor`` says how much more work a call is to us.

valgrind comes from Debian's ``valgrind`` package; when it is missing and we may install
packages (root, with ``apt-get``), it is installed (``ensure_valgrind``), else these figures
are skipped with a note. The callgrind profiles are kept beside the JSON
(``callgrind/*.out``: read them with ``callgrind_annotate --inclusive=yes``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import stdio_replay as sr

DEFAULT_JSON = sr.ROOT / "benchmarks/results/instructions.json"
#: Calls in the shorter of the two sessions a per-call figure subtracts.
LOW_CALLS = 10
#: Under valgrind a process runs 20-50 times slower: reads get this long.
TIMEOUT = 300.0

#: The floor of the stack the product is built on: the design card's packages imported
#: and an empty coroutine run on anyio. A replay's start-up is judged against it.
STACK_FLOOR: str = "stack floor (attrs, cattrs, anyio.run)"

BASELINES: dict[str, str] = {
    "python -c pass": "pass",
    "import asyncio, anyio": "import asyncio, anyio",
    "anyio.run(noop)": "import anyio\nasync def f(): pass\nanyio.run(f)",
    STACK_FLOOR: "import attrs, cattrs, anyio\nasync def f(): pass\nanyio.run(f)",
}


def ensure_valgrind(notes: list[str]) -> str | None:
    """valgrind's path, installing Debian's package where we may; ``None`` (with a note)
    where it cannot be had."""
    found = shutil.which("valgrind")
    if found:
        return found
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        notes.append("instruction counts skipped: no valgrind (apt-get install valgrind)")
        return None
    print("installing valgrind from Debian's packages ...", file=sys.stderr, flush=True)
    for step in (["update", "-qq"], ["install", "-y", "-qq", "valgrind"]):
        subprocess.run([apt, *step], check=False, stdout=subprocess.DEVNULL, timeout=900)
    found = shutil.which("valgrind")
    if found is None:
        notes.append("instruction counts skipped: valgrind could not be installed")
    return found


def _environment() -> dict[str, str]:
    """What a counted process sees: a fixed hash seed (set and dict orders, so the count
    repeats), and nothing from our own environment that could change its path."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONHASHSEED": "0"}
    for name in ("HOME", "LANG", "LC_ALL", "TMPDIR"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _grind(valgrind: str, out: Path) -> list[str]:
    return [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}"]


def _total(out: Path) -> int:
    """The instruction total callgrind wrote at the end of its profile."""
    for line in reversed(out.read_text(errors="replace").splitlines()):
        if line.startswith(("totals:", "summary:")):
            return int(line.split()[1])
    raise sr.BenchError(f"{out}: no instruction total in the callgrind profile")


def count_session(valgrind: str, argv: list[str], calls: int, out: Path) -> int:
    """Instructions of one full session of ``argv``: initialize, ``calls`` echo calls (each
    answer checked), end of input, a clean exit."""
    stderr = out.with_suffix(".stderr")
    argv = [*_grind(valgrind, out), *argv]
    sr.run_session(out.stem, argv, calls, stderr, TIMEOUT, env=_environment())
    return _total(out)


def count_command(valgrind: str, argv: list[str], out: Path) -> int:
    """Instructions of a short command, spawn to exit."""
    subprocess.run(
        [*_grind(valgrind, out), *argv],
        check=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_environment(),
        timeout=TIMEOUT,
    )
    return _total(out)


def measure(valgrind: str, tape: Path, calls: int, folder: Path) -> dict[str, Any]:
    """Every count and ratio (see the module docstring); profiles are left in ``folder``."""
    if calls <= LOW_CALLS:
        raise sr.BenchError(f"--calls must be over {LOW_CALLS}")
    folder.mkdir(parents=True, exist_ok=True)
    python = sys.executable
    floor = folder / "floor_server.py"
    floor.write_text(sr.FLOOR_SERVER)
    servers = {
        "replay": [python, "-m", "cassette", "replay", str(tape), "-q"],
        "floor": [python, str(floor)],
    }
    counts: dict[str, dict[str, int]] = {}
    for name, argv in servers.items():
        counts[name] = {}
        for n in (0, LOW_CALLS, calls):
            print(f"  callgrind: {name}, {n} calls ...", file=sys.stderr, flush=True)
            counts[name][str(n)] = count_session(valgrind, argv, n, folder / f"{name}-{n}.out")
    base: dict[str, int] = {}
    for index, (name, code) in enumerate(BASELINES.items()):
        print(f"  callgrind: {name} ...", file=sys.stderr, flush=True)
        base[name] = count_command(valgrind, [python, "-c", code], folder / f"base-{index}.out")
    per_call = {
        name: (c[str(calls)] - c[str(LOW_CALLS)]) / (calls - LOW_CALLS)
        for name, c in counts.items()
    }
    startup = {name: c["0"] for name, c in counts.items()}
    return {
        "calls": calls,
        "low_calls": LOW_CALLS,
        "sessions": counts,
        "baselines": base,
        "startup": startup,
        "per_call": per_call,
        "startup_vs_import_anyio": startup["replay"] / base["import asyncio, anyio"],
        "startup_vs_stack_floor": startup["replay"] / base[STACK_FLOOR],
        "call_vs_floor": per_call["replay"] / per_call["floor"],
        "profiles": str(folder),
    }


def report(data: dict[str, Any]) -> list[str]:
    """The counts as a Markdown table."""
    lines = ["| what runs | instructions (M) |", "| --- | ---: |"]
    for name, value in data["baselines"].items():
        lines.append(f"| `{name}` | {value / 1e6:.1f} |")
    for name, value in data["startup"].items():
        lines.append(f"| {name}: start-up to `initialize`, then exit | {value / 1e6:.1f} |")
    for name, value in data["per_call"].items():
        lines.append(f"| {name}: one echo call | {value / 1e3:.1f} k |")
    lines.append("")
    lines.append(
        f"replay start-up / stack floor: {data['startup_vs_stack_floor']:.2f}; "
        f"replay per call / floor per call: {data['call_vs_floor']:.2f}"
    )
    return lines


def _record(calls: int, tmp: Path) -> Path:
    tape = tmp / "everything.jsonl"
    live = [sr.NODE, str(sr.SERVER_EVERYTHING), "stdio"]
    print(f"recording {calls} echo calls of server-everything ...", file=sys.stderr)
    argv = [sys.executable, "-m", "cassette", "record", "-o", str(tape), "--", *live]
    sr.run_session("record", argv, calls, tmp / "record.stderr", 60.0)
    return tape


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--tape", type=Path, help="cassette to replay (default: record one)")
    parser.add_argument("--calls", type=int, default=200, help="echo calls (default 200)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write results")
    args = parser.parse_args(argv)
    notes: list[str] = []
    valgrind = ensure_valgrind(notes)
    if valgrind is None:
        print("\n".join(notes), file=sys.stderr)
        return 1
    try:
        with tempfile.TemporaryDirectory(prefix="cassette-instructions-") as tmp_name:
            tape = args.tape or _record(args.calls, Path(tmp_name))
            data = measure(valgrind, tape, args.calls, args.json.parent / "callgrind")
    except sr.BenchError as exc:
        print(f"instructions: error: {exc}", file=sys.stderr)
        return 1
    finally:
        sr._kill_all_children()
    print("\n".join(report(data)))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
