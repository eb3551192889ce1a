"""``show``'s views of a real session with a slow tool, a tool error, a JSON-RPC error
and a chatty stderr, recorded from ``tests/servers/waterfall_server.py`` through the
Python SDK: each request's duration and failure marks in the text and the JSON, and the
HTML waterfall in headless Chromium, where a screenshot of it is taken and checked.

The same picture is ``docs/show-waterfall.png``: with ``CASSETTE_DOCS_PICTURES=1`` this
test writes the screenshot it checked there, so the docs show what the suite saw.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_show_webdriver import WebDriver, driver  # noqa: F401 (the fixture)
from tests.e2e.test_tools_cli import _png_pixels
from tests.helpers.support import PY, ROOT, record_command, run, stdio_params

pytestmark = pytest.mark.e2e

WATERFALL_SERVER = ROOT / "tests" / "servers" / "waterfall_server.py"
PICTURE = ROOT / "docs" / "show-waterfall.png"
#: the server's slow tool sleeps this long (its default); the answer cannot come sooner
SLOW = 1.2
RED, BLUE = (198, 40, 40), (59, 111, 209)
#: the narrowest bar drawn, in CSS pixels (``.bar``'s ``min-width``, cassette/tools/waterfall.py)
MIN_BAR = 3.0
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25"},
}
INITIALIZE_OK = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}}


async def waterfall_session(command: list[str]) -> dict[str, Any]:
    """What a person's agent did: look things up, ask for the slow report, upload (the
    tool fails), call a tool the server does not have (a JSON-RPC error), look up again."""
    from mcp import Client

    out: dict[str, Any] = {}
    async with Client(stdio_params(command)) as client:
        await client.list_tools()
        out["oslo"] = await client.call_tool("lookup", {"key": "oslo"})
        out["report"] = await client.call_tool("slow_report", {"period": "week"})
        out["bergen"] = await client.call_tool("lookup", {"key": "bergen"})
        out["upload"] = await client.call_tool("flaky_upload", {"file": "report.csv"})
        try:
            await client.call_tool("archive", {})
        except Exception as exc:  # the SDK raises the JSON-RPC error
            out["archive"] = str(exc)
        out["tromso"] = await client.call_tool("lookup", {"key": "tromso"})
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tape = tmp_path_factory.mktemp("waterfall") / "waterfall.jsonl"
    out = run(lambda: waterfall_session(record_command(tape, [PY, str(WATERFALL_SERVER)])))
    assert out["upload"].is_error
    assert "Unknown tool: archive" in out["archive"]
    return tape


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return subprocess.run(
        [PY, "-m", "cassette", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def _events(recorded: Path) -> list[dict[str, Any]]:
    """The requests of ``show --format json``, in the cassette's order."""
    events = json.loads(cli("show", str(recorded), "--format", "json").stdout)["events"]
    return [e for e in events if e["role"] == "request"]


def _row(text: str, label: str) -> str:
    """The message row whose label is ``label`` (not the stderr lines that quote it)."""
    (line,) = [line for line in text.splitlines() if re.search(f"(->|<-)  {label} ", line)]
    return line


def test_the_timeline_says_which_request_was_slow_and_which_failed(recorded: Path) -> None:
    shown = cli("show", str(recorded))
    assert shown.returncode == 0, shown.stderr
    slow = _row(shown.stdout, "tools/call slow_report")
    took = re.search(r"took (\d+\.\d+)s$", slow)
    assert took is not None, slow
    assert float(took.group(1)) >= SLOW - 0.001  # the answer cannot come before the sleep ends
    assert _row(shown.stdout, "tools/call flaky_upload").endswith(" FAILED (tool error)")
    assert _row(shown.stdout, "tools/call archive").endswith(" FAILED (error -32602)")
    assert _row(shown.stdout, "tool error").endswith(" FAILED")
    assert "\x1b" not in shown.stdout  # a pipe is no terminal
    (summary,) = [line for line in shown.stdout.splitlines() if line.startswith("main: ")]
    assert ", 2 failed (lines " in summary
    events = json.loads(cli("show", str(recorded), "--format", "json").stdout)["events"]
    # the slowest is the request that took longest, whichever the machine's load made it
    slowest = max(_events(recorded), key=lambda e: e["took"] or 0.0)
    assert f"; slowest {slowest['what']}, " in summary
    by_what = {e["what"]: e for e in events if e["role"] == "request"}
    assert by_what["tools/call slow_report"]["took"] >= SLOW - 0.001
    assert by_what["tools/call flaky_upload"]["outcome"] == "tool-error"
    assert by_what["tools/call archive"]["outcome"] == "error"
    assert {e["group"] for e in events} == {"main"}


def _background(web: WebDriver, element: str) -> tuple[int, ...]:
    found = re.findall(r"\d+", web.css(element, "background-color"))
    return tuple(int(n) for n in found[:3])


def _count(png: bytes, colour: tuple[int, int, int]) -> int:
    _, _, rows = _png_pixels(png)
    wanted = bytes(colour)
    return sum(row[x : x + 3] == wanted for row in rows for x in range(0, len(row), 3))


