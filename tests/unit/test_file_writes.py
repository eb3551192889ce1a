"""Only the store writes files: an AST scan of every module of ``cassette``.

The store (``cassette/store/``) is the one place that creates, replaces, appends to,
truncates, moves or copies a file, so a cassette is always written the same way (one
atomic whole-file writer, one append path, the cassette's lock, the redaction gate). This
test reads the source of every other module and fails on any call that writes a file:

* ``open(...)``, ``io.open``, ``os.fdopen`` and ``<path>.open(...)`` with a mode that
  writes (``w``, ``a``, ``x`` or ``+``);
* ``<path>.write_text``, ``<path>.write_bytes``, ``<x>.truncate``, ``<path>.rename``;
* ``os.replace``, ``os.rename``, ``os.renames``, ``os.truncate``, ``os.ftruncate``;
* ``os.open`` with a flag that writes (``O_WRONLY``, ``O_RDWR``, ``O_CREAT``,
  ``O_TRUNC``, ``O_APPEND``, ``O_EXCL``), and ``os.write``;
* ``tempfile`` calls that create a file (``mkstemp``, ``mktemp``, ``NamedTemporaryFile``,
  ``TemporaryFile``, ``SpooledTemporaryFile``); a temporary *folder*
  (``TemporaryDirectory``, ``mkdtemp``) creates no file, and what is then written into
  it is held to these same rules;
* ``shutil.copy``, ``copy2``, ``copyfile``, ``copyfileobj``, ``copytree``, ``move``;
* deleting a file (``os.remove``, ``os.unlink``, ``<path>.unlink``): taking back a
  recording is the store's too (``cassette.store.takeback``), under the cassette's lock.

Printing is not writing a file: a write to the standard error stream (descriptor 2,
``sys.stderr``, ``sys.stderr.buffer``, ``sys.stderr.fileno()``) is how the command line
talks to people, and is allowed anywhere. So ``os.write(2, ...)`` and ``os.fdopen(2, "w")``
pass, while ``os.write(fd, ...)`` on any other descriptor does not.

Also exempt: the stdio transport's own descriptors (its stdin and stdout are the
protocol, not files): ``cassette/transports/stdio/transport.py``, ``cassette/transports/_fdio.py``,
the early spawn of a plain recording's server (``cassette/transports/stdio/_early.py``: the null
device for a child's unused streams, the ``done`` it tells the keeper on its pipe) and the
event loop backend ``cassette/transports/_asyncio_backend.py``.

A name imported from ``os``, ``io``, ``shutil`` or ``tempfile`` (``from os import
replace``) is followed; anything subtler (a call through a variable) is for review.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "cassette"

ALLOWED: Final = (
    "cassette/store/",
    "cassette/transports/stdio/transport.py",
    "cassette/transports/_fdio.py",
    "cassette/transports/stdio/_early.py",
    "cassette/transports/_asyncio_backend.py",
)

_WRITE_FLAGS: Final = frozenset(
    {"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND", "O_EXCL", "O_TMPFILE"}
)
_FORBIDDEN_FUNCTIONS: Final = frozenset(
    {
        "os.replace",
        "os.rename",
        "os.renames",
        "os.truncate",
        "os.ftruncate",
        "os.remove",
        "os.unlink",
        "tempfile.mkstemp",
        "tempfile.mktemp",
        "tempfile.NamedTemporaryFile",
        "tempfile.TemporaryFile",
        "tempfile.SpooledTemporaryFile",
        "shutil.copy",
        "shutil.copy2",
        "shutil.copyfile",
        "shutil.copyfileobj",
        "shutil.copytree",
        "shutil.move",
    }
)
_FORBIDDEN_METHODS: Final = frozenset({"write_text", "write_bytes", "truncate", "rename", "unlink"})
_OPENERS: Final = frozenset({"open", "io.open", "os.fdopen"})
_MODULES: Final = ("os", "io", "shutil", "tempfile")


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _aliases(tree: ast.Module) -> dict[str, str]:
    """``replace`` -> ``os.replace`` for ``from os import replace`` (and ``as`` names)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in _MODULES:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _is_stderr(node: ast.expr) -> bool:
    """Descriptor 2, ``sys.stderr``, ``sys.stderr.buffer``, ``sys.stderr.fileno()``."""
    if isinstance(node, ast.Constant) and node.value == 2:
        return True
    if isinstance(node, ast.Call) and not node.args:
        node = node.func
        if isinstance(node, ast.Attribute) and node.attr == "fileno":
            node = node.value
    name = _dotted(node)
    return name in ("sys.stderr", "sys.stderr.buffer", "sys.__stderr__")


