"""``cassette git-setup`` and ``cassette git-textconv FILE``: ``git diff`` and ``git log -p``
show cassettes as messages, not as lines of time offsets.

Git's textconv mechanism converts each side of a diff to text before comparing: ``git
diff``, ``git log -p`` and ``git show`` all use it, with no extra flag. ``git-setup`` writes
the two pieces: a ``.gitattributes`` line giving cassette files the ``cassette`` diff
driver, and the repository's ``diff.cassette.textconv`` naming ``git-textconv``. The text
is what ``cassette diff`` compares: each message with its direction and label, its body as
sorted, indented JSON (so a changed answer is a changed value line), without ``t``,
``id`` or ``jsonrpc``; the header without ``started_at``. A file that does not read as a
cassette (another ``.jsonl`` file matched by the pattern) is printed as it is.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cassette.cli.layout import Layout
from cassette.errors import CassetteError

if TYPE_CHECKING:
    from cassette.core.wire.model import Event

__all__ = ["add_parsers", "textconv"]

_DRIVER = "cassette"


def add_parsers(sub: Any, only: str | None = None) -> None:
    """Register ``git-setup`` and ``git-textconv``."""
    setup = sub.add_parser(
        "git-setup",
        help="make git diff and git log -p show cassettes as messages",
        description="In the git repository of the working directory: add PATTERN diff=cassette "
        "to .gitattributes (committed: everyone gets the driver's name) and set "
        "diff.cassette.textconv in the repository's config (each clone runs this once). "
        "See docs/sharing.md.",
    )
    setup.add_argument(
        "--pattern",
        action="append",
        default=[],
        metavar="GLOB",
        help="the files that are cassettes (repeatable; default: *.jsonl)",
    )
    setup.set_defaults(handler=_setup)
    setup.layout = Layout(
        usage="cassette git-setup [--pattern GLOB]...",
        groups={"which files": ("pattern",)},
        examples=(
            "cassette git-setup                      # *.jsonl files are cassettes",
            "cassette git-setup --pattern 'tests/cassettes/*.jsonl'",
        ),
    )
    conv = sub.add_parser(
        "git-textconv",
        help="print a cassette as git's diff driver compares it",
        description="Print FILE as text for git's textconv: messages, not time offsets.",
    )
    conv.add_argument("file", metavar="FILE")
    conv.set_defaults(handler=_textconv)
    conv.layout = Layout(
        usage="cassette git-textconv FILE",
        groups={},
        examples=(
            "cassette git-textconv t.jsonl           # what git diff compares",
            "cassette git-setup                      # then git diff uses it",
        ),
    )


def _git(*args: str) -> str:
    git = shutil.which("git")
    if git is None:
        raise CassetteError("git: not found on PATH; git-setup configures a git repository")
    try:
        done = subprocess.run([git, *args], capture_output=True, text=True, check=False, timeout=60)
    except OSError as exc:
        raise CassetteError(f"git: cannot run it: {exc}") from exc
    if done.returncode != 0:
        raise CassetteError(f"git {' '.join(args)}: {done.stderr.strip() or 'failed'}")
    return done.stdout.strip()


def _setup(args: argparse.Namespace) -> int:
    root = Path(_git("rev-parse", "--show-toplevel"))
    command = f"{shlex.quote(sys.executable)} -m cassette git-textconv"
    _git("config", f"diff.{_DRIVER}.textconv", command)
    attributes = root / ".gitattributes"
    text = attributes.read_text(encoding="utf-8") if attributes.exists() else ""
    present = {line.strip() for line in text.splitlines()}
    wanted = [f"{p} diff={_DRIVER}" for p in args.pattern or ["*.jsonl"]]
    missing = [line for line in wanted if line not in present]
    if missing:
        joiner = "" if not text or text.endswith("\n") else "\n"
        from cassette.store.files import write_atomic  # the store writes every file

        write_atomic(attributes, (text + joiner + "\n".join(missing) + "\n").encode("utf-8"))
    sys.stderr.write(
        f"cassette: git diff shows {', '.join(args.pattern or ['*.jsonl'])} as messages "
        f"({attributes} and diff.{_DRIVER}.textconv)\n"
    )
    return 0


def _textconv(args: argparse.Namespace) -> int:
    data = Path(args.file).read_bytes()
    out = sys.stdout.buffer
    out.write(textconv(data, args.file).encode("utf-8") if _is_cassette(data) else data)
    out.flush()
    return 0


def _is_cassette(data: bytes) -> bool:
    first = data.split(b"\n", 1)[0]
    try:
        head = json.loads(first)
    except ValueError:
        return False
    return isinstance(head, dict) and head.get("kind") == "header"


def textconv(data: bytes, source: str = "<cassette>") -> str:
    """The cassette ``data`` as text for a line diff (see the module docstring); a file
    that does not read is shown as it is."""
    from cassette.core.tape.codec import encode
    from cassette.store.storage import Cassette

    try:
        tape = Cassette.loads(data, source)
    except (CassetteError, ValueError):
        return data.decode("utf-8", "replace")
    from cassette.core.eras.variants import probe_of, split_all

    header = {k: v for k, v in encode(tape.header).items() if k not in ("kind", "started_at")}
    if isinstance(header.get("redaction"), dict):
        from cassette.core.redaction.literal_patterns import without_literals

        # a value an older version kept as a pattern is not printed (redact -o drops it)
        header["redaction"] = without_literals(header["redaction"])[0]
    lines = ["cassette " + _json(header, None)]
    lines += _events(e for e in tape.events if probe_of(e) is None)
    for name, events in split_all(tape.events)[2].items():  # apart: no part of the session
        lines += [f"probe {name} (the recorder's own session: what any client may list)"]
        lines += _events(events)
    return "\n".join(lines) + "\n"


def _events(events: Iterable[Event]) -> list[str]:
    """The text of ``events``, one line (and its message's members) each."""
    from cassette.core.tape.codec import encode

    lines: list[str] = []
    for event in events:
        body = encode(event)
        kind = body.pop("kind")
        body.pop("t", None)
        meta = body.pop("meta", None)
        if isinstance(meta, dict):  # a probe's name is said by its heading
            meta = {k: v for k, v in meta.items() if k != "probe"}
        if meta:
            body["meta"] = meta
        message = body.pop("message", None)
        if not isinstance(message, dict):
            lines.append(f"{kind} " + _json(body, None))
            continue
        arrow = "->" if body.pop("dir", None) == "c2s" else "<-"
        lines.append(f"{arrow} {_label(message)}" + (f" {_json(body, None)}" if body else ""))
        rest = {k: v for k, v in message.items() if k not in ("jsonrpc", "id", "method")}
        if rest:
            lines.extend("    " + line for line in _json(rest, 2).splitlines())
    return lines


def _label(message: dict[str, Any]) -> str:
    method = message.get("method")
    if isinstance(method, str):
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        return f"{method} {name}" if method == "tools/call" and isinstance(name, str) else method
    return "error" if "error" in message else "result"


def _json(value: Any, indent: int | None) -> str:
    separators = (",", ":") if indent is None else (",", ": ")
    return json.dumps(
        value, indent=indent, sort_keys=True, ensure_ascii=False, separators=separators
    )
