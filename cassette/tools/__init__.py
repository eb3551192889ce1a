"""The toolbox: lint, diff, redact and show read cassettes; check and verify talk to servers.

Only argument parsing lives here, so ``python -m cassette`` stays lean: a command's module
is imported when that command runs (``dispatch``). Each module also offers a plain library
function (``lint_cassette``, ``diff_cassettes``, ``redact_cassette``, ``scan_cassette``,
``timeline``, ``render_html``, ``check_server``, ``verify_cassette``) that the command is a
thin wrapper over. Reports go to stdout (these commands carry no protocol there).

Exit codes: 0 clean, 1 findings, differences, FAIL or drift, 2 usage or a server that
cannot be reached, 3 a cassette that cannot be read (as everywhere in the CLI).
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

__all__ = ["add_tool_commands", "dispatch"]


def _format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="report as text or JSON"
    )


def add_tool_commands(sub: Any) -> None:
    """Register lint, diff, redact, show and check on the CLI's subparsers."""
    lint = sub.add_parser(
        "lint",
        help="check a cassette against its own header and the format",
        description="Check TAPE's frames against its header (era, transport), pair every "
        "request with its answer, and look for secrets left unredacted. Exit 1 on findings.",
    )
    lint.add_argument("tape", metavar="TAPE")
    _format(lint)
    lint.set_defaults(tool="cassette.tools.lint")

    diff = sub.add_parser(
        "diff",
        help="semantic diff of two cassettes",
        description="Compare two recordings: requests added or removed (by fingerprint), "
        "responses changed (JSON Pointer paths, volatile values ignored), era or protocol "
        "version changed. Exit 1 when they differ.",
    )
    diff.add_argument("old", metavar="A")
    diff.add_argument("new", metavar="B")
    diff.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="POINTER",
        help="ignore response differences at or under this JSON Pointer (repeatable)",
    )
    _format(diff)
    diff.set_defaults(tool="cassette.tools.diff")

    redact = sub.add_parser(
        "redact",
        help="redact secrets in a cassette, or scan it for them",
        description="With -o, write a copy of TAPE with the recorder's redaction rules "
        "applied (the header's salt is kept, so placeholders stay stable). With --scan, "
        "report secrets left in TAPE and exit 1 if there are any.",
    )
    redact.add_argument("tape", metavar="TAPE")
    mode = redact.add_mutually_exclusive_group(required=True)
    mode.add_argument("-o", "--output", metavar="OUT", help="where to write the redacted copy")
    mode.add_argument("--scan", action="store_true", help="only report secrets found")
    redact.add_argument("--overwrite", action="store_true", help="replace OUT if it exists")
    _format(redact)
    redact.set_defaults(tool="cassette.tools.redact_cmd")

    show = sub.add_parser(
        "show",
        help="print a cassette as a timeline, or draw it as an HTML sequence diagram",
        description="Print TAPE as a timeline (line, time, direction, method or outcome, "
        "id, size). With --html OUT, also write one self-contained HTML page drawing the "
        "session as a sequence diagram.",
    )
    show.add_argument("tape", metavar="TAPE")
    show.add_argument("--html", metavar="OUT", help="write a self-contained HTML page")
    _format(show)
    show.set_defaults(tool="cassette.tools.show")
    _add_check(sub)
    _add_verify(sub)


def _add_check(sub: Any) -> None:
    check = sub.add_parser(
        "check",
        help="connect to a live server and report its surface and problems",
        description="Connect as a client (cassette's own, not the SDK), report server name "
        "and version, protocol, era and the counts of tools, resources, prompts and "
        "templates, and find problems (duplicate or badly named tools, missing "
        "descriptions, missing or invalid JSON Schemas, lists that fail). Exit 1 on errors, "
        "2 when the server cannot be reached.",
    )
    target = check.add_mutually_exclusive_group(required=True)
    target.add_argument("--stdio", metavar="COMMAND", help='server command line, e.g. "node s.js"')
    target.add_argument("--url", metavar="URL", help="streamable HTTP endpoint of the server")
    check.add_argument(
        "--timeout", type=float, default=60.0, metavar="S", help="give up after S seconds"
    )
    _format(check)
    check.set_defaults(tool="cassette.tools.check")


def _add_verify(sub: Any) -> None:
    verify = sub.add_parser(
        "verify",
        help="re-fire a cassette's requests at a live server and report drift",
        usage="cassette verify TAPE [--ignore POINTER]... [--format {text,json}] "
        "-- COMMAND [ARG...]",
        description="Run COMMAND as the server, replay TAPE's client requests at it (for "
        "real), and classify each answer MATCH, CHANGED, ERROR-SHAPE-CHANGED or MISSING. "
        "Exit 1 on drift, 2 when the server cannot be run.",
    )
    verify.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="POINTER",
        help="ignore differences at or under this JSON Pointer, e.g. /result/content (repeatable)",
    )
    _format(verify)
    # TAPE, options after it, and the command after --: split in verify.main, because
    # argparse cannot take a command after a positional and options.
    verify.add_argument("rest", nargs=argparse.REMAINDER, metavar="TAPE [options] -- COMMAND")
    verify.set_defaults(tool="cassette.tools.verify")


def dispatch(args: argparse.Namespace) -> int:
    """Run the command's module (imported only now)."""
    module = importlib.import_module(args.tool)
    code: int = module.main(args)
    return code
