"""Instruction counts of redaction: small messages, many secrets, a long text.

Usage::

    .venv/bin/python benchmarks/redaction_instructions.py [--only CASE ...] [--json PATH]

Redaction runs on every message a recording keeps, so its cost is judged per message;
wall-clock time on a shared machine moves with its load, while the instructions a
process executes under ``valgrind --tool=callgrind`` with ``PYTHONHASHSEED=0`` repeat
from run to run. Each case is counted twice, the whole process each time: once doing its
work ``0`` times and once ``N`` times after the same set-up (rules compiled, one session
warmed); the difference over ``N`` is the cost of one:

* ``echo_request``, ``echo_response``: a ``tools/call`` of ``echo`` and its answer,
  1,000 times each in one session (what a recording redacts per message);
* ``tools_list``: a 20-tool ``tools/list`` answer whose schemas have secret-named
  properties (``apiKey``, ``password``), 200 times;
* ``secrets_1000``: the answer of ``redaction_secrets.py``, 1,000 distinct fake
  presigned URLs in the text and the structured content, in a fresh session;
  ``secrets_100`` the same with 100: the two per secret, compared, say whether the cost
  is linear in the number of secrets without a clock;
* ``text_2mib``: 2 MiB of ``redaction_large.py``'s text (prose, ``key=value`` log lines,
  JSON records with URLs, two planted fake credentials), in a fresh session;
* ``response_2mib``: the same text as ``redaction_large.py``'s server answers it (a
  ``tools/call`` result, with its raw JSON line, as the recorder hands it over).

``--path DIR`` imports ``cassette`` from DIR instead (to compare two checkouts in one
run). valgrind comes from Debian's package, installed where we may
(``instructions.ensure_valgrind``). Nothing here is asserted by the test suite.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import instructions as ins
from benchmarks import stdio_replay as sr

DEFAULT_JSON = sr.ROOT / "benchmarks/results/redaction_instructions.json"

#: Each case and how many times its work is done in the longer of its two counts.
CASES: dict[str, int] = {
    "echo_request": 1000,
    "echo_response": 1000,
    "tools_list": 200,
    "secrets_100": 1,
    "secrets_1000": 1,
    "text_2mib": 1,
    "response_2mib": 1,
}

_SCHEMA = {"apiKey": {"type": "string"}, "password": {"type": "string"}}
_TOOL = {"description": "does a thing with a token", "inputSchema": {"type": "object"}}


def _messages() -> dict[str, dict[str, Any]]:
    """The small messages, as a recording meets them."""
    text = [{"type": "text", "text": "hello world"}]
    call = {"name": "echo", "arguments": {"text": "hello world"}}
    tools = [
        {"name": f"tool{i}", **_TOOL, "inputSchema": {"type": "object", "properties": _SCHEMA}}
        for i in range(20)
    ]
    return {
        "echo_request": {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call},
        "echo_response": {"jsonrpc": "2.0", "id": 7, "result": {"content": text}},
        "tools_list": {"jsonrpc": "2.0", "id": 2, "result": {"tools": tools}},
    }


def _redactor() -> Any:
    """``cassette.Redactor``, or where a checkout older than its export keeps it (--path)."""
    try:
        from cassette import Redactor
    except ImportError:
        from cassette.core.redaction import Redactor
    return Redactor


def _work(case: str) -> Any:
    """A callable doing ``case``'s work once; everything it needs is built first."""
    Redactor = _redactor()

    if case in ("text_2mib", "response_2mib"):
        from benchmarks.redaction_large import PLANTED, TEXT_MAKER

        made: dict[str, Any] = {}
        exec(TEXT_MAKER, made)  # our own text maker, the server's too
        text = made["make_text"](2, PLANTED)
        if case == "text_2mib":
            return lambda: Redactor().session().text(text)
        result = {"content": [{"type": "text", "text": text}]}
        response = {"jsonrpc": "2.0", "id": 2, "result": result}
        line = json.dumps(response)
        return lambda: Redactor().session().message(response, raw=line)
    if case.startswith("secrets_"):
        from benchmarks.redaction_secrets import presigned

        urls, _ = presigned(int(case.removeprefix("secrets_")))
        content = {"urls": urls}
        text = [{"type": "text", "text": json.dumps(content)}]
        answer = {"jsonrpc": "2.0", "id": 1, "result": {"content": text}}
        answer["result"]["structuredContent"] = content
        raw = json.dumps(answer)
        return lambda: Redactor().session().message(answer, raw=raw)
    message = _messages()[case]
    raw = json.dumps(message)
    session = Redactor().session()
    session.message(message, raw=raw)
    return lambda: session.message(message, raw=raw)


