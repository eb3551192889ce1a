"""``python -m cassette``: the table of commands, and the one place errors become exits.

Every failure we anticipate is one line, ``cassette: error: ...``, and a documented exit
code; a traceback appears only for a bug, and only with ``CASSETTE_DEBUG=1``.

Exit codes (stable; docs/cli.md):
  0    success
  1    replay: the session ended with at least one miss
       lint, diff, redact --scan, check, verify: findings, differences or drift
  2    usage error (bad arguments or option values)
  3    cassette error (missing, not a regular file, malformed, newer format, refusing to
       overwrite, cannot be written: disk full, file too large)
  4    transport error (the server could not be started or reached); record: no request
       got a successful answer (the session is kept as TAPE.failed)
  5    record: the recorded server exited by itself with an error (its code on stderr)
  70   internal error (a bug: please report it)
  78   another package is also imported as ``cassette`` (reported by ``cassette_mcp``)
  128+N  stopped by signal N (130 for Ctrl-C, 143 for SIGTERM); the cassette is closed first
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from cassette._version import __version__
from cassette.cli.exits import EXIT_INTERNAL, exit_code
from cassette.cli.modes import split_replay_command
from cassette.cli.options import apply_limits
from cassette.cli.output import err
from cassette.cli.parser import TAKES_COMMAND, Parser
from cassette.errors import CassetteError, FaultExit, anticipated_exception

__all__ = ["execute", "main", "parse"]


#: Each command and the module that registers its parser, in the order ``--help`` lists
#: them. Only the module of the command being run is imported: ``record`` brings the
#: recorder and redaction with it, which a replay never uses.
_COMMANDS: dict[str, str] = {
    "record": "cassette.cli.record",
    "replay": "cassette.cli.replay",
    "variant": "cassette.cli.variant",
    **dict.fromkeys(
        ("lint", "diff", "redact", "show", "check", "verify", "prune", "distill", "mock"),
        "cassette.cli.tools",
    ),
    **dict.fromkeys(("git-setup", "git-textconv"), "cassette.cli.gitdiff"),
    "hook": "cassette.cli.hooks",
    "import": "cassette.cli.importing",
}


def parser(only: str | None = None) -> Parser:
    """The command line's parser, with every command, or only the command ``only`` (the
    one being run); each command sets the ``handler`` that runs it."""
    top = Parser(
        prog="cassette",
        usage="cassette [--version] [-h] COMMAND [options]",
        description="Record real MCP sessions and replay them as a server.",
        epilog="Examples:\n"
        "  cassette record -o t.jsonl -- node server.js   # record a session over stdio\n"
        "  cassette replay t.jsonl                        # serve it back, offline\n"
        "  cassette replay t.jsonl --front http --port 8080\n"
        "  cassette show t.jsonl --html t.html            # look at it\n\n"
        "Exit codes: 0 ok, 1 replay misses or tool findings, 2 usage, 3 cassette, "
        "4 transport (record: nothing succeeded), 5 record: the server exited with an "
        "error, 128+N signal. See docs/cli.md; COMMAND --help for a command's options.",
    )
    top.add_argument("--version", action="version", version=f"cassette-mcp {__version__}")
    sub = top.add_subparsers(
        dest="command",
        required=True,
        parser_class=Parser,
        metavar="COMMAND",
        title="commands",
        prog="cassette",
    )
    top.commands = sub.choices
    done: set[str] = set()
    for name, module in _COMMANDS.items():
        if (only is None or name == only) and module not in done:
            done.add(module)
            importlib.import_module(module).add_parsers(sub, only)
    return top


def _chosen(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs, when its first word names one; ``None`` otherwise (no
    command, an option first, a typo), and then the full parser answers as it always did."""
    return argv[0] if argv and argv[0] in _COMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    """The command line, in this process: parse ``argv`` (default: ``sys.argv``), run the
    command, return its exit code (``python -m cassette`` runs ``cassette.cli.process``)."""
    return execute(parse(argv))


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command and its options (argparse exits on a usage error or ``--help``)."""
    argv, command = split_replay_command(sys.argv[1:] if argv is None else argv)
    if not argv:  # a bare ``cassette``: what it can do, not an error
        parser().print_help()
        raise SystemExit(0)
    if not argv[0].startswith("-") and argv[0] not in _COMMANDS:
        from cassette.cli.suggest import unknown_command

        Parser(prog="cassette").error(unknown_command(argv[0], _COMMANDS))
    top = parser(_chosen(argv))
    args, extra = top.parse_known_args(argv)
    if extra:
        from cassette.cli.suggest import unrecognized

        name = getattr(args, "command", None)
        sub = top.commands.get(name) if isinstance(name, str) else None
        offers_dash = name in TAKES_COMMAND and command is None
        taken = getattr(args, "tape", None)
        top.error(unrecognized(extra, sub or top, offers_dash=offers_dash, taken=taken))
    if command is not None:
        args.server = command
    return args


def execute(args: argparse.Namespace) -> int:
    """Run a parsed command; every anticipated error becomes its one line and exit code."""
    try:
        apply_limits(args)  # before anything is read: every reader honours the same limits
        code: int = args.handler(args)
        return code
    except Exception as raised:
        exc = anticipated_exception(raised)  # a group of our own errors is no bug
        if isinstance(exc, FaultExit):
            err(f"{exc}")
            return exc.code
        if isinstance(exc, CassetteError):
            err(f"error: {exc}")
            return exit_code(exc)
        if os.environ.get("CASSETTE_DEBUG"):
            raise
        err(f"internal error: {type(exc).__name__}: {exc} (set CASSETTE_DEBUG=1 for details)")
        return EXIT_INTERNAL
