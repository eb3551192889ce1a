"""Throughput of our SSE parser against httpx-sse's decoders, fed the same bytes.

Usage::

    .venv/bin/python benchmarks/sse_parser.py [--rounds N] [--mib M] [--chunks SIZES]
                                              [--json PATH]

Two synthetic ``text/event-stream`` bodies resembling MCP streamable-HTTP traffic are built
from a fixed seed:

* ``mixed``: mostly small JSON-RPC notifications, some medium results, a few large tool
  results (16-64 KiB of text), a quarter of the texts non-ASCII (2-, 3- and 4-byte UTF-8),
  some pretty-printed (multi-line) data, comments, the odd ``retry``, and CRLF, LF and
  lone-CR line endings mixed per event;
* ``small``: only small notifications, which stresses the per-line cost.

Each body is cut into equal chunks (4 KiB and 64 KiB by default) before timing, and both
parsers get the same list of chunks. Timing covers UTF-8 decoding, line splitting, field
handling and building the event objects:

* ``ours``: ``cassette.transports.http.sse_parser.SSEParser.feed`` per chunk, then ``close``;
* ``httpx-sse``: what its ``EventSource.iter_sse`` does after HTTP, without httpx itself:
  an incremental UTF-8 decoder with ``errors="replace"`` (as httpx's text decoding does),
  ``SSELineDecoder.decode`` per chunk of text and ``flush`` at the end, then each line
  ``rstrip("\\n")``-ed and passed to ``SSEDecoder.decode``.

Timed runs count the events and drop them, as a streaming consumer would. Before timing,
both outputs are checked to be the same events (type, data, last event id, retry).
Comments sit inside event blocks, never alone: httpx-sse dispatches a block without data
(a comment-only block once a last event id is set, an id-only block) as an empty event,
which WHATWG does not, and the two must be compared like for like.

Rounds alternate which parser runs first. Reported: MB/s (10**6 bytes) best of the rounds
and median, the ratio ours / httpx-sse of each, and the median of the per-round ratios.
Absolute figures depend on the machine; read the ratios. Nothing here is asserted by the
test suite.

httpx-sse is not a dependency of cassette-mcp; install it with
``.venv/bin/pip install httpx-sse==0.4.3``. Without it the script prints a note and
measures only our parser. httpx-sse 0.4.3 declares no requirements, yet its package
``__init__`` imports httpx; when httpx is absent the script loads the pure-Python
``httpx_sse._decoders`` module without running that ``__init__``.
"""

from __future__ import annotations

import argparse
import codecs
import datetime
import gc
import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import random
import statistics
import sys
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cassette.transports.http.sse_parser import SSEParser  # noqa: E402

DEFAULT_JSON = ROOT / "benchmarks/results/sse_parser.json"
SEED = 20260728
ASCII_WORDS = [
    *("alpha", "beta", "gamma", "delta", "tool", "result", "line", "file", "path", "config"),
    *("value", "lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit"),
    *("sed", "do", "eiusmod", "tempor"),
]
# A quarter of the messages carry non-ASCII text (2-, 3- and 4-byte UTF-8), as tool output
# in other languages does; the rest are ASCII, like most JSON-RPC traffic.
UNICODE_WORDS = [*ASCII_WORDS, "résumé", "naïve", "café", "—", "ünïcödé", "東京", "数据", "🚀"]

Row = tuple[str, str, str, int | None]  # type, data, last event id, retry


# --------------------------------------------------------------------------- the streams


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _text(rng: random.Random, size: int) -> str:
    words = UNICODE_WORDS if rng.random() < 0.25 else ASCII_WORDS
    out: list[str] = []
    n = 0
    while n < size:
        word = rng.choice(words)
        out.append(word)
        n += len(word) + 1
    return " ".join(out)


def _small(rng: random.Random, seq: int) -> dict[str, Any]:
    if rng.random() < 0.5:
        return {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": seq % 97, "progress": seq % 100, "total": 100},
        }
    return {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "logger": "server", "data": _text(rng, rng.randint(20, 120))},
    }


def _medium(rng: random.Random, seq: int) -> dict[str, Any]:
    tools = [
        {
            "name": f"tool_{i}",
            "description": _text(rng, rng.randint(40, 200)),
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
        }
        for i in range(rng.randint(3, 12))
    ]
    return {"jsonrpc": "2.0", "id": seq, "result": {"tools": tools}}


def _large(rng: random.Random, seq: int) -> dict[str, Any]:
    body = _text(rng, rng.randint(16 * 1024, 64 * 1024))
    return {
        "jsonrpc": "2.0",
        "id": seq,
        "result": {"content": [{"type": "text", "text": body}], "isError": False},
    }


