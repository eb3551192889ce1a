"""lint, diff, redact and show from the command line, on real recordings of server-everything."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from cassette import Cassette
from tests.e2e.test_stdio_sdk import everything_session, modern_session
from tests.helpers.support import (
    CHROMIUM_ARGS,
    MODERN_SERVER,
    NO_CHROMIUM,
    PY,
    ROOT,
    everything_command,
    record_command,
    run,
    scaled,
)

pytestmark = pytest.mark.e2e
EXAMPLE = ROOT / "examples" / "everything.jsonl"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "cassette", *args],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two recordings of the same scripted session against the pinned server-everything."""
    base = tmp_path_factory.mktemp("tapes")
    tapes = (base / "first.jsonl", base / "second.jsonl")
    for tape in tapes:
        run(lambda tape=tape: everything_session(record_command(tape, everything_command())))
    return tapes


def test_lint_a_real_recording_agrees_with_its_header(recordings: tuple[Path, Path]) -> None:
    for tape in (*recordings, EXAMPLE):
        result = cli("lint", str(tape))
        assert result.returncode == 0, result.stdout
        assert result.stdout == f"{tape}: header and frames agree\n"
        as_json = json.loads(cli("lint", str(tape), "--format", "json").stdout)
        assert as_json["ok"] is True
        assert as_json["findings"] == []


def test_lint_a_modern_recording(tmp_path: Path) -> None:
    tape = tmp_path / "modern.jsonl"
    run(lambda: modern_session(record_command(tape, [PY, str(MODERN_SERVER)])))
    result = cli("lint", str(tape))
    assert (result.returncode, result.stdout.strip()) == (0, f"{tape}: header and frames agree")


def test_lint_reports_each_finding_at_its_line(tmp_path: Path) -> None:
    lines = EXAMPLE.read_text().splitlines()
    header = json.loads(lines[0])
    header["era"] = "modern"  # an initialize exchange now contradicts the header
    lines[0] = json.dumps(header)
    del lines[11]  # the answer to get-sum (file line 12)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    result = cli("lint", str(bad))
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"{bad}:2: error: [era] initialize request in a modern-era cassette (modern sessions "
        "have no handshake)",
        f"{bad}:11: error: [unanswered] request tools/call (id 4) has no server answer",
        f"{bad}: 2 finding(s) (2 errors, 0 warnings)",
    ]


def test_diff_of_two_recordings_of_one_session_is_empty(recordings: tuple[Path, Path]) -> None:
    first, second = recordings
    result = cli("diff", str(first), str(second))
    assert (result.returncode, result.stdout) == (
        0,
        f"{first} and {second}: no semantic differences\n",
    )


def test_diff_names_what_a_rerecording_changed(tmp_path: Path) -> None:
    lines = []
    for line in EXAMPLE.read_text().splitlines():
        event = json.loads(line)
        message = event.get("message", {})
        if event["kind"] == "header":
            event["protocol_version"] = "2025-06-18"
        if message.get("id") == 4 and "result" in message:
            message["result"]["content"][0]["text"] = "The sum is 42."
        if message.get("id") == 5:
            continue  # the prompt was not fetched this time
        lines.append(json.dumps(event))
    changed = tmp_path / "changed.jsonl"
    changed.write_text("\n".join(lines) + "\n")
    result = cli("diff", str(EXAMPLE), str(changed))
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"--- {EXAMPLE}",
        f"+++ {changed}",
        "~ header protocol_version: '2025-11-25' -> '2025-06-18'",
        f'- prompts/get {{"name":"simple-prompt"}}  ({EXAMPLE}:13)',
        f'~ tools/call get-sum {{"a":2,"b":40}}  ({EXAMPLE}:11 -> {changed}:11)',
        '    /result/content/0/text: "The sum of 2 and 40 is 42." -> "The sum is 42."',
        "1 removed, 0 added, 1 changed, header changed",
    ]
    data = json.loads(cli("diff", str(EXAMPLE), str(changed), "--format", "json").stdout)
    assert data["changed"][0]["paths"][0]["path"] == "/result/content/0/text"
    ignored = cli("diff", str(EXAMPLE), str(changed), "--ignore", "/result/content")
    assert "~ tools/call" not in ignored.stdout
    assert ignored.returncode == 1


