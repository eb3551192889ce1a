"""The cross-client matrix's table, from the cells' results (build/client-matrix/*.json).

    python -m tests.e2e.matrix_table [RESULTS_DIR]     # prints the markdown

One grid per server and transport (rows: the recording client, columns: the replaying
client), then one line per cell that failed: what the replaying client saw on replay
against what it saw live.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
#: where the cells' results and the table go: build/, or $CASSETTE_MATRIX_DIR
OUT = Path(os.environ.get("CASSETTE_MATRIX_DIR") or ROOT / "build")
RESULTS = OUT / "client-matrix"
TABLE = OUT / "client-matrix.md"

SERVERS = ("everything", "dual", "fastmcp")
TRANSPORTS = ("stdio", "http", "sse")
CLIENTS = ("py2-auto", "py2-legacy", "py2-modern", "py1", "ts1", "ts2", "fastmcp", "inspector")
#: the clients people run, which replay only (tests/e2e/test_client_matrix.py, APPS)
APPS = ("claude-code", "gemini-cli", "langchain", "ai-sdk", "pydantic-ai")
SYMBOL = {
    "pass": "pass",
    "refused": "refused",
    "legacy": "legacy",
    "announced": "announced",
    "xfail": "xfail",
    "racy": "racy",
    "fail": "FAIL",
    "xpass": "XPASS",
    "n/a": "n/a",
}


def load(results: Path = RESULTS, *, marked: bool = True) -> list[dict[str, Any]]:
    """The cells' results; MARKED: with the status their marks make of them (xfail, racy,
    XPASS), else as the test saw them (pass, fail, n/a)."""
    from tests.e2e.matrix_verdict import verdict
    from tests.e2e.test_client_matrix import EXPECTED_FAILURES, RACY

    cells = []
    for path in sorted(results.glob("*.json")):
        cell = json.loads(path.read_text("utf-8"))
        if (
            cell["status"] != "n/a"
        ):  # judged again: a result saved by an older rule follows this one
            cell["status"] = verdict(cell)[0]
        if not marked:
            cells.append(cell)
            continue
        expected = cell["id"] in EXPECTED_FAILURES
        cell["racy"] = cell["id"] in RACY
        if cell["racy"]:
            cell["status"] = "racy"  # passed or failed, it is marked as what it is
        elif expected and cell["status"] == "fail":
            cell["status"] = "xfail"
        elif expected and cell["status"] in ("pass", "refused", "legacy", "announced"):
            cell["status"] = "xpass"
        cell["reason"] = EXPECTED_FAILURES.get(cell["id"], "")
        cells.append(cell)
    return cells


def first_difference(replayed: Any, live: Any) -> tuple[Any, Any]:
    """Two lists from their first differing item on (with the index), so that a one-line
    report shows where they part and not their long common start; other values as they are."""
    if not (isinstance(replayed, list) and isinstance(live, list)):
        return replayed, live
    at = next(
        (i for i, (a, b) in enumerate(zip(replayed, live, strict=False)) if a != b),
        min(len(replayed), len(live)),
    )
    return (
        f"[{at}:] of {len(replayed)}: {json.dumps(replayed[at:], sort_keys=True)}",
        f"[{at}:] of {len(live)}: {json.dumps(live[at:], sort_keys=True)}",
    )


def short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def seen(cell: dict[str, Any]) -> str:
    """What the replaying client saw on replay, against live, in one line."""
    if cell.get("replay_refused") and not cell.get("live_refused"):
        return f"refused on replay: `{short(cell['replay_error'])}` (live: served)"
    if cell.get("live_refused"):
        if not cell.get("replay_refused"):
            return f"live refused it (`{short(cell['live_error'])}`); the replay served it"
        return (
            f"refused on replay with `{short(cell['replay_error'])}` "
            f"(live: `{short(cell['live_error'])}`), no word of `--era`"
        )
    parts = []
    diff = cell.get("diff", {})
    if "protocol" in diff:
        pair = diff["protocol"]
        parts.append(f"negotiated `{pair['replay']}` on replay, `{pair['live']}` live")
    for step, pair in sorted(diff.items()):
        if step == "protocol":
            continue
        replayed, live = first_difference(pair["replay"], pair["live"])
        parts.append(f"{step}: replay `{short(replayed, 120)}` / live `{short(live, 80)}`")
    if cell.get("misses"):
        parts.append(f"misses: `{short('; '.join(cell['misses']))}`")
    return "; ".join(parts)


#: Why a cell fails, by what it shows: what the product lacks, or what no recording of
#: another client can show.
BEHAVIOURS = {
    "legacy-of-modern": "cross-era replay: a legacy client of a modern cassette is not "
    "served as the live server serves it",
    "modern-of-legacy": "cross-era replay: a 2026-07-28 client of a legacy cassette is "
    "served legacy results, or refused without a miss saying how to record for it",
    "refusal": "a client the live server refused is refused on replay with another error, "
    "no line on how to record for it and no miss (over HTTP: the replay front's header "
    "check answers before the recording does)",
    "client-dependent": "the recording cannot tell: the server's answers depend on the "
    "client's own capabilities and answers (server-everything lists its sampling and "
    "elicitation tools only to a client that declares them; the roots tools report the "
    "client's roots; the Inspector declares roots only, and has none)",
    "schema-title": "the recording cannot tell: the mcp 2.3.0 server's elicitation schema "
    "has a top-level title on legacy sessions only, so a modern recording lacks it",
    "arguments": "normalised fingerprints: prompts/get with arguments {} and without "
    "arguments are the same request",
    "set-level": "unrecorded requests: logging/setLevel is answered otherwise than the live "
    "server answers it (docs/matching.md, Asked without being recorded)",
    "progress": "delivery: progress notifications reach the client before the response "
    "(the TypeScript SDKs' progress callbacks)",
    "logs": "delivery: log notifications sent during a call reach the client",
}

#: Steps whose outcome depends on the client's capabilities or its answers to the server.
_CLIENT_DEPENDENT = {"tools", "callbacks", "sampling", "elicitation", "roots"}


def _schema_title_only(cell: dict[str, Any]) -> bool:
    """Whether the callbacks differ only by the elicitation schema's top-level title."""
    pair = cell.get("diff", {}).get("callbacks")
    if not pair or not isinstance(pair.get("live"), list):
        return False

    def untitled(calls: Any) -> Any:
        out = []
        for call in calls or []:
            schema = (call.get("params") or {}).get("requestedSchema")
            if isinstance(schema, dict):
                schema = {k: v for k, v in schema.items() if k != "title"}
                out.append({**call, "params": {**call["params"], "requestedSchema": schema}})
            else:
                out.append(call)
        return out

    return bool(untitled(pair["live"]) == untitled(pair["replay"]))


