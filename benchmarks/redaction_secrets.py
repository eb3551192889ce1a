"""What redaction costs when there are many distinct secrets, against same-run baselines.

Usage::

    .venv/bin/python benchmarks/redaction_secrets.py [--secrets 1000] [--calls 5000]
        [--rounds 5] [--json PATH]

Two figures, each with its limit:

1. **One answer holding ``--secrets`` distinct secrets** (presigned URLs, each with an
   access key id, a signature and a security token): a stdlib server answers one
   ``tools/call`` with them as a JSON list in the text content and in the structured
   content. A stdlib client times the call through ``live`` (the server itself),
   ``record-off`` (``cassette record --no-redact``) and ``record`` (redaction on),
   interleaved in every round. Limit (the guard): the recording with redaction answers
   within ``LIMIT_S`` (0.2 s); ``record / live`` and ``record / record-off`` (what
   redaction adds to a recording) are printed beside it. (An older limit, 2x live, could
   not be met as written: live is a server writing an answer it holds ready, so
   ``record-off`` alone is about 3x live.) Every cassette written is checked: no planted
   value is left in it.
2. **Memory over ``--calls`` calls, each carrying a fresh secret**, through one
   recording's redaction session in this process (``tracemalloc``): the memory after the
   first tenth of the calls and after all of them, and the seconds each tenth took (flat
   seconds per tenth: cost linear in the number of secrets). The memory held is the
   secrets' forms themselves, which a session must remember to redact their echoes.
   Limit: at most ``MEMORY_PER_CALL_KIB`` per fresh secret, and the last tenth at most
   ``TIME_GROWTH`` times the first; the script says whether both hold ("flat": the cost
   is linear in the number of secrets).

The script exits 1 when either limit is broken, so it serves as a guard.

Medians over rounds; read the ratios, not the seconds (a shared, noisy machine). Nothing
here is asserted by the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import string
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import stdio_replay as sr
from benchmarks.redaction_large import LineClient

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_JSON = ROOT / "benchmarks/results/redaction_secrets.json"

# The server reads its answer (made here, so the check knows the secrets) from a file.
SERVER = r"""
import json, sys
ANSWER = open(sys.argv[1], encoding="utf-8").read()
for raw in sys.stdin:
    msg = json.loads(raw)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "presign", "version": "1"}}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    else:
        head = '{"jsonrpc": "2.0", "id": %s, "result": ' % json.dumps(msg["id"])
        sys.stdout.write(head + ANSWER + "}\n")
    sys.stdout.flush()
