"""``cassette import FILE [-o OUT] [--overwrite]``: another tool's recording as a cassette
(``cassette.tools.importer`` says which formats and how)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from cassette.cli.layout import Layout
from cassette.cli.options import REDACTION_DESTS, redaction_options
from cassette.cli.output import err

__all__ = ["add_parsers"]


def add_parsers(sub: Any, only: str | None = None) -> None:
    """Register ``import``."""
    command = sub.add_parser(
        "import",
        help="turn an mcp-recorder or mcp-cassette (Python) recording into a cassette",
        description="Read FILE, a recording made by mcp-recorder (JSON, version 1.0) or by the "
        "Python mcp-cassette (format 3), and write it as a cassette that replays the same "
        "answers, redacted as record redacts (the redaction options are record's). Exit 3 "
        "for a file in another format (the line names the formats known) or a cassette in "
        "the way. See docs/sharing.md.",
    )
    command.add_argument("file", metavar="FILE", help="the other tool's recording")
    command.add_argument(
        "-o", "--output", metavar="OUT", help="the cassette to write (default: FILE with .jsonl)"
    )
    command.add_argument("--overwrite", action="store_true", help="replace OUT if it exists")
    redaction_options(command)
    command.set_defaults(handler=_run)
    command.layout = Layout(
        usage="cassette import FILE [-o OUT] [--overwrite] [redaction options]",
        groups={
            "where it is written": ("output", "overwrite"),
            "secrets (redaction is on by default)": REDACTION_DESTS,
        },
        examples=(
            "cassette import recording.json                # mcp-recorder",
            "cassette import tape.json -o tape.jsonl       # the Python mcp-cassette",
        ),
    )


def _run(args: argparse.Namespace) -> int:
    from cassette.store.files import read_definitions
    from cassette.store.gate import RedactOptions, policy
    from cassette.tools.importer import import_cassette
    from cassette.tools.redact_cmd import redact_values

    source = Path(args.file)
    redactor = policy(RedactOptions.from_args(args))  # the rules are checked before reading
    text = read_definitions(source, "recording to import")
    name, tape = import_cassette(text.encode("utf-8"), str(source))
    output = Path(args.output) if args.output else _default_output(source)
    if redactor is None:
        err(f"warning: redaction is off: secrets in {source} will be written to {output}")
        said = "redaction off"
    else:
        tape, replaced = redact_values(tape, redactor)
        said = f"{replaced} secret value(s) redacted"
    tape.dump(output, overwrite=args.overwrite)
    err(f"imported {len(tape.events)} events recorded by {name} into {output}; {said}")
    return 0


def _default_output(source: Path) -> Path:
    """``recording.json`` -> ``recording.jsonl``; ``t.mcp.json`` -> ``t.mcp.jsonl``."""
    if source.suffix == ".json":
        return source.with_suffix(".jsonl")
    return source.with_name(source.name + ".jsonl")
