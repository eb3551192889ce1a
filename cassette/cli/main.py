"""``python -m cassette``: the table of commands, and the one place errors become exits.

Every failure we anticipate is one line, ``cassette: error: ...``, and a documented exit
code; a traceback appears only for a bug, and only with ``CASSETTE_DEBUG=1``.

Exit codes (stable; docs/cli.md):
  0    success
  1    replay: the session ended with at least one miss
       lint, diff, redact --scan, check, verify: findings, differences or drift
  2    usage error (bad arguments or option values)
  3    cassette error (missing, malformed, newer format, refusing to overwrite)
  4    transport error (the server could not be started or reached)
  70   internal error (a bug: please report it)
  78   another package is also imported as ``cassette`` (reported by ``cassette_mcp``)
  128+N  stopped by signal N (130 for Ctrl-C, 143 for SIGTERM); the cassette is closed first
  record otherwise exits with the recorded server's own exit code when it exited by itself.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from cassette._version import __version__
from cassette.cli import record, replay, tools
from cassette.cli.common import EXIT_INTERNAL, Parser, err, exit_code
from cassette.cli.modes import split_replay_command
from cassette.errors import CassetteError, sole_exception

__all__ = ["main"]


def parser() -> argparse.ArgumentParser:
    """Every command's parser; each sets the ``handler`` that runs it."""
    top = Parser(
        prog="cassette",
        description="Record real MCP sessions and replay them as a server.",
        epilog="Exit codes: 0 ok, 1 replay misses or tool findings, 2 usage, 3 cassette, "
        "4 transport, 128+N signal. See docs/cli.md.",
    )
    top.add_argument("--version", action="version", version=f"cassette-mcp {__version__}")
    sub = top.add_subparsers(dest="command", required=True, parser_class=Parser)
    record.add_parser(sub)
    replay.add_parser(sub)
    tools.add_parsers(sub)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m cassette`` and the ``cassette`` script."""
    argv, command = split_replay_command(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    if command is not None:
        args.server = command
    try:
        code: int = args.handler(args)
        return code
    except Exception as raised:
        exc = sole_exception(raised)
        if isinstance(exc, CassetteError):
            err(f"error: {exc}")
            return exit_code(exc)
        if os.environ.get("CASSETTE_DEBUG"):
            raise
        err(f"internal error: {type(exc).__name__}: {exc} (set CASSETTE_DEBUG=1 for details)")
        return EXIT_INTERNAL