def test_the_waterfall_in_headless_chromium(
    recorded: Path,
    driver: WebDriver,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    page = tmp_path / "waterfall.html"
    assert cli("show", str(recorded), "--html", str(page)).returncode == 0
    driver.go(page.as_uri())
    (section,) = driver.find_all('.waterfall[data-group="main"]')
    rows: list[tuple[str, str, str, str]] = []  # label, row, track, bar
    for row in driver.find_all(".wf-row", within=section):
        (name,) = driver.find_all(".wf-name", within=row)
        (track,) = driver.find_all(".wf-track", within=row)
        (bar,) = driver.find_all(".bar", within=track)
        rows.append((driver.text(name).split(" ", 1)[1], row, track, bar))
    calls = [each for each in rows if each[0].startswith("tools/call ")]
    assert [label for label, *_ in calls] == [
        "tools/call lookup",
        "tools/call slow_report",
        "tools/call lookup",
        "tools/call flaky_upload",
        "tools/call archive",
        "tools/call lookup",
    ]
    # each bar is its call's duration to scale, the slow call's setting the scale (how
    # long the others took depends on the machine's load: the drawing must follow it)
    took = [e["took"] for e in _events(recorded) if e["what"].startswith("tools/call ")]
    widths = [driver.rect(bar)["width"] for *_, bar in calls]
    (slow,) = [n for n, (label, *_) in enumerate(calls) if label.endswith("slow_report")]
    assert took[slow] >= SLOW - 0.001
    for (label, *_), seconds, width in zip(calls, took, widths, strict=True):
        drawn = max(widths[slow] * seconds / took[slow], MIN_BAR)  # an instant answer shows
        assert abs(width - drawn) <= 1.5, (label, width, drawn)
    # failures are red, with their words beside the bar (not colour alone); others blue
    words = {"tools/call flaky_upload": "tool error", "tools/call archive": "error -32602"}
    for label, row, _, bar in calls:
        (took,) = driver.find_all(".wf-took", within=row)
        if label in words:
            assert driver.attribute(bar, "class") == "bar failed"
            assert _background(driver, bar) == RED
            assert driver.text(took).endswith(words[label])
        else:
            assert _background(driver, bar) == BLUE
            assert re.fullmatch(r"[\d.]+m?s", driver.text(took)), driver.text(took)
    # the server's stderr is folded, each run of it, and opens when asked
    folds = driver.find_all("details.stderr")
    assert folds
    for fold in folds:
        assert driver.attribute(fold, "open") is None
        (body,) = driver.find_all("pre", within=fold)
        assert not driver.displayed(body)
    (summary,) = driver.find_all("summary", within=folds[0])
    driver.click(summary)
    assert driver.displayed(driver.find_all("pre", within=folds[0])[0])
    # the picture: the waterfall as drawn, with its red and blue bars
    shot = driver.screenshot(section)
    (tmp_path / "waterfall.png").write_bytes(shot)
    width, height, _ = _png_pixels(shot)
    assert width > 800
    assert height > 150
    # at least half of each colour's bars is that colour (rounded corners, edges blended)
    area = {RED: 0.0, BLUE: 0.0}
    for label, *_, bar in calls:
        rect = driver.rect(bar)
        area[RED if label in words else BLUE] += rect["width"] * rect["height"]
    assert _count(shot, RED) > area[RED] / 2
    assert _count(shot, BLUE) > area[BLUE] / 2
    if os.environ.get("CASSETTE_DOCS_PICTURES"):
        PICTURE.write_bytes(shot)


def test_hundreds_of_requests_scroll_under_their_axis(
    driver: WebDriver,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    events = [{"kind": "message", "t": 0.0, "dir": "c2s", "message": INITIALIZE}]
    events.append({"kind": "message", "t": 0.001, "dir": "s2c", "message": INITIALIZE_OK})
    for n in range(2, 402):
        call = {"name": "lookup", "arguments": {"key": f"k{n}"}}
        ask = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call}
        result = {"content": [{"type": "text", "text": "x"}], "isError": n % 50 == 0}
        events.append({"kind": "message", "t": n / 100, "dir": "c2s", "message": ask})
        answer = {"jsonrpc": "2.0", "id": n, "result": result}
        events.append({"kind": "message", "t": n / 100 + 0.005, "dir": "s2c", "message": answer})
    tape = tmp_path / "many.jsonl"
    header = {"kind": "header", "format": 1, "transport": "stdio", "era": "legacy"}
    header |= {"recorder": {"name": "cassette-mcp", "version": "0"}, "started_at": "2026"}
    tape.write_text("\n".join(json.dumps(line) for line in [header, *events]) + "\n")
    page = tmp_path / "many.html"
    assert cli("show", str(tape), "--html", str(page)).returncode == 0
    driver.go(page.as_uri())
    (box,) = driver.find_all('.waterfall[data-group="main"] .wf')
    assert len(driver.find_all(".wf-row", within=box)) == 401
    assert len(driver.find_all(".bar.failed", within=box)) == 8
    # the list scrolls inside a box of its own, and its axis stays on top of it
    height, scrolled = driver.execute(
        "const box = arguments[0]; box.scrollTop = 4000;"
        "return [box.clientHeight, box.scrollHeight];",
        box,
    )
    assert height < 700 < scrolled
    (axis,) = driver.find_all(".wf-axis", within=box)
    assert abs(driver.rect(axis)["y"] - driver.rect(box)["y"]) < 3
    assert driver.displayed(axis)


def test_the_docs_show_the_picture() -> None:
    width, height, _ = _png_pixels(PICTURE.read_bytes())
    assert width > 800
    assert height > 150
    assert _count(PICTURE.read_bytes(), RED) > 50
    assert "](show-waterfall.png)" in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
