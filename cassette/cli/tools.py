"""The toolbox's commands: lint, diff, redact, show, check, verify, prune, distill, mock.

Only argument parsing lives here, so ``python -m cassette`` stays lean: a command's module
is imported when that command runs (``dispatch``), and each is a thin wrapper over a
plain library function of ``cassette.tools`` (``lint_cassette``, ``diff_cassettes``, ...).
Reports go to stdout (these commands carry no protocol there), except ``mock``'s: served
over stdio, its stdout is the protocol, so everything for people goes to stderr.

Exit codes: 0 clean, 1 findings, differences, FAIL, drift or (mock) requests the manifest
had no answer for, 2 usage or a server that cannot be reached, 3 a cassette or manifest
that cannot be read (as everywhere in the CLI).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import Any, Final

from cassette.cli.headers import header_options
from cassette.cli.layout import Layout
from cassette.cli.options import (
    fault_options,
    limit_options,
    listen_options,
    origin_options,
    redaction_options,
)
from cassette.cli.values import seconds
from cassette.core.words.colour import CHOICES
from cassette.errors import UsageError

__all__ = ["NAMES", "add_parsers", "dispatch"]


def _format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="report as text or JSON"
    )


def _color(parser: argparse.ArgumentParser) -> None:
    """``--color``: the report commands a person pipes into a pager (``less -R``) or reads
    in a CI log that renders colour."""
    parser.add_argument(
        "--color",
        choices=CHOICES,
        default="auto",
        help="colour the text report: auto (default: on a terminal, unless NO_COLOR is set; "
        "FORCE_COLOR turns it on), always or never",
    )


def add_parsers(sub: Any, only: str | None = None) -> None:
    """Register lint, diff, redact, show, check, verify, distill and mock, or only the
    one named ``only`` (the command being run: its siblings' parsers would be built for
    nothing)."""
    for name, add in _ADDERS.items():
        if only is None or name == only:
            add(sub)
            sub.choices[name].layout = _LAYOUTS[name]


def _add_lint(sub: Any) -> None:
    lint = sub.add_parser(
        "lint",
        help="check a cassette against its own header and the format",
        description="Check TAPE's frames against its header (era, transport), pair every "
        "request with its answer, and look for secrets left unredacted. Exit 1 on findings.",
    )
    lint.add_argument("tape", metavar="TAPE")
    _format(lint)
    lint.set_defaults(tool="cassette.tools.lint", handler=dispatch)


def _add_diff(sub: Any) -> None:
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
    _color(diff)
    diff.set_defaults(tool="cassette.tools.diff", handler=dispatch)


def _add_redact(sub: Any) -> None:
    redact = sub.add_parser(
        "redact",
        help="redact secrets in a cassette, or scan it for them",
        description="With -o, write a copy of TAPE with the recorder's redaction rules "
        "applied (placeholders already there are kept; a secret found now is numbered after "
        "them). With --scan, report secrets left in TAPE and exit 1 if there are any.",
    )
    redact.add_argument("tape", metavar="TAPE")
    mode = redact.add_mutually_exclusive_group(required=True)
    mode.add_argument("-o", "--output", metavar="OUT", help="where to write the redacted copy")
    mode.add_argument("--scan", action="store_true", help="only report secrets found")
    redact.add_argument("--overwrite", action="store_true", help="replace OUT if it exists")
    _format(redact)
    redact.set_defaults(tool="cassette.tools.redact_cmd", handler=dispatch)


def _add_show(sub: Any) -> None:
    show = sub.add_parser(
        "show",
        help="print a cassette as a timeline, or draw it as an HTML waterfall and sequence diagram",
        description="Print TAPE as a timeline (line, time, direction, method or outcome, "
        "id, size), each request with how long its answer took and FAILED when the call "
        "failed (a tool error or a JSON-RPC error), each session apart. With --html OUT, "
        "also write one self-contained HTML page: a waterfall of the requests on a time "
        "axis, failures in red, and the session as a sequence diagram. With --against "
        "OTHER, replay OTHER's client "
        "messages against TAPE under --strategy: list the misses, mark TAPE's unplayed "
        "requests, exit 1 on misses.",
    )
    show.add_argument("tape", metavar="TAPE")
    show.add_argument("--html", metavar="OUT", help="write a self-contained HTML page")
    show.add_argument(
        "--against", metavar="OTHER", help="a session to match against TAPE (a cassette)"
    )
    show.add_argument(
        "--strategy",
        choices=("strict", "default", "loose"),
        help="matching strategy for --against (default: default)",
    )
    show.add_argument(
        "--faults",
        metavar="PLAN",
        help="dry run: list the recorded requests the fault plan PLAN would fault for a "
        "client making the recorded calls (docs/faults.md)",
    )
    _format(show)
    _color(show)
    show.set_defaults(tool="cassette.tools.show", handler=dispatch)


def _add_check(sub: Any) -> None:
    check = sub.add_parser(
        "check",
        help="report a server's surface and problems: a live one, or a cassette's, offline",
        description="With -- COMMAND (or --upstream URL), connect to the live server as a "
        "client (cassette's own, not the SDK) in the era --era names. With TAPE, read what "
        "TAPE recorded instead, offline: no server is started. Either way, report server "
        "name and version, protocol, era and the counts of tools, resources, prompts and "
        "templates, and find problems (duplicate or badly named tools, missing "
        "descriptions, missing or invalid JSON Schemas, lists that fail; from a cassette "
        "also recorded tool answers that do not conform to their outputSchema). Exit 1 on "
        "errors, 2 when the server cannot be reached. TAPE --live checks the live server "
        "TAPE's header recorded, started as verify and variant start it.",
        usage="cassette check [options] (TAPE [--live] | -- COMMAND [ARG...] | --upstream URL "
        "| --stdio COMMAND)",
    )
    check.set_defaults(server=[])  # check [options] -- COMMAND: cut off by the main parser
    check.add_argument(
        "tape",
        nargs="?",
        metavar="TAPE",
        help="check what this cassette recorded, offline (no server is started)",
    )
    check.add_argument(
        "--live",
        action="store_true",
        help="with TAPE: check the live server TAPE's header recorded instead (its command "
        "from any folder, or its URL)",
    )
    target = check.add_mutually_exclusive_group()
    target.add_argument(
        "--stdio",
        metavar="COMMAND",
        help='server command line as one string, e.g. "node s.js" (or give it after --, as '
        "record and verify take it)",
    )
    target.add_argument(
        "--upstream",
        "--url",
        dest="url",
        metavar="URL",
        help="streamable HTTP endpoint of the server (--url is the same)",
    )
    check.add_argument(
        "--timeout", type=seconds, default=60.0, metavar="S", help="give up after S seconds"
    )
    check.add_argument(
        "--era",
        choices=("auto", "legacy", "modern"),
        default="auto",
        help="auto (default): probe server/discover, fall back to initialize; legacy: "
        "initialize only; modern: server/discover only (2026-07-28)",
    )
    _format(check)
    header_options(check, "the server (--url)")
    check.set_defaults(tool="cassette.tools.check", handler=dispatch)


def _add_verify(sub: Any) -> None:
    verify = sub.add_parser(
        "verify",
        help="re-fire cassettes' requests at a live server and report drift",
        description="Run the server (COMMAND, the endpoint URL, else the one each TAPE's "
        "header recorded), replay TAPE's client requests at it in the recorded era (for "
        "real), answer the server's own requests from TAPE, and classify each answer "
        "MATCH, CHANGED, ERROR-SHAPE-CHANGED, MISSING, SERVER-REQUEST-CHANGED or "
        "UNANSWERED. With --scenarios FILE, verify each scenario's cassette against the "
        "server the file's [target] names. With --update, write the new answers into the "
        "cassette. A progress bar is drawn on stderr when it is a terminal. Exit 1 on "
        "drift (0 once --update wrote it), 2 when the server cannot be run or reached.",
    )
    verify.add_argument("tapes", nargs="*", metavar="TAPE", help="cassettes to verify")
    verify.add_argument(
        "--scenarios",
        metavar="FILE",
        help="verify the cassettes of FILE's scenarios against its [target] (docs/scenarios.md)",
    )
    verify.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="NAME",
        help="with --scenarios: verify only this scenario (repeatable)",
    )
    verify.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="POINTER",
        help="answers: ignore differences at or under this JSON Pointer, e.g. "
        "/result/content (repeatable)",
    )
    verify.add_argument(
        "--ignore-key",
        action="append",
        default=[],
        metavar="NAME",
        help="answers: ignore the values of keys with this name at any depth, JSON inside "
        "text included (repeatable)",
    )
    verify.add_argument(
        "--update",
        action="store_true",
        help="write the live answers that drifted into the cassette (atomically, redacted)",
    )
    verify.add_argument(
        "--upstream", "--url", metavar="URL", help="HTTP endpoint to verify (--url is the same)"
    )
    verify.add_argument(
        "--transport",
        metavar="NAME",
        help="how to reach the server: stdio for a command; streamable-http (default) or "
        "sse for --upstream",
    )
    verify.add_argument(
        "--timeout", type=seconds, default=30.0, metavar="S", help="wait S seconds per answer"
    )
    _format(verify)
    _color(verify)
    header_options(verify)
    redaction_options(verify)  # the live answers it prints and writes, as record redacts
    # the command after ``--`` is cut off before parsing (``split_replay_command``)
    verify.set_defaults(tool="cassette.tools.verify", handler=dispatch, server=[])


def _add_prune(sub: Any) -> None:
    prune = sub.add_parser(
        "prune",
        help="drop the recordings a run never played, as its --report says",
        description="Drop from TAPE every recorded request that no replay of TAPE in "
        "REPORT played (the report cassette replay --report, the record modes' --report "
        "and the pytest plugin's --mcp-cassette-report write), with what the server said "
        "for it. Every other line is kept byte for byte (times, redaction placeholders), "
        "so the file stays valid; the cassette is rewritten atomically under its lock. "
        "Refused when REPORT holds no replay of TAPE, or when TAPE changed since.",
    )
    prune.add_argument("tape", metavar="TAPE")
    prune.add_argument(
        "--against",
        required=True,
        metavar="REPORT",
        help="the run's report (JSON lines) that says what each replay never played",
    )
    prune.add_argument("--dry-run", action="store_true", help="say what would go; change nothing")
    _format(prune)
    prune.set_defaults(tool="cassette.tools.prune", handler=dispatch)


def _add_distill(sub: Any) -> None:
    distill = sub.add_parser(
        "distill",
        help="turn a cassette into an editable mock manifest",
        description="Write MANIFEST (JSON or TOML, by its suffix) from TAPE: one entry per "
        "tool, resource, resource template and prompt, definitions from the recorded lists, "
        "each distinct call with its recorded answer (the first of duplicates kept, "
        "recorded errors too). Serve it with `cassette mock MANIFEST`; see docs/mock.md.",
    )
    distill.add_argument("tape", metavar="TAPE")
    distill.add_argument(
        "--as-mock",
        action="store_true",
        help="distill into a mock manifest (the only kind, and the default: optional)",
    )
    distill.add_argument(
        "-o", "--output", required=True, metavar="MANIFEST", help="manifest to write (.json, .toml)"
    )
    distill.add_argument("--overwrite", action="store_true", help="replace MANIFEST if it exists")
    _format(distill)
    distill.set_defaults(tool="cassette.tools.distill", handler=dispatch)


def _add_mock(sub: Any) -> None:
    mock = sub.add_parser(
        "mock",
        help="serve a mock manifest as an MCP server, or --validate it",
        description="Serve MANIFEST (JSON or TOML) as an MCP server on stdio (stdout is "
        "the protocol; messages go to stderr) or over streamable HTTP. Calls match by "
        "arguments; {{arguments.NAME}} in an answer is replaced by the call's argument. "
        "A request the manifest cannot answer gets a JSON-RPC error, and the exit code "
        "is 1. With --validate, only check MANIFEST: exit 1 on errors.",
    )
    mock.add_argument("manifest", metavar="MANIFEST")
    mock.add_argument(
        "--validate", action="store_true", help="check MANIFEST and report; serve nothing"
    )
    mock.add_argument(
        "--front",
        "--transport",
        dest="front",
        default="stdio",
        help="how clients reach the mock: stdio (default), http (streamable HTTP), sse "
        "(legacy HTTP+SSE), or a plugin's front",
    )
    listen_options(mock, "the HTTP front")
    origin_options(mock, "the HTTP front")
    limit_options(mock, "client message the mock accepts (a stdio line, an HTTP body)")
    mock.add_argument("-q", "--quiet", action="store_true", help="no start-up banner")
    fault_options(mock)
    _format(mock)
    mock.set_defaults(tool="cassette.cli.mock", handler=dispatch, serves=True)


#: Each tool's name and what registers its parser, in the order ``--help`` lists them.
_ADDERS: dict[str, Callable[[Any], None]] = {
    "lint": _add_lint,
    "diff": _add_diff,
    "redact": _add_redact,
    "show": _add_show,
    "check": _add_check,
    "verify": _add_verify,
    "prune": _add_prune,
    "distill": _add_distill,
    "mock": _add_mock,
}
NAMES: Final = tuple(_ADDERS)

_REPORT = ("format", "color")
#: how each tool's ``--help`` reads (``cassette.cli.layout``)
_LAYOUTS: dict[str, Layout] = {
    "lint": Layout(
        usage="cassette lint TAPE [--format {text,json}]",
        groups={"output": _REPORT},
        examples=("cassette lint t.jsonl", "cassette lint t.jsonl --format json"),
    ),
    "diff": Layout(
        usage="cassette diff A B [--ignore POINTER]... [--format {text,json}] [--color WHEN]",
        groups={"comparing (answers)": ("ignore",), "output": _REPORT},
        examples=(
            "cassette diff old.jsonl new.jsonl",
            "cassette diff old.jsonl new.jsonl --ignore /result/_meta",
        ),
    ),
    "redact": Layout(
        usage="cassette redact TAPE (-o OUT [--overwrite] | --scan) [--format {text,json}]",
        groups={"what to do": ("output", "scan", "overwrite"), "output": _REPORT},
        examples=(
            "cassette redact --scan t.jsonl",
            "cassette redact t.jsonl -o clean.jsonl",
        ),
    ),
    "show": Layout(
        usage="cassette show TAPE [--html OUT] [--against OTHER [--strategy S]] "
        "[--faults PLAN] [--format {text,json}] [--color WHEN]",
        groups={
            "views": ("html", "faults"),
            "matching another session": ("against", "strategy"),
            "output": _REPORT,
        },
        examples=(
            "cassette show t.jsonl",
            "cassette show t.jsonl --html t.html",
            "cassette show t.jsonl --against rerun.jsonl",
        ),
    ),
    "check": Layout(
        usage="cassette check [options] (TAPE [--live] | -- COMMAND [ARG...] | --upstream URL "
        "| --stdio COMMAND)",
        groups={
            "the server": ("url", "stdio", "live", "headers", "era", "timeout"),
            "output": _REPORT,
        },
        examples=(
            "cassette check -- node server.js",
            "cassette check --upstream http://127.0.0.1:3001/mcp",
            "cassette check --era modern --format json -- python server.py",
            "cassette check cassettes/t.jsonl   # offline: what it recorded",
        ),
    ),
    "verify": Layout(
        usage="cassette verify TAPE... [options] [-- COMMAND [ARG...] | --upstream URL]\n"
        "       cassette verify --scenarios FILE [--scenario NAME]... [--update]",
        groups={
            "the server (default: the one each cassette's header names)": (
                "upstream",
                "transport",
                "headers",
                "timeout",
            ),
            "scenarios": ("scenarios", "scenario"),
            "comparing (answers)": ("ignore", "ignore_key", "update"),
            "output": _REPORT,
        },
        examples=(
            "cassette verify t.jsonl",
            "cassette verify t.jsonl --ignore-key generatedAt -- python server.py",
            "cassette verify cassettes/*.jsonl --update",
            "cassette verify --scenarios scenarios.toml",
        ),
    ),
    "prune": Layout(
        usage="cassette prune TAPE --against REPORT [--dry-run] [--format {text,json}]",
        groups={"what to drop": ("against", "dry_run"), "output": _REPORT},
        examples=(
            "cassette replay t.jsonl --report run.jsonl",
            "cassette prune t.jsonl --against run.jsonl --dry-run",
            "cassette prune t.jsonl --against run.jsonl",
        ),
    ),
    "distill": Layout(
        usage="cassette distill TAPE -o MANIFEST [--overwrite] [--format {text,json}]",
        groups={"writing": ("output", "overwrite", "as_mock"), "output": _REPORT},
        examples=(
            "cassette distill t.jsonl -o mock.toml",
            "cassette mock mock.toml",
        ),
    ),
    "mock": Layout(
        usage="cassette mock MANIFEST [options] | cassette mock --validate MANIFEST",
        groups={
            "how clients reach the mock": ("front", "host", "port", "allow_origin", "quiet"),
            "limits and faults": ("max_message_bytes", "max_depth", "faults"),
            "checking": ("validate", "format"),
        },
        examples=(
            "cassette mock mock.toml",
            "cassette mock mock.toml --front http --port 8080",
            "cassette mock --validate mock.toml",
        ),
    ),
}


def dispatch(args: argparse.Namespace) -> int:
    """Run the command's module (imported only now): its ``main(args)``. A server command
    that lost its ``--`` (``verify t.jsonl python srv.py``) is refused first, explained as
    every command that takes one explains it."""
    if args.command in ("check", "verify"):
        from cassette.cli.suggest import lost_dash

        problem = lost_dash(args)
        if problem is not None:
            raise UsageError(problem)
    module = importlib.import_module(args.tool)
    code: int = module.main(args)
    return code
