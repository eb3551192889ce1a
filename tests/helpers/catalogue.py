"""The suite's catalogue of bad inputs, and every command each one is given to.

Shared by ``tests/e2e/test_bad_input_catalogue.py`` (which asserts that each case ends
with one clear line and a documented exit code, never 70, within a time and memory bound)
and ``benchmarks/bad_inputs.py`` (which reports each case's time and peak memory).

A *file* is made in a folder by ``make_files``: things that are not cassettes at all (a
folder, a FIFO, a loop of links, a link to ``/dev/zero``, a sparse gigabyte without a
newline, byte order marks, binary, text), and cassettes that are wrong in one way each (a
header only, no successful exchange, a bad strategy, bad redaction rules, lists in the
target, a newer format, nesting too deep, NaN, a header cut off, bytes that are not
UTF-8). Manifests get the same treatment, plus NaN and wrong types; scenarios files
(``record --scenarios``) the manifests' files, plus NaN and a TOML date in a step. Each
*command* takes a file's path where it reads (or writes) one; the rest are bad option
values and servers that cannot be run or reached.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Final

import attrs

ROOT: Final = Path(__file__).resolve().parents[2]
GOOD: Final = ROOT / "examples" / "everything.jsonl"
RAW: Final = ROOT / "tests" / "servers" / "raw_server.py"

HEADER: Final = {
    "kind": "header",
    "format": 1,
    "transport": "stdio",
    "recorder": {"name": "t", "version": "0"},
    "started_at": "2026-01-01T00:00:00Z",
}
ASKED: Final = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
REFUSED: Final = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "no token"}}


def _lines(*objects: object) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objects)


def _message(direction: str, message: object) -> dict[str, object]:
    return {"kind": "message", "t": 0.1, "dir": direction, "message": message}


def _header(**changes: object) -> dict[str, object]:
    return {**HEADER, **changes}


def _sparse(path: Path) -> None:
    with path.open("wb") as file:
        file.truncate(1 << 30)  # a gigabyte of zeros, no newline, no disk used


def _deep() -> bytes:
    nested = ("[" * 300 + "]" * 300).encode()
    return _lines(HEADER) + b'{"kind":"message","t":0,"dir":"c2s","message":' + nested + b"}\n"


def _loop(path: Path) -> None:
    other = path.with_name(path.name + ".b")
    path.symlink_to(other)
    other.symlink_to(path)


#: name -> bytes to write, or a function that makes the path (None: leave it missing).
CASSETTES: Final[dict[str, bytes | Callable[[Path], None] | None]] = {
    "missing": None,
    "directory": lambda p: p.mkdir(),
    "fifo": os.mkfifo,
    "link-loop": _loop,
    "link-to-dev-zero": lambda p: p.symlink_to("/dev/zero"),
    "sparse-gigabyte": _sparse,
    "utf8-bom": b"\xef\xbb\xbf" + _lines(HEADER),
    "utf16-bom": b"\xff\xfe" + json.dumps(HEADER).encode("utf-16-le"),
    "empty": b"",
    "not-json": b"this is not a cassette\n",
    "binary": bytes(range(256)) * 4,
    "not-utf8": _lines(HEADER) + b'{"kind":"stderr","t":0,"text":"\xff\xfe"}\n',
    "header-only": _lines(HEADER),
    "no-success": _lines(HEADER, _message("c2s", ASKED), _message("s2c", REFUSED)),
    "bad-strategy": _lines(_header(target={"strategy": "fuzzy"}), _message("c2s", ASKED)),
    "bad-rules": _lines(_header(redaction={"salt": "ab", "patterns": 5}), _message("c2s", ASKED)),
    "lists-in-target": _lines(_header(target={"url": ["http://x"], "command": [1]})),
    "newer-format": _lines(_header(format=99)),
    "too-deep": _deep(),
    "nan": _lines(HEADER) + b'{"kind":"message","t":NaN,"dir":"c2s","message":{}}\n',
    "cut-header": json.dumps(HEADER).encode()[:40],
}

#: Manifests: the same kinds of file, and manifests wrong in one way each.
MANIFESTS: Final[dict[str, bytes | Callable[[Path], None] | None]] = {
    "missing.json": None,
    "directory.json": lambda p: p.mkdir(),
    "fifo.json": os.mkfifo,
    "link-to-dev-zero.json": lambda p: p.symlink_to("/dev/zero"),
    "sparse-gigabyte.json": _sparse,
    "utf8-bom.json": b'\xef\xbb\xbf{"manifest": 1}',
    "binary.json": bytes(range(256)),
    "not-json.json": b"{nope",
    "array.json": b"[1, 2]",
    "nan.json": b'{"manifest": 1, "tools": [{"name": "t", "inputSchema": {}, "x": NaN}]}',
    "nan.toml": b'manifest = 1\n[[tools]]\nname = "t"\ninputSchema = {}\nx = nan\n',
    "wrong-types.json": b'{"manifest": 1, "tools": [{"name": 7, "inputSchema": "none"}]}',
    "newer.json": b'{"manifest": 99}',
    "wrong-suffix.yaml": b"manifest: 1\n",
}


_SCENARIO: Final = (
    'format = 1\n[target]\ncommand = ["python3", "-c", "pass"]\n[[scenarios]]\nname = "n"\n'
    'steps = [{ call = "echo", arguments = { text = %s } }]\n'
)

#: Scenarios files (``record --scenarios``): the manifests' bad files (the same kinds, with
#: the suffixes a scenarios file takes), and scenarios holding what JSON cannot carry.
SCENARIOS: Final[dict[str, bytes | Callable[[Path], None] | None]] = {
    **MANIFESTS,
    "nan-scenario.toml": (_SCENARIO % "nan").encode(),
    "date-scenario.toml": (_SCENARIO % "1979-05-27").encode(),
    "nan-scenario.json": b'{"format": 1, "scenarios": [{"name": "n", "steps": [{"x": NaN}]}]}',
}


def make_files(folder: Path) -> dict[str, Path]:
    """Every catalogued file, made in ``folder``; returns name -> path."""
    out: dict[str, Path] = {}
    for table in (CASSETTES, SCENARIOS):
        for name, content in table.items():
            path = folder / name
            if isinstance(content, bytes):
                path.write_bytes(content)
            elif content is not None:
                content(path)
            out[name] = path
    (folder / "afile").write_text("a file where a folder should be\n")
    out["through-a-file"] = folder / "afile" / "x.jsonl"
    return out


@attrs.frozen
class Case:
    """One command line; ``codes`` are the exit codes docs/cli.md documents for it."""

    name: str
    argv: tuple[str, ...]
    codes: frozenset[int]


READS: Final = frozenset({0, 1, 2, 3})  # lint, show, diff, redact
RUNS: Final = frozenset({0, 2, 3, 4})  # variant: it runs the server


def cassette_cases(path: Path, out: Path) -> list[Case]:
    """Every command that reads a cassette, given ``path`` where it reads one."""
    p, o = str(path), str(out)
    server = ("--", "python3", str(RAW))
    once = ("--mode", "once", *server)
    return [
        Case("lint", ("lint", p), READS),
        Case("show", ("show", p), READS),
        Case("show-json", ("show", p, "--format", "json"), READS),
        Case("show-html", ("show", p, "--html", o + ".html"), READS),
        Case("show-against", ("show", str(GOOD), "--against", p), READS),
        Case("diff", ("diff", p, str(GOOD)), READS),
        Case("redact-scan", ("redact", "--scan", p), READS),
        Case("redact", ("redact", p, "-o", o + ".jsonl"), READS),
        Case("distill", ("distill", p, "--as-mock", "-o", o + ".json"), frozenset({0, 2, 3})),
        Case("check", ("check", p), READS),  # offline: what it recorded
        # the file read as a run's report (a cassette holds no replay of itself: 2)
        Case("prune", ("prune", p, "--against", p), frozenset({2, 3})),
        Case("replay", ("replay", p, "-q"), frozenset({0, 1, 2, 3})),
        Case("replay-once", ("replay", p, "-q", *once), frozenset({0, 1, 3, 4})),
        Case("verify", ("verify", p, *server), frozenset({0, 1, 2, 3})),
        Case("verify-update", ("verify", p, "--update", *server), frozenset({0, 1, 2, 3})),
        Case("record-to", ("record", "-o", p, *server), frozenset({2, 3, 4})),
        Case("variant", ("variant", p, "--as", "bare", "--timeout", "5", *server), RUNS),
    ]


def manifest_cases(path: Path) -> list[Case]:
    """Every command that reads a manifest, given ``path``."""
    return [
        Case("mock", ("mock", str(path), "-q"), frozenset({0, 1, 2, 3})),
        Case("mock-validate", ("mock", "--validate", str(path)), frozenset({0, 1, 2, 3})),
    ]


def scenarios_cases(path: Path, out: Path) -> list[Case]:
    """``record --scenarios``, given ``path`` as its scenarios file."""
    return [
        Case("record-scenarios", ("record", "--scenarios", str(path), "-o", str(out)), READS),
    ]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def other_cases(folder: Path, taken_port: int) -> list[Case]:
    """Bad option values, and servers that cannot be run, reached, or that exit at once."""
    out = str(folder / "other.jsonl")
    gone = f"http://127.0.0.1:{closed_port()}/mcp"
    taken = ("--front", "http", "--port", str(taken_port))
    mock = str(ROOT / "examples" / "everything.mock.json")
    exits = ("python3", "-c", "import sys; print('no token', file=sys.stderr); sys.exit(3)")
    record, usage = frozenset({2, 3, 4}), frozenset({2})
    sessions = ("record", "-o", out, "--mode", "once", "--sessions")
    bad_pattern = ("--redact-pattern", "(", "--", "true")
    nan_timeout = ("--upstream-timeout", "nan", "--", "true")

    def rec(name: str, *argv: str) -> Case:
        return Case(name, ("record", "-o", out, *argv), record)

    return [
        rec("record-no-scheme", "--upstream", "localhost:3001/mcp"),
        rec("record-ftp", "--upstream", "ftp://127.0.0.1/mcp"),
        rec("record-bad-port", "--upstream", "http://h:99999/"),
        rec("record-no-server", "--", "no-such-server"),
        rec("record-server-exits", "--", *exits),
        rec("record-unreachable", "--transport", "tcp", "--upstream", "tcp://127.0.0.1:1"),
        Case("check-no-scheme", ("check", "--url", "localhost:3001/mcp"), usage),
        Case("check-bad-port", ("check", "--url", "http://127.0.0.1:99999/mcp"), usage),
        Case("check-unreachable", ("check", "--url", gone, "--timeout", "10"), usage),
        Case("check-no-server", ("check", "--stdio", "no-such-server"), usage),
        Case("check-server-exits", ("check", "--stdio", "python3 -c 'exit(3)'"), usage),
        Case("verify-no-server", ("verify", str(GOOD), "--", "no-such-server"), usage),
        Case("verify-unreachable", ("verify", str(GOOD), "--upstream", gone), usage),
        Case("verify-bad-url", ("verify", str(GOOD), "--upstream", "ftp://x/"), usage),
        Case("replay-port-taken", ("replay", str(GOOD), *taken), frozenset({4})),
        Case("replay-unknown-front", ("replay", str(GOOD), "--front", "pigeon"), usage),
        Case("replay-bad-strategy", ("replay", str(GOOD), "--strategy", "fuzzy"), usage),
        Case("mock-port-taken", ("mock", mock, *taken), frozenset({4})),
        # option values checked before the banner: ranges, folders, finite numbers
        Case("replay-port-out-of-range", ("replay", str(GOOD), *taken[:3], "99999"), usage),
        Case("mock-port-negative", ("mock", mock, *taken[:3], "-1"), usage),
        Case("record-sessions-not-a-folder", (*sessions, "/dev/null", "--", "true"), usage),
        Case("record-bad-redact-pattern", ("record", "-o", out, *bad_pattern), usage),
        Case("record-nan-upstream-timeout", ("record", "-o", out, *nan_timeout), usage),
        Case("replay-nan-pace-scale", ("replay", str(GOOD), "--pace-scale", "nan"), usage),
        Case("replay-infinite-pace-cap", ("replay", str(GOOD), "--pace-cap", "inf"), usage),
        Case("replay-negative-answer-timeout", ("replay", str(GOOD), "--answer-timeout=-1"), usage),
        Case("verify-nan-timeout", ("verify", str(GOOD), "--timeout", "nan", "--", "true"), usage),
    ]