def classify(cell: dict[str, Any]) -> list[str]:
    """The keys of BEHAVIOURS a failed cell shows, most telling first."""
    diff, misses = cell.get("diff", {}), cell.get("misses", [])
    live, replayed = cell.get("live", {}), cell.get("replay", {})
    found = []
    if cell.get("live_refused"):
        found.append("refusal")
    elif cell.get("replay_refused"):
        modern_live = live.get("protocol") == "2026-07-28"
        found.append("modern-of-legacy" if modern_live else "legacy-of-modern")
    elif "protocol" in diff:
        newer_live = str(live.get("protocol")) > str(replayed.get("protocol"))
        found.append("modern-of-legacy" if newer_live else "legacy-of-modern")
    era = bool(found)  # the session itself differs: the steps' differences follow from it
    if any(m.startswith("prompts/get") and "/arguments" in m for m in misses):
        found.append("arguments")
    if any(m.startswith("logging/setLevel") for m in misses) or ("set_level" in diff and not era):
        found.append("set-level")
    if "progress_updates" in diff and not era:
        found.append("progress")
    if "logs" in diff and not era:
        found.append("logs")
    if _schema_title_only(cell) and not era:
        found.append("schema-title")
    elif _CLIENT_DEPENDENT & set(diff) and not era:
        found.append("client-dependent")
    return found or ["other"]


