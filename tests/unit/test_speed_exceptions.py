"""A departure from the house rules for speed has a row in docs/architecture.md's
"Speed exceptions" table, with its figure; the code points there and quotes no figure,
which would go stale while the table is kept."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "docs" / "architecture.md"

#: a measured cost quoted in prose: "4.4 M instructions", "3.4 k instructions of a stdio
#: call", "2% of a replay's start-up", "4.6x what a plain class costs"
FIGURE = re.compile(
    r"\b\d[\d.,]*\s?[kM] instructions"
    r"|\b\d[\d.]*\s?% of (?:a|the|its|what)\b"
    r"|\b\d[\d.]*x (?:what|faster|slower|cheaper)\b"
    r"|\b\d[\d.,]*k instructions"
)


def _speed_rows() -> list[str]:
    text = TABLE.read_text(encoding="utf-8")
    section = text.split("## Speed exceptions", 1)[1]
    return [line for line in section.splitlines() if line.startswith("| ")][2:]


def test_no_module_quotes_a_benchmark_figure() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted((ROOT / "cassette").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if FIGURE.search(line)
    ]
    assert found == []


def test_every_row_names_files_that_exist_and_holds_a_figure() -> None:
    rows = _speed_rows()
    assert len(rows) >= 20
    for row in rows:
        where, _departure, buys = (cell.strip() for cell in row.strip("|").split(" | ")[:3])
        for path in re.findall(r"`(cassette/[\w/]+\.py)`", where):
            assert (ROOT / path).is_file(), f"{path} (a row of the speed-exceptions table)"
        assert re.search(r"\d", buys), f"no figure: {row[:80]}"
