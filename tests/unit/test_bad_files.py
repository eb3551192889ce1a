"""Bounded on every input: only regular files are read, and no line beyond the limit.

Real file-system conditions (a FIFO, a loop of symbolic links, a link to ``/dev/zero``, a
sparse file of a gigabyte without a newline, byte order marks, a folder) given to the two
readers, cassettes and mock manifests: each is refused at once with one line naming the
path (and the line, where there is one), never a hang and never the whole file in memory.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cassette.client.scenarios import load_scenarios
from cassette.core.wire.limits import DEFAULT_MAX_BYTES, line_limit, set_max_message_bytes
from cassette.errors import (
    CassetteError,
    CassetteFormatError,
    CassetteNotFoundError,
    ManifestError,
    ScenarioError,
)
from cassette.mock.manifest import load_manifest
from cassette.store.files import LineTooLong, bounded_lines, write_atomic
from cassette.store.storage import Cassette

HEADER = {
    "kind": "header",
    "format": 1,
    "transport": "stdio",
    "recorder": {"name": "t", "version": "0"},
    "started_at": "x",
}


@pytest.fixture
def small_limit() -> Iterator[int]:
    set_max_message_bytes(1024)
    try:
        yield 1024
    finally:
        set_max_message_bytes(DEFAULT_MAX_BYTES)


def _fifo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    os.mkfifo(path)  # nobody ever writes: opening it to read the usual way blocks forever
    return path


def _loop(tmp_path: Path, name: str) -> Path:
    first, second = tmp_path / name, tmp_path / f"other-{name}"
    first.symlink_to(second)
    second.symlink_to(first)
    return first


def _zero(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.symlink_to("/dev/zero")  # reading never ends
    return path


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (_fifo, "is a FIFO (named pipe), not a cassette; only regular files are read"),
        (_loop, "cannot read: a loop of symbolic links"),
        (_zero, "is a character device, not a cassette; only regular files are read"),
        (lambda tmp, name: (tmp / name).mkdir() or tmp / name, "is a directory, not a cassette"),
    ],
)
def test_what_is_not_a_regular_file_is_refused_at_once(
    tmp_path: Path, make: object, reason: str
) -> None:
    path = make(tmp_path, "t.jsonl")  # type: ignore[operator]
    with pytest.raises(CassetteError) as caught:
        Cassette.load(path)
    assert str(caught.value).startswith(f"{path}: {reason}")


def test_a_missing_file_is_no_such_cassette(tmp_path: Path) -> None:
    with pytest.raises(CassetteNotFoundError, match=r"nope\.jsonl: no such cassette$"):
        Cassette.load(tmp_path / "nope.jsonl")


def test_a_sparse_gigabyte_without_newlines_is_refused_at_the_limit(
    tmp_path: Path, small_limit: int
) -> None:
    path = tmp_path / "sparse.jsonl"
    with path.open("wb") as file:
        file.truncate(1 << 30)  # a gigabyte of zeros that takes no disk
    with pytest.raises(CassetteFormatError) as caught:
        Cassette.load(path)
    assert str(caught.value).startswith(f"{path}:1: line longer than {line_limit()} bytes")
    assert "--max-message-bytes" in str(caught.value)


def test_a_long_line_later_in_the_file_is_named_by_its_number(
    tmp_path: Path, small_limit: int
) -> None:
    event = {"kind": "stderr", "t": 0, "text": "x" * (line_limit() + 10)}
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(HEADER) + "\n\n" + json.dumps(event) + "\n")
    with pytest.raises(CassetteFormatError, match=r"long\.jsonl:3: line longer than"):
        Cassette.load(path)
    with pytest.raises(CassetteFormatError, match=r"x\.jsonl:3: line longer than"):
        Cassette.loads(path.read_bytes(), "x.jsonl")  # in memory, the same rule


def test_a_line_within_the_limit_reads(tmp_path: Path, small_limit: int) -> None:
    path = tmp_path / "ok.jsonl"
    event = {"kind": "stderr", "t": 0, "text": "x" * 900}
    path.write_text(json.dumps(HEADER) + "\n" + json.dumps(event) + "\n")
    assert Cassette.load(path).events[0].text == "x" * 900  # type: ignore[union-attr]


class _Counting(io.BytesIO):
    """A file that counts the bytes it handed out."""

    given = 0

    def readline(self, size: int | None = -1) -> bytes:
        line = super().readline(size)
        self.given += len(line)
        return line


def test_reading_stops_one_byte_past_the_limit_of_a_line() -> None:
    file = _Counting(b"ok\n" + b"z" * 100_000)
    lines = bounded_lines(file, 1000)
    assert next(lines) == b"ok\n"
    with pytest.raises(LineTooLong) as caught:
        next(lines)
    assert caught.value.line == 2
    assert file.given == 3 + 1001  # never more of the long line than the limit and a byte


@pytest.mark.parametrize(
    ("start", "what"),
    [
        (b"\xef\xbb\xbf", "starts with a UTF-8 byte order mark (U+FEFF)"),
        (b"\xff\xfe", "is UTF-16 text (it starts with a UTF-16 byte order mark)"),
    ],
)
def test_a_byte_order_mark_is_named(tmp_path: Path, start: bytes, what: str) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(start + json.dumps(HEADER).encode() + b"\n")
    with pytest.raises(CassetteFormatError) as caught:
        Cassette.load(path)
    assert str(caught.value) == f"{path}:1: the file {what}; a cassette is UTF-8 without one"


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (_fifo, "is a FIFO (named pipe), not a manifest"),
        (_loop, "cannot read: a loop of symbolic links"),
        (_zero, "is a character device, not a manifest"),
    ],
)
def test_a_manifest_must_be_a_regular_file(tmp_path: Path, make: object, reason: str) -> None:
    path = make(tmp_path, "m.json")  # type: ignore[operator]
    with pytest.raises(ManifestError) as caught:
        load_manifest(path)
    assert str(caught.value).startswith(f"{path}: {reason}")


def test_a_manifest_over_the_limit_is_refused(tmp_path: Path, small_limit: int) -> None:
    path = tmp_path / "big.json"
    with path.open("wb") as file:
        file.truncate(1 << 30)
    # a file of definitions is bounded by the message limit, but never below the default
    bound = rf"big\.json: larger than {DEFAULT_MAX_BYTES} bytes, the size limit for a manifest"
    with pytest.raises(ManifestError, match=bound):
        load_manifest(path)


def test_a_manifest_with_a_byte_order_mark_is_named(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(b"\xef\xbb\xbf{}")
    with pytest.raises(ManifestError, match=r"m\.json:1: the file starts with a UTF-8 byte"):
        load_manifest(path)


def test_an_atomic_write_replaces_whole_or_not_at_all(tmp_path: Path) -> None:
    target = tmp_path / "out" / "page.html"
    write_atomic(target, b"first")
    write_atomic(target, b"second")
    assert target.read_bytes() == b"second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["page.html"]  # no leftovers


def test_an_atomic_write_through_a_file_names_the_file(tmp_path: Path) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("I am a file")
    with pytest.raises(CassetteError) as caught:
        write_atomic(blocker / "x.json", b"{}")
    assert str(caught.value) == (
        f"{blocker / 'x.json'}: cannot create it: {blocker} is a file, not a folder"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_file_we_may_not_read_is_named(tmp_path: Path) -> None:
    path = tmp_path / "secret.jsonl"
    path.write_text(json.dumps(HEADER) + "\n")
    path.chmod(0)
    with pytest.raises(CassetteError) as caught:
        Cassette.load(path)
    assert str(caught.value) == f"{path}: cannot read: Permission denied"


def test_a_scenarios_file_must_be_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "s.toml"
    os.mkfifo(fifo)
    with pytest.raises(ScenarioError, match=r"is a FIFO \(named pipe\), not a scenarios file"):
        load_scenarios(fifo)  # at once: a FIFO would block the read forever


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("nan", "nan is not a JSON number (JSON has no NaN or Infinity)"),
        ("-inf", "-inf is not a JSON number (JSON has no NaN or Infinity)"),
        ("1979-05-27", "a TOML date or time has no JSON form; quote it"),
    ],
)
def test_a_scenario_value_json_cannot_carry_is_refused_where_it_is(
    tmp_path: Path, value: str, reason: str
) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        'format = 1\n[target]\ncommand = ["x"]\n[[scenarios]]\nname = "n"\n'
        f'steps = [{{ call = "echo", arguments = {{ text = {value} }} }}]\n'
    )
    with pytest.raises(ScenarioError) as caught:
        load_scenarios(path)
    assert str(caught.value) == f"{path}: /scenarios/0/steps/0/arguments/text: {reason}"