def test_redact_scan_and_rewrite(tmp_path: Path) -> None:
    assert cli("redact", "--scan", str(EXAMPLE)).returncode == 0
    lines = EXAMPLE.read_text().splitlines()
    call = json.loads(lines[8])
    call["message"]["params"]["arguments"]["message"] = "ghp_" + "a1B2" * 8
    lines[8] = json.dumps(call)
    leaky = tmp_path / "leaky.jsonl"
    leaky.write_text("\n".join(lines) + "\n")
    scan = cli("redact", "--scan", str(leaky))
    assert scan.returncode == 1
    assert scan.stdout.splitlines()[0] == (
        f"{leaky}:9: unredacted secret (github) in message /params/arguments/message"
    )
    out = tmp_path / "clean.jsonl"
    written = cli("redact", str(leaky), "-o", str(out))
    assert written.returncode == 0, written.stderr
    assert written.stdout == f"{out}: written; 1 line(s) redacted from {leaky}\n"
    clean = Cassette.load(out)
    assert clean.header.redaction is not None
    argument = next(clean.messages("c2s"), None)
    assert argument is not None
    assert "[REDACTED:github:" in out.read_text()
    assert cli("redact", "--scan", str(out)).returncode == 0
    assert cli("lint", str(out)).returncode == 0
    # refuses to overwrite, as record does
    again = cli("redact", str(leaky), "-o", str(out))
    assert again.returncode == 3
    assert "refusing to overwrite" in again.stderr