def child(case: str, times: int) -> None:
    """The counted process: the rules compiled and a session warmed, then the work."""
    try:
        from cassette.core.redaction import secret_rules
    except ImportError:  # a checkout from before the core's rooms (--path)
        from cassette.core import secret_rules  # type: ignore[no-redef,attr-defined]

    Redactor = _redactor()

    for message in _messages().values():
        Redactor().session().message(message, raw=json.dumps(message))
    secret_rules.prepare()
    work = _work(case)
    for _ in range(times):
        work()


def count(valgrind: str, case: str, times: int, path: Path | None, out: Path) -> int:
    """Instructions of one counted process."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", case, str(times)]
    if path is not None:
        argv += ["--path", str(path)]
    return ins.count_command(valgrind, argv, out)


def measure(valgrind: str, cases: list[str], path: Path | None, folder: Path) -> dict[str, Any]:
    """Per case: both totals and the cost of one (see the module docstring)."""
    folder.mkdir(parents=True, exist_ok=True)
    # one run first, uncounted: the modules it imports are compiled and written once, so
    # no counted process compiles them (that would be counted in one of two and not the other)
    warm = [sys.executable, str(Path(__file__).resolve()), "--child", cases[0], "0"]
    warm += ["--path", str(path)] if path else []
    subprocess.run(warm, check=True, timeout=600, env=ins._environment())  # it may write them
    figures: dict[str, Any] = {}
    for case in cases:
        times = CASES[case]
        print(f"  callgrind: {case}, 0 and {times} times ...", file=sys.stderr, flush=True)
        low = count(valgrind, case, 0, path, folder / f"{case}-0.out")
        high = count(valgrind, case, times, path, folder / f"{case}-{times}.out")
        figures[case] = {"times": times, "total_0": low, "total_n": high}
        figures[case]["each"] = (high - low) / times
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--only", nargs="+", choices=sorted(CASES), help="these cases only")
    parser.add_argument("--path", type=Path, help="import cassette from this folder")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write results")
    parser.add_argument("--child", nargs=2, metavar=("CASE", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.path is not None:
        sys.path.insert(0, str(args.path.resolve()))
    if args.child:
        import cassette

        if args.path is not None and not cassette.__file__.startswith(str(args.path.resolve())):
            print(f"cassette imported from {cassette.__file__}, not --path", file=sys.stderr)
            return 2
        child(args.child[0], int(args.child[1]))
        return 0
    notes: list[str] = []
    valgrind = ins.ensure_valgrind(notes)
    if valgrind is None:
        print("\n".join(notes), file=sys.stderr)
        return 1
    try:
        cases = args.only or list(CASES)
        figures = measure(valgrind, cases, args.path, args.json.parent / "redaction-cg")
    except (sr.BenchError, subprocess.CalledProcessError) as exc:
        print(f"redaction_instructions: error: {exc}", file=sys.stderr)
        return 1
    print("| case | done | instructions each |")
    print("| --- | ---: | ---: |")
    for case, f in figures.items():
        each = f["each"]
        shown = f"{each / 1e6:.1f} M" if each >= 1e6 else f"{each / 1e3:.1f} k"
        print(f"| {case} | {f['times']} | {shown} |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"cases": figures, "path": str(args.path)}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