"""

_ALNUM = string.ascii_letters + string.digits
#: What a fresh secret may add to a session's memory: its forms (about ten strings of its
#: length), their table entries, and the placeholder it gets.
MEMORY_PER_CALL_KIB = 2.0
#: How much longer the last tenth of the calls may take than the first (noise, not growth).
TIME_GROWTH = 1.5
#: The most the 1,000-distinct-secret answer may take through a recording with redaction.
LIMIT_S = 0.2


def _body(rng: random.Random, size: int, alphabet: str = _ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(size))


def presigned(count: int) -> tuple[list[str], list[str]]:
    """``count`` fake presigned URLs and the secrets planted in them (fake, seeded)."""
    rng = random.Random(1000)
    urls, secrets = [], []
    for i in range(count):
        key = "AK" + "IA" + _body(rng, 16, string.ascii_uppercase + string.digits)
        signature = _body(rng, 64, "0123456789abcdef")
        token = _body(rng, 40)
        urls.append(
            f"https://bucket.s3.amazonaws.com/reports/{i}.csv?X-Amz-Credential={key}%2F20260101"
            f"&X-Amz-Signature={signature}&X-Amz-Security-Token={token}"
        )
        secrets += [key, signature, token]
    return urls, secrets


def session(argv: list[str], tmp: Path, timeout: float) -> float:
    client = LineClient(argv, tmp / "stderr.log")
    try:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}}
        init["clientInfo"] = {"name": "b", "version": "1"}
        client.call({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}, timeout)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        call["params"] = {"name": "presign", "arguments": {}}
        start = time.perf_counter()
        reply = client.call(call, timeout)
        elapsed = time.perf_counter() - start
        if "structuredContent" not in reply["result"]:
            raise sr.BenchError("the answer lost its structured content")
        return elapsed
    finally:
        client.close()


def measure_answer(args: argparse.Namespace, tmp: Path) -> dict[str, list[float]]:
    urls, secrets = presigned(args.secrets)
    answer = tmp / "answer.json"
    content = [{"type": "text", "text": json.dumps(urls)}]
    answer.write_text(json.dumps({"content": content, "structuredContent": {"urls": urls}}))
    server = tmp / "server.py"
    server.write_text(SERVER)
    serve = [sys.executable, str(server), str(answer)]
    tape = tmp / "presigned.jsonl"
    # no probes: they start the server again beside the session, each answering its
    # listing with the 0.4 MB answer, which is not redaction (record_probes.py measures them)
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
            if name == "record":
                raw = tape.read_text()
                left = [s for s in secrets if s in raw]
                if left:
                    raise sr.BenchError(f"{len(left)} planted secret(s) left in the cassette")
            if round_:
                times[name].append(elapsed)
            print(f"  round {round_} {name:<10} {elapsed:.3f} s", file=sys.stderr, flush=True)
    return times


def measure_memory(calls: int) -> dict[str, Any]:
    """Memory and seconds per tenth over ``calls`` requests, each with a fresh secret."""
    from cassette.store.gate import policy

    redactor = policy(settings={}, environ={})
    assert redactor is not None
    session = redactor.session()
    rng = random.Random(5000)
    tracemalloc.start()
    tenth = max(1, calls // 10)
    marks: list[dict[str, float]] = []
    start = time.perf_counter()
    for i in range(calls):
        arguments = {"query": "weather in Oslo", "token": _body(rng, 32)}
        message = {"jsonrpc": "2.0", "id": i, "method": "tools/call"}
        message["params"] = {"name": "search", "arguments": arguments}
        session.message(message, None, json.dumps(message))
        if (i + 1) % tenth == 0:
            now = time.perf_counter()
            current, _ = tracemalloc.get_traced_memory()
            marks.append({"calls": i + 1, "mib": current / 2**20, "seconds": now - start})
            start = now
    tracemalloc.stop()
    return {"calls": calls, "known": session.known, "marks": marks}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--secrets", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    try:
        with tempfile.TemporaryDirectory(prefix="cassette-secrets-") as name:
            times = measure_answer(args, Path(name))
    except sr.BenchError as exc:
        print(f"redaction_secrets: error: {exc}", file=sys.stderr)
        return 1
    finally:
        sr._kill_all_children()
    med = {name: statistics.median(values) for name, values in times.items()}
    ratio = med["record"] / med["live"]
    off = med["record-off"] / med["live"]
    print(f"| one answer, {args.secrets} secrets | median s | vs live | vs record-off |")
    print("|---|---|---|---|")
    for name in ("live", "record-off", "record"):
        print(
            f"| {name} | {med[name]:.3f} | {med[name] / med['live']:.2f}x | "
            f"{med[name] / med['record-off']:.2f}x |"
        )
    within = med["record"] <= LIMIT_S
    print(
        f"\nrecording with redaction answers in {med['record']:.3f} s "
        f"({'within' if within else 'OVER'} {LIMIT_S} s); {ratio:.2f}x live"
    )
    print(
        f"recording without redaction costs {off:.2f}x live; "
        f"redaction adds {med['record'] / med['record-off']:.2f}x to it "
        f"({(med['record'] - med['record-off']) * 1e3:.1f} ms)"
    )

    memory = measure_memory(args.calls)
    first, last = memory["marks"][0], memory["marks"][-1]
    per_tenth = [m["seconds"] for m in memory["marks"]]
    per_call = (last["mib"] - first["mib"]) / max(1, last["calls"] - first["calls"]) * 1024
    print(
        f"\n{args.calls} calls, each with a fresh secret: {first['mib']:.1f} MiB after "
        f"{first['calls']}, {last['mib']:.1f} MiB after {last['calls']} "
        f"(+{last['mib'] - first['mib']:.1f} MiB, {per_call:.2f} KiB per call); "
        f"seconds per tenth: first {per_tenth[0]:.2f}, last {per_tenth[-1]:.2f}"
    )
    # "flat": what each call adds is only its secret's forms (bounded per secret, no
    # structure that grows faster than the secrets), and the last tenth costs no more
    # time than the first (no work that grows with the number of secrets)
    flat = per_call <= MEMORY_PER_CALL_KIB and per_tenth[-1] <= TIME_GROWTH * per_tenth[0]
    print(
        f"memory per fresh secret {per_call:.2f} KiB (limit {MEMORY_PER_CALL_KIB} KiB), "
        f"last tenth {per_tenth[-1] / per_tenth[0]:.2f}x the first (limit {TIME_GROWTH}x): "
        f"{'flat' if flat else 'NOT flat'}"
    )
    summary = {
        "median_s": med,
        "record_vs_live": ratio,
        "record_off_vs_live": off,
        "limit_record_s": LIMIT_S,
        "record_within_limit": within,
        "redaction_s": med["record"] - med["record-off"],
        "record_vs_record_off": med["record"] / med["record-off"],
        "memory": memory,
        "memory_kib_per_call": per_call,
        "memory_flat": flat,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    data = {"times": times, "summary": summary, "loadavg": [load_before, os.getloadavg()]}
    args.json.write_text(json.dumps(data, indent=1) + "\n")
    return 0 if within and flat else 1


if __name__ == "__main__":
    sys.exit(main())
