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
SYMBOL = {"pass": "pass", "xfail": "xfail", "fail": "FAIL", "xpass": "XPASS", "n/a": "n/a"}


def load(results: Path = RESULTS) -> list[dict[str, Any]]:
    from tests.e2e.test_client_matrix import EXPECTED_FAILURES

    cells = []
    for path in sorted(results.glob("*.json")):
        cell = json.loads(path.read_text("utf-8"))
        expected = cell["id"] in EXPECTED_FAILURES
        if expected and cell["status"] == "fail":
            cell["status"] = "xfail"
        elif expected and cell["status"] == "pass":
            cell["status"] = "xpass"
        cell["reason"] = EXPECTED_FAILURES.get(cell["id"], "")
        cells.append(cell)
    return cells


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
    for step, pair in sorted(cell.get("diff", {}).items()):
        parts.append(
            f"{step}: replay `{short(pair['replay'], 120)}` / live `{short(pair['live'], 80)}`"
        )
    if cell.get("misses"):
        parts.append(f"misses: `{short('; '.join(cell['misses']))}`")
    return "; ".join(parts)


def render(cells: list[dict[str, Any]]) -> str:
    by_id = {c["id"]: c for c in cells}
    counts: dict[str, int] = {}
    for c in cells:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    summary = ", ".join(f"{n} {SYMBOL[s]}" for s, n in sorted(counts.items()))
    lines = [f"{len(cells)} cells: {summary}.", ""]
    for server in SERVERS:
        for transport in TRANSPORTS:
            grid = [f"{server}-{transport}-{r}-to-{p}" for r in CLIENTS for p in CLIENTS]
            if not any(i in by_id for i in grid):
                continue
            lines.append(f"**{server}, {transport}** (rows record, columns replay)")
            lines.append("")
            lines.append("| recorded by | " + " | ".join(CLIENTS) + " |")
            lines.append("|---" * (len(CLIENTS) + 1) + "|")
            for recorder in CLIENTS:
                row = []
                for replayer in CLIENTS:
                    cell = by_id.get(f"{server}-{transport}-{recorder}-to-{replayer}")
                    row.append(SYMBOL[cell["status"]] if cell else "")
                if any(row):
                    lines.append(f"| {recorder} | " + " | ".join(row) + " |")
            lines.append("")
    failed = [c for c in cells if c["status"] in ("xfail", "fail")]
    if failed:
        lines.append("| cell | status | what the replaying client saw (replay / live) |")
        lines.append("|---|---|---|")
        for c in failed:
            lines.append(f"| {c['id']} | {SYMBOL[c['status']]} | {seen(c)} |")
        lines.append("")
    skipped = [c for c in cells if c["status"] == "n/a"]
    if skipped:
        lines.append("n/a: the recording client was refused by the live server, so nothing was")
        lines.append("recorded: " + ", ".join(sorted({c["note"] for c in skipped})) + ".")
        lines.append("")
    return "\n".join(lines)


def write_table(path: Path = TABLE, results: Path = RESULTS) -> bool:
    cells = load(results)
    if not cells:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(cells), "utf-8")
    return True


if __name__ == "__main__":
    sys.stdout.write(render(load(Path(sys.argv[1]) if len(sys.argv) > 1 else RESULTS)))