def reason(cell: dict[str, Any]) -> str:
    steps = ", ".join(sorted(cell.get("diff", {}))) or "none"
    return "; ".join(BEHAVIOURS.get(k, f"other (steps differ: {steps})") for k in classify(cell))


def grids(cells: list[dict[str, Any]]) -> list[str]:
    """One grid per server and transport: rows record, columns replay."""
    by_id = {c["id"]: c for c in cells}
    lines = []
    for server in SERVERS:
        for transport in TRANSPORTS:
            rows = []
            for recorder in CLIENTS:
                row = []
                for replayer in (*CLIENTS, *APPS):
                    cell = by_id.get(f"{server}-{transport}-{recorder}-to-{replayer}")
                    row.append(SYMBOL[cell["status"]] if cell else "")
                if any(row):
                    rows.append(f"| {recorder} | " + " | ".join(row) + " |")
            if rows:
                lines += [f"**{server}, {transport}** (rows record, columns replay)", ""]
                lines.append("| recorded by | " + " | ".join((*CLIENTS, *APPS)) + " |")
                lines.append("|---" * (len(CLIENTS) + len(APPS) + 1) + "|")
                lines += [*rows, ""]
    return [*lines, *plain_grid(by_id)]


def plain_grid(by_id: dict[str, dict[str, Any]]) -> list[str]:
    """The plain cells (a plain ``cassette record``, no variant), one grid per recording
    client (``py2-auto``: the scripted session; ``py2-default``: the plain-recording
    family, a client that lists only tools): rows the server and transport, columns the
    replaying client."""
    plain = [c for c in by_id.values() if c.get("plain")]
    lines: list[str] = []
    for recorder in sorted({c["recorder"] for c in plain}):
        cells = [c for c in plain if c["recorder"] == recorder]
        lines += _grid_of(recorder, cells, by_id)
    return lines


def _grid_of(
    recorder: str, cells: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]
) -> list[str]:
    replayers = [r for r in (*CLIENTS, *APPS) if any(c["replayer"] == r for c in cells)]
    rows = []
    for key in sorted({(c["server"], c["transport"]) for c in cells}):
        row = []
        for replayer in replayers:
            cell = by_id.get(f"{key[0]}-{key[1]}-{recorder}-to-{replayer}-plain")
            row.append(SYMBOL[cell["status"]] if cell else "")
        rows.append(f"| {key[0]}, {key[1]} | " + " | ".join(row) + " |")
    head = f"**plain recordings by {recorder}** (rows: server and transport; columns replay)"
    return [head, "", "| server | " + " | ".join(replayers) + " |",
            "|---" * (len(replayers) + 1) + "|", *rows, ""]  # fmt: skip


