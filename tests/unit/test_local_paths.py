"""The recorder writes the machine's folders portably in stderr and raw lines, and keeps no
stderr when told: sans-IO, plain values (``cassette.core.recording.local_paths``)."""

from __future__ import annotations

import json

import pytest

from cassette.core.recording.local_paths import LocalPaths
from cassette.core.recording.recorder import Recorder
from cassette.core.redaction.redactor import Redactor
from cassette.core.wire.model import RawEvent, StderrEvent

PATHS = LocalPaths(project=["/home/ada/src/proj"], home=["/home/ada"])


@pytest.mark.parametrize(
    ("text", "portable"),
    [
        ('  File "/home/ada/src/proj/server.py", line 3', '  File "server.py", line 3'),
        ("cd /home/ada/src/proj && make", "cd . && make"),
        ("/home/ada/src/proj/", "./"),
        ("cache: /home/ada/.cache/x.db", "cache: ~/.cache/x.db"),
        ("HOME=/home/ada", "HOME=~"),
        ('"/home/ada"', '"~"'),
        ("/home/ada/src/projX/a", "~/src/projX/a"),  # not the project: a sibling of it
        ("/home/ada2/x", "/home/ada2/x"),  # another user's folder
        ("/mnt/home/ada/x", "/mnt/home/ada/x"),  # a longer path that ends the same
        ("no path here", "no path here"),
    ],
)
def test_folders_are_written_relative_and_as_home(text: str, portable: str) -> None:
    assert PATHS.portable(text) == portable


def test_a_windows_folder_is_replaced_in_both_spellings() -> None:
    paths = LocalPaths(project=[r"C:\Users\ada\proj"], home=[r"C:\Users\ada"])
    text = r"at C:\Users\ada\proj\x.py and C:/Users/ada/AppData/y"
    assert paths.portable(text) == r"at x.py and ~/AppData/y"


def test_a_file_systems_root_is_never_replaced() -> None:
    assert LocalPaths(project=["/"], home=["C:\\"]).portable("/etc/x C:\\y") == "/etc/x C:\\y"


def recorder(**options: object) -> Recorder:
    return Recorder(transport="stdio", started_at="2026-01-01T00:00:00.000Z", **options)  # type: ignore[arg-type]


def opened(rec: Recorder) -> None:
    """A successful ``initialize``: the header is out and records flow."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    rec.observe("c2s", json.dumps(init).encode(), 0.0)
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}}
    rec.observe("s2c", json.dumps(answer).encode(), 0.1)


def test_the_recorder_writes_stderr_and_raw_lines_portably_then_redacts() -> None:
    rec = recorder(local=PATHS, redactor=Redactor())
    opened(rec)
    token = "ghp_Zq8vKx2LmN4pRt6wYb1cDf3gHj5kMn7sQv9X"
    (stderr,) = rec.stderr(f"/home/ada/src/proj/a.py: token {token}", 0.2)
    (raw,) = rec.observe("s2c", b"serving /home/ada/src/proj\n", 0.3)
    assert isinstance(stderr, StderrEvent)
    assert stderr.text.startswith("a.py: token [REDACTED:")
    assert isinstance(raw, RawEvent)
    assert raw.text == "serving ."
    # what a person is shown of stderr keeps the machine's folders
    assert "/home/ada/src/proj" in rec.redacted("/home/ada/src/proj/a.py")


def test_a_recorder_that_keeps_no_stderr_records_none_and_raw_lines_still() -> None:
    rec = recorder(keep_stderr=False, local=PATHS)
    opened(rec)
    assert rec.stderr("Traceback (most recent call last):", 0.2) == []
    assert [type(r) for r in rec.observe("s2c", b"not json\n", 0.3)] == [RawEvent]


def test_without_folders_lines_are_kept_as_they_are() -> None:
    rec = recorder()
    opened(rec)
    (stderr,) = rec.stderr("/home/ada/src/proj/a.py", 0.2)
    assert isinstance(stderr, StderrEvent)
    assert stderr.text == "/home/ada/src/proj/a.py"