def build_stream(kind: str, size: int, seed: int = SEED) -> bytes:
    """A deterministic event stream of at least ``size`` bytes."""
    rng = random.Random(f"{seed}-{kind}")
    parts: list[bytes] = []
    total = 0
    seq = 0
    while total < size:
        seq += 1
        roll = rng.random()
        if kind == "small" or roll < 0.70:
            message = _small(rng, seq)
        elif roll < 0.95:
            message = _medium(rng, seq)
        else:
            message = _large(rng, seq)
        if kind == "mixed" and rng.random() < 0.1:
            data_lines = json.dumps(message, indent=2, ensure_ascii=False).split("\n")
        else:
            data_lines = [json.dumps(message, separators=(",", ":"), ensure_ascii=False)]
        eol = rng.choices(["\n", "\r\n", "\r"], weights=[6, 3, 1])[0]
        lines: list[str] = []
        if rng.random() < 0.1:
            lines.append(": ping")
        lines.append("event: message")
        lines.append(f"id: {_uuid(rng)}")
        if rng.random() < 0.01:
            lines.append(f"retry: {rng.randint(500, 5000)}")
        lines.extend(f"data: {line}" for line in data_lines)
        block = (eol.join(lines) + eol + eol).encode()
        parts.append(block)
        total += len(block)
    return b"".join(parts)


def chunked(stream: bytes, size: int) -> list[bytes]:
    return [stream[i : i + size] for i in range(0, len(stream), size)]


# --------------------------------------------------------------------------- the parsers


def run_ours(chunks: list[bytes]) -> int:
    parser = SSEParser()
    count = 0
    for chunk in chunks:
        count += len(parser.feed(chunk))
    return count + len(parser.close())


def rows_ours(chunks: list[bytes]) -> list[Row]:
    parser = SSEParser()
    events = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    return [(e.type, e.data, e.last_event_id, e.retry) for e in events]


def _load_httpx_sse() -> tuple[types.ModuleType, str] | None:
    try:
        version = importlib.metadata.version("httpx-sse")
    except importlib.metadata.PackageNotFoundError:
        return None
    try:
        decoders = importlib.import_module("httpx_sse._decoders")
    except ModuleNotFoundError as exc:
        if exc.name != "httpx":
            raise
        # The package __init__ needs httpx; the decoders need only the standard library.
        spec = importlib.util.find_spec("httpx_sse")
        if spec is None or spec.submodule_search_locations is None:
            return None
        package = types.ModuleType("httpx_sse")
        package.__path__ = list(spec.submodule_search_locations)
        sys.modules["httpx_sse"] = package
        decoders = importlib.import_module("httpx_sse._decoders")
    return decoders, version


def make_httpx_sse(decoders: types.ModuleType) -> Callable[[list[bytes]], Iterator[Any]]:
    """What ``EventSource.iter_sse`` does once httpx has produced the body's bytes."""
    line_decoder_cls = decoders.SSELineDecoder
    sse_decoder_cls = decoders.SSEDecoder

    def events(chunks: list[bytes]) -> Iterator[Any]:
        text_decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        line_decoder = line_decoder_cls()
        sse_decoder = sse_decoder_cls()
        for chunk in chunks:
            text = text_decoder.decode(chunk)
            if not text:
                continue
            for line in line_decoder.decode(text):
                sse = sse_decoder.decode(line.rstrip("\n"))
                if sse is not None:
                    yield sse
        text = text_decoder.decode(b"", True)
        tail = line_decoder.decode(text) if text else []
        for line in tail + line_decoder.flush():
            sse = sse_decoder.decode(line.rstrip("\n"))
            if sse is not None:
                yield sse

    return events


# --------------------------------------------------------------------------- measuring


def timed(run: Callable[[list[bytes]], int], chunks: list[bytes]) -> float:
    gc.collect()
    start = time.perf_counter()
    run(chunks)
    return time.perf_counter() - start


Contenders = dict[str, tuple[Callable[[list[bytes]], int], Callable[[list[bytes]], list[Row]]]]