def test_usage_and_cassette_errors_have_stable_codes(tmp_path: Path) -> None:
    assert cli("redact", str(EXAMPLE)).returncode == 2  # neither -o nor --scan
    assert cli("diff", str(EXAMPLE)).returncode == 2
    assert cli("lint", str(EXAMPLE), "--format", "xml").returncode == 2
    missing = cli("lint", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 3
    assert missing.stderr.startswith("cassette: error:")
    assert "Traceback" not in missing.stderr


def test_show_prints_a_timeline(recordings: tuple[Path, Path]) -> None:
    result = cli("show", str(EXAMPLE))
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{EXAMPLE}: stdio recording, legacy era, 2025-11-25")
    assert lines[1].startswith("  session main: serves legacy 2024-10-07 to 2025-11-25;")
    assert lines[2].startswith("  probed surface (the recorder's own sessions, not the client's)")
    del lines[1:3]  # the session's fit line and the probes' line; the rest is the timeline
    # a request's row ends with how long its answer took
    assert lines[1].split() == [
        "2",
        "+0.003s",
        "->",
        "initialize",
        "id=1",
        "158",
        "B",
        "took",
        "403ms",
    ]
    assert lines[6].split()[2:5] == ["<-", "notifications/tools/list_changed", "(server-initiated)"]
    assert lines[-2].split() == ["15", "+0.774s", "exit", "0"]
    assert lines[-1] == (
        "main: 5 request(s) over 771ms, 0 failed; slowest initialize, 403ms (line 2)"
    )
    events = json.loads(cli("show", str(recordings[0]), "--format", "json").stdout)["events"]
    roles = {e["role"] for e in events}
    assert {"request", "response", "notification", "server-notification"} <= roles


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.details: list[dict[str, str | None]] = []
        self.external: list[str] = []
        self.lanes: list[str] = []
        self._in_lane = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "details":
            self.details.append(found)
        if tag in ("script", "link", "img") or found.get("src"):
            self.external.append(tag)
        self._in_lane = found.get("class") == "lane"

    def handle_data(self, data: str) -> None:
        if self._in_lane:
            self.lanes.append(data)
            self._in_lane = False


def test_show_html_is_one_self_contained_sequence_diagram(tmp_path: Path) -> None:
    page = tmp_path / "session.html"
    result = cli("show", str(EXAMPLE), "--html", str(page))
    assert result.returncode == 0
    assert result.stdout.endswith(f"wrote {page}\n")
    parser = _Page()
    parser.feed(page.read_text())
    assert parser.lanes == ["client", "server"]
    assert parser.external == []  # no scripts, stylesheets or images to fetch
    classes = [d["class"] or "" for d in parser.details]
    # the recorder's probes folded under one heading, every message of the session
    # expandable, and the server's stderr line folded
    assert len(classes) == 14
    assert classes[0] == "probes"
    assert classes.count("stderr") == 1
    assert all("open" not in d for d in parser.details)  # folded, all of them
    assert classes[1] == "msg c2s request"
    assert "msg s2c server-notification" in classes
    assert '"Echo: hello from a cassette"' in page.read_text()


def _png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA PNG (what Chromium writes) into rows of RGB triples."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 3
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8
            assert color in (2, 6)
            channels = 4 if color == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = (
        zlib.decompress(idat),
        width * channels,
        [],
        bytearray(width * channels),
    )
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = prev[i], prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 255
        rows.append(b"".join(bytes(line[i : i + 3]) for i in range(0, stride, channels)))
        prev = line
    return width, height, rows


def test_show_html_renders_in_headless_chromium(tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip(NO_CHROMIUM)
    page, shot = tmp_path / "session.html", tmp_path / "shot.png"
    assert cli("show", str(EXAMPLE), "--html", str(page)).returncode == 0
    subprocess.run(
        [
            chromium,
            *CHROMIUM_ARGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=scaled(120),
        check=False,
    )
    assert shot.exists(), "chromium wrote no screenshot"
    width, height, rows = _png_pixels(shot.read_bytes())
    assert (width, height) == (1200, 900)
    counts: dict[bytes, int] = {}
    for row in rows:
        for x in range(0, len(row), 3):
            counts[row[x : x + 3]] = counts.get(row[x : x + 3], 0) + 1
    # the fills of client requests, server answers and the server-initiated notification
    assert counts.get(bytes((0xE3, 0xF2, 0xE3)), 0) > 20_000
    assert counts.get(bytes((0xE7, 0xEE, 0xFB)), 0) > 20_000
    assert counts.get(bytes((0xFD, 0xEB, 0xD3)), 0) > 5_000
    assert counts.get(bytes((0xFF, 0xFF, 0xFF)), 0) < width * height * 0.9


def test_every_tool_command_has_help_and_is_listed() -> None:
    listed = cli("--help").stdout
    for command in (
        "lint",
        "diff",
        "redact",
        "show",
        "check",
        "verify",
        "prune",
        "distill",
        "mock",
    ):
        assert command in listed
        result = cli(command, "--help")
        assert result.returncode == 0
        assert result.stdout.startswith("usage: cassette ")


def test_show_against_another_session_marks_misses_and_unplayed(tmp_path: Path) -> None:
    same = cli("show", str(EXAMPLE), "--against", str(EXAMPLE), "--strategy", "strict")
    assert same.returncode == 0, same.stderr
    assert same.stdout.splitlines()[-1] == (
        f"against {EXAMPLE} (strategy strict): 0 miss(es), 0 of 5 recorded request(s) of "
        f"{EXAMPLE} unplayed"
    )
    other = tmp_path / "other.jsonl"
    other.write_text(EXAMPLE.read_text().replace("hello from a cassette", "hello from elsewhere"))
    page = tmp_path / "page.html"
    result = cli("show", str(EXAMPLE), "--against", str(other), "--html", str(page))
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert "[unplayed]" in next(x for x in lines if "tools/call echo" in x)
    miss = next(i for i, x in enumerate(lines) if x.startswith("against "))
    assert lines[miss].endswith(
        "1 miss(es), 1 of 5 recorded request(s) of " + f"{EXAMPLE} unplayed"
    )
    assert lines[miss + 1].startswith(f'  {other}:9: tools/call "echo" not recorded: arguments')
    assert (
        '/message: recorded "hello from a cassette", received "hello from elsewhere"'
        in (lines[miss + 1])
    )
    assert '<span class="tag">unplayed</span>' in page.read_text()
    as_json = json.loads(
        cli("show", str(EXAMPLE), "--against", str(other), "--format", "json").stdout
    )
    assert as_json["against"]["unplayed"] == [9]
    assert [(m["line"], m["kind"], m["closest_line"]) for m in as_json["against"]["misses"]] == [
        (9, "not-recorded", 9)
    ]
    lonely = cli("show", str(EXAMPLE), "--strategy", "loose")
    assert (lonely.returncode, lonely.stderr) == (
        2,
        "cassette: error: --strategy needs --against OTHER (the session to match against TAPE)\n",
    )
    absent = cli("show", str(EXAMPLE), "--against", str(tmp_path / "absent.jsonl"))
    assert absent.returncode == 3
    assert absent.stderr == f"cassette: error: {tmp_path / 'absent.jsonl'}: no such cassette\n"