def behaviours(failed: list[dict[str, Any]]) -> list[str]:
    """The failing cells grouped by the behaviour they wait for, with one example each."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for c in failed:
        for key in classify(c):
            groups.setdefault(key, []).append(c)
    if not groups:
        return []
    lines = ["| behaviour a failing cell waits for | cells | for example |", "|---|---|---|"]
    for key, members in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        text = BEHAVIOURS.get(key, "other")
        lines.append(f"| {text} | {len(members)} | {members[0]['id']}: {seen(members[0])} |")
    return [*lines, ""]


def render(cells: list[dict[str, Any]], *, details: bool = True) -> str:
    """The grids, the failing cells grouped by behaviour, and (DETAILS) one line per
    failing cell."""
    counts: dict[str, int] = {}
    for c in cells:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    summary = ", ".join(f"{n} {SYMBOL[s]}" for s, n in sorted(counts.items()))
    lines = [f"{len(cells)} cells: {summary}.", ""]
    lines += grids(cells)
    failed = [c for c in cells if c["status"] in ("xfail", "fail", "xpass", "racy")]
    lines += behaviours(failed)
    if failed and details:
        lines.append("| cell | status | what the replaying client saw (replay / live) |")
        lines.append("|---|---|---|")
        for c in failed:
            lines.append(f"| {c['id']} | {SYMBOL[c['status']]} | {seen(c)} |")
        lines.append("")
    skipped = sorted({c["note"] for c in cells if c["status"] == "n/a"})
    if skipped:
        lines.append("n/a: the live server refused the recording client, so it recorded only")
        lines.append("the refusal, replayed only to that client: " + ", ".join(skipped) + ".")
        lines.append("")
    return "\n".join(lines)


def write_table(path: Path = TABLE, results: Path = RESULTS) -> bool:
    cells = load(results)
    if not cells:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(cells), "utf-8")
    return True


def expected_failures(*runs: Path) -> dict[str, dict[str, str]]:
    """The marks for tests/e2e/client_matrix_expected.json from one or more runs' results:
    a cell that failed in every run that had it is under "fail"; one that failed in some
    and passed in others, or failed only in delivery (DELIVERY), is "racy"."""
    outcomes: dict[str, list[bool]] = {}
    reasons: dict[str, str] = {}
    timing: set[str] = set()
    for results in runs or (RESULTS,):
        for cell in load(results, marked=False):
            if cell["status"] == "n/a":
                continue
            failed = cell["status"] in ("fail", "xfail")
            outcomes.setdefault(cell["id"], []).append(failed)
            if failed:
                reasons.setdefault(cell["id"], reason(cell))
                if set(classify(cell)) <= DELIVERY:
                    timing.add(cell["id"])
    marks: dict[str, dict[str, str]] = {"fail": {}, "racy": {}}
    for cell_id, failed in sorted(outcomes.items()):
        if all(failed) and cell_id not in timing:
            marks["fail"][cell_id] = reasons[cell_id]
        elif any(failed):
            marks["racy"][cell_id] = "racy today: " + reasons[cell_id]
    return marks


#: What a failing cell shows that depends on how the client's reads split the replay's
#: writes: such a cell can pass on an idle machine, so its mark is never strict.
DELIVERY = {"progress", "logs"}


#: The head of docs/client-matrix.md (``--doc``): what the page is and how it is made.
DOC_HEAD = """# The client matrix

Which clients a cassette serves, as the last full run of the cross-client matrix found
it (`CASSETTE_FULL_MATRIX=1 pytest -n 2 tests/e2e/test_client_matrix.py`, then
`python -m tests.e2e.matrix_table --doc build/client-matrix`). How a cell is run and
judged: [Which clients a cassette serves](matching.md#which-clients-a-cassette-serves);
what the replay serves by the era of the cassette and of the client:
[A client of the other era](matching.md#a-client-of-the-other-era).

In the grids, rows are the recording client and columns the replaying one. **pass**: the
client observed on replay what it observed live; **refused**: the live server refused it,
or the recording cannot tell whether the server would have served its era, and the replay
refused it with a miss that says how to record for it; **legacy**: a dual-era client of a
legacy cassette, served the legacy session the recording proves (its probe answered
`-32601`, it fell back to `initialize`), with no miss and no step failing that passed
live; **announced**: a legacy client of a 2026-07-28 cassette that saw other results
than live only from tool calls the replay announced (in its log, and in every error it
answered for the tool: this tool's legacy behaviour was not recorded, and `cassette
variant TAPE --as legacy` records it), with no other miss; **xfail**: a failure listed, with
why, in `tests/e2e/client_matrix_expected.json`; **n/a**: the live server refused the
recording client, so its cassette holds only that refusal.

"""


if __name__ == "__main__":
    # python -m tests.e2e.matrix_table [DIR]                the table of the run in DIR
    # python -m tests.e2e.matrix_table --doc DIR [NOTE]     docs/client-matrix.md's text
    # python -m tests.e2e.matrix_table --expected DIR...    the marks those runs call for,
    #                                                       for client_matrix_expected.json
    args = sys.argv[1:]
    if args[:1] == ["--expected"]:
        marks = expected_failures(*(Path(a) for a in args[1:]))
        sys.stdout.write(json.dumps(marks, indent=1, sort_keys=True) + "\n")
    elif args[:1] == ["--doc"]:
        note = " ".join(args[2:])
        sys.stdout.write(DOC_HEAD + (note + "\n\n" if note else "") + render(load(Path(args[1]))))
    else:
        sys.stdout.write(render(load(Path(args[0]) if args else RESULTS)))