def load_contenders() -> tuple[Contenders, str | None]:
    """Each parser as (timed run that counts events, checked run that returns them)."""
    contenders: Contenders = {"ours": (run_ours, rows_ours)}
    loaded = _load_httpx_sse()
    if loaded is None:
        print(
            "note: httpx-sse is not installed, so only our parser is measured "
            "(.venv/bin/pip install httpx-sse==0.4.3)",
            file=sys.stderr,
        )
        return contenders, None
    decoders, version = loaded
    httpx_sse_events = make_httpx_sse(decoders)

    def run_httpx_sse(chunks: list[bytes]) -> int:
        count = 0
        for _ in httpx_sse_events(chunks):
            count += 1
        return count

    def rows_httpx_sse(chunks: list[bytes]) -> list[Row]:
        return [(e.event, e.data, e.id, e.retry) for e in httpx_sse_events(chunks)]

    contenders["httpx-sse"] = (run_httpx_sse, rows_httpx_sse)
    return contenders, version


def measure(
    kind: str, stream: bytes, chunk_size: int, contenders: Contenders, rounds: int
) -> dict[str, Any]:
    chunks = chunked(stream, chunk_size)
    label = f"{kind}/{chunk_size}"
    reference = rows_ours(chunks)
    if reference != rows_ours([stream]):
        raise SystemExit(f"{label}: our output depends on chunking")
    for name, (run, rows) in contenders.items():
        if rows(chunks) != reference:
            raise SystemExit(f"{label}: {name} disagrees with ours")
        if run(chunks) != len(reference):
            raise SystemExit(f"{label}: {name} miscounts")
    names = list(contenders)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_no in range(rounds):
        for name in names if round_no % 2 == 0 else names[::-1]:
            times[name].append(timed(contenders[name][0], chunks))
    case: dict[str, Any] = {
        "stream": kind,
        "bytes": len(stream),
        "chunk": chunk_size,
        "events": len(reference),
        "seconds": times,
        "mb_per_s": {
            name: {
                "best": len(stream) / min(secs) / 1e6,
                "median": len(stream) / statistics.median(secs) / 1e6,
            }
            for name, secs in times.items()
        },
    }
    if "httpx-sse" in times:
        ours, theirs = case["mb_per_s"]["ours"], case["mb_per_s"]["httpx-sse"]
        paired = [b / a for a, b in zip(times["ours"], times["httpx-sse"], strict=True)]
        case["ratio"] = {
            "best": ours["best"] / theirs["best"],
            "median": ours["median"] / theirs["median"],
            "paired_median": statistics.median(paired),
        }
    return case


def print_table(cases: list[dict[str, Any]], rounds: int) -> None:
    with_baseline = all("ratio" in case for case in cases)
    header = f"{'stream':<7} {'chunk':>6} {'MB':>6} {'events':>7}  {'ours MB/s best/med':>19}"
    if with_baseline:
        header += f"  {'httpx-sse best/med':>19}  {'ours/httpx-sse best/med/paired':>30}"
    print(f"SSE parser throughput, best and median of {rounds} rounds, MB = 10**6 bytes")
    print(header)
    for case in cases:
        ours = case["mb_per_s"]["ours"]
        row = (
            f"{case['stream']:<7} {case['chunk']:>6} {case['bytes'] / 1e6:>6.2f} "
            f"{case['events']:>7}  {ours['best']:>9.1f} / {ours['median']:>7.1f}"
        )
        if with_baseline:
            theirs, ratio = case["mb_per_s"]["httpx-sse"], case["ratio"]
            row += (
                f"  {theirs['best']:>9.1f} / {theirs['median']:>7.1f}"
                f"  {ratio['best']:>10.2f}x / {ratio['median']:.2f}x / "
                f"{ratio['paired_median']:.2f}x"
            )
        print(row)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--rounds", type=int, default=7, help="measured rounds (default 7)")
    parser.add_argument("--mib", type=float, default=8.0, help="size of each stream in MiB")
    parser.add_argument(
        "--chunks", default="4096,65536", help="comma-separated chunk sizes in bytes"
    )
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write results")
    args = parser.parse_args(argv)

    contenders, baseline_version = load_contenders()
    load_before = os.getloadavg()
    size = int(args.mib * 1024 * 1024)
    cases = []
    for kind in ("mixed", "small"):
        stream = build_stream(kind, size)
        for chunk_size in (int(c) for c in args.chunks.split(",")):
            cases.append(measure(kind, stream, chunk_size, contenders, args.rounds))
    load_after = os.getloadavg()

    sys.stderr.flush()
    print_table(cases, args.rounds)
    result = {
        "benchmark": "sse_parser",
        "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "python": sys.version,
        "platform": platform.platform(),
        "rounds": args.rounds,
        "baseline": None if baseline_version is None else f"httpx-sse {baseline_version}",
        "load_average": {"before": load_before, "after": load_after},
        "cases": cases,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    sys.stdout.flush()
    print(f"raw numbers: {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