def _mode(call: ast.Call, position: int) -> str | None:
    """The mode a call opens with, when written as a literal (``None``: reading)."""
    for keyword in call.keywords:
        if keyword.arg == "mode" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    if len(call.args) > position and isinstance(call.args[position], ast.Constant):
        return str(call.args[position].value)  # type: ignore[attr-defined]
    return None


def _writes(mode: str | None) -> bool:
    return mode is not None and any(c in mode for c in "wax+")


def _flag_names(node: ast.expr) -> set[str]:
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)} | {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name)
    }


def _problem(call: ast.Call, aliases: dict[str, str]) -> str | None:  # noqa: PLR0911
    """What file write ``call`` is, or ``None``."""
    name = _dotted(call.func)
    if name is not None:
        head, _, rest = name.partition(".")
        name = aliases.get(head, head) + (f".{rest}" if rest else "")
    if name in _FORBIDDEN_FUNCTIONS:
        return f"{name}()"
    if name in _OPENERS:
        if call.args and _is_stderr(call.args[0]):
            return None  # printing
        if _writes(_mode(call, 1)):
            return f"{name}() to write"
        return None
    if name == "os.open":
        flags = call.args[1] if len(call.args) > 1 else None
        if flags is not None and _flag_names(flags) & _WRITE_FLAGS:
            return "os.open() with a write flag"
        return None
    if name == "os.write":
        if call.args and _is_stderr(call.args[0]):
            return None  # printing
        return "os.write() to a descriptor"
    if isinstance(call.func, ast.Attribute):
        method = call.func.attr
        if method in _FORBIDDEN_METHODS:
            return f".{method}()"
        if method == "open" and _writes(_mode(call, 0)):
            return ".open() to write"
    return None


def file_writes(source: str) -> Iterator[tuple[int, str]]:
    """``(line, what)`` for every file write in ``source``."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            problem = _problem(node, aliases)
            if problem is not None:
                yield node.lineno, problem


def _modules() -> Iterator[Path]:
    for path in sorted(PACKAGE.rglob("*.py")):
        shown = path.relative_to(ROOT).as_posix()
        if not shown.startswith(ALLOWED):
            yield path


def test_only_the_store_writes_files() -> None:
    found = [
        f"{path.relative_to(ROOT).as_posix()}:{line}: {what}"
        for path in _modules()
        for line, what in file_writes(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "file writes outside cassette/store/ (use its writers):\n" + "\n".join(
        found
    )


@pytest.mark.parametrize(
    "source",
    [
        "open(p, 'w')",
        "open(p, mode='ab')",
        "io.open(p, 'x')",
        "os.fdopen(fd, 'r+b')",
        "Path(p).open('wb')",
        "p.write_text('x')",
        "p.write_bytes(b'x')",
        "f.truncate(3)",
        "p.rename(q)",
        "os.replace(a, b)",
        "os.rename(a, b)",
        "os.truncate(p, 0)",
        "os.open(p, os.O_WRONLY | os.O_CREAT)",
        "os.write(fd, b'x')",
        "tempfile.mkstemp()",
        "tempfile.NamedTemporaryFile()",
        "shutil.copy(a, b)",
        "shutil.move(a, b)",
        "os.unlink(p)",
        "Path(p).unlink(missing_ok=True)",
        "from os import replace as swap\nswap(a, b)",
        "from tempfile import mkstemp\nmkstemp()",
    ],
)
def test_each_kind_of_write_is_caught(source: str) -> None:
    assert list(file_writes(source)), source


@pytest.mark.parametrize(
    "source",
    [
        "open(p)",
        "open(p, 'rb')",
        "Path(p).open()",
        "p.read_bytes()",
        "os.open(p, os.O_RDONLY | os.O_NONBLOCK)",
        "os.write(2, b'x')",
        "os.write(sys.stderr.fileno(), b'x')",
        "os.fdopen(2, 'w')",
        "open(sys.stderr.fileno(), 'w')",
        "sys.stderr.write('x')",
        "tempfile.TemporaryDirectory()",
        "text.replace('a', 'b')",
    ],
)
def test_reading_and_printing_pass(source: str) -> None:
    assert not list(file_writes(source)), source
