"""``cassette variant TAPE --as NAME``: the recorded session again, as another client.

See ``cassette.client.variants`` for what a variant is and how it is recorded; this
module reads the options, finds the server (the command or URL given, else the one the
header recorded), and says one line per variant.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from cassette.cli.headers import header_options, upstream_headers, with_header_secrets
from cassette.cli.layout import Layout
from cassette.cli.options import REDACTION_DESTS, front_name, redaction_options
from cassette.cli.output import err
from cassette.cli.running import run_async
from cassette.cli.values import seconds
from cassette.core.redaction.headers import Expanded
from cassette.errors import TransportError, UsageError, sole_exception

__all__ = ["add_parsers", "run"]

#: exit code when a variant could not be recorded (the server refused that client)
_REFUSED = 4
#: the largest ``--answers`` file read (answers are a few small objects)
_MAX_ANSWERS = 1 << 20


def add_parsers(sub: Any, only: str | None = None) -> None:
    """Register ``variant``."""
    from cassette.client.variants import PROFILES

    names = ", ".join(
        f"{p.name} ({p.summary}{'; read from ' + p.taken_from if p.taken_from else ''})"
        for p in PROFILES.values()
    )
    variant = sub.add_parser(
        "variant",
        help="record TAPE's session again as another client would hold it",
        usage="cassette variant TAPE --as NAME [--as NAME]... [--answers FILE] [--replace] "
        "[--upstream URL] "
        "[--transport NAME] [--timeout S] [redaction options] [-- COMMAND [ARG...]]",
        description="Send TAPE's recorded requests to the live server again as the client "
        "NAME would (its era, its capabilities, its answers to the server's questions), and "
        "append that session to TAPE as a variant: a replay answers each client from the "
        "session its handshake fits. The server is COMMAND or --upstream URL, else the one "
        "TAPE's header recorded. Every request is sent for real: tools with effects have "
        f"them again. Clients: {names}. See docs/matching.md.",
    )
    variant.add_argument("tape", metavar="TAPE", help="the cassette to add variants to")
    variant.add_argument(
        "--as",
        dest="profiles",
        action="append",
        default=[],
        required=True,
        metavar="NAME",
        help="the client to record as (repeatable): " + ", ".join(PROFILES) + "; with "
        "--capabilities, any name (the variant's name in the cassette)",
    )
    variant.add_argument(
        "--capabilities",
        metavar="LIST",
        default=None,
        help="the capabilities the variant's client declares, comma-separated (roots, "
        "sampling, elicitation, ...; empty: none), in place of the profile's or the "
        "recorded client's",
    )
    variant.add_argument(
        "--roots",
        nargs="+",
        metavar="URI",
        default=[],
        help="the roots the variant's client lists when the server asks (with "
        "--capabilities roots,...)",
    )
    variant.add_argument("--upstream", metavar="URL", help="the live server's HTTP endpoint")
    header_options(variant, "the server (--upstream)")
    variant.add_argument(
        "--transport",
        metavar="NAME",
        help="how to reach the server (default: the transport TAPE was recorded on)",
    )
    variant.add_argument(
        "--timeout", type=seconds, default=30.0, metavar="S", help="wait S seconds per answer"
    )
    variant.add_argument(
        "--answers",
        metavar="FILE",
        help="a JSON object of how the client answers the server's questions, by method "
        '(e.g. {"elicitation/create": {"action": "accept", "content": {...}}}), for '
        "questions the recording never answered (legacy and modern only)",
    )
    variant.add_argument(
        "--replace",
        action="store_true",
        help="record a variant TAPE already holds again, in place of the old one (after "
        "verify --update changed the main recording, say)",
    )
    redaction_options(variant)
    # the command after ``--`` is cut off before parsing (``split_replay_command``)
    variant.set_defaults(handler=run, server=[], from_header=False)
    variant.layout = Layout(
        usage="cassette variant TAPE --as NAME [--as NAME]... [options] [-- COMMAND [ARG...]]",
        groups={
            "the client": ("profiles", "capabilities", "roots", "answers", "replace"),
            "the server (default: the one TAPE's header names)": (
                "upstream",
                "transport",
                "headers",
                "timeout",
            ),
            "secrets (redaction is on by default)": REDACTION_DESTS,
        },
        examples=(
            "cassette variant t.jsonl --as bare",
            "cassette variant t.jsonl --as modern --replace -- node server.js",
        ),
    )


def _server(args: argparse.Namespace, header: Any) -> tuple[Any, Expanded | None]:
    """The server to record against: the command or URL given, else the recorded one."""
    from cassette.client.target import ServerTarget

    command = list(args.server)
    if command and command[0] == "--":
        command = command[1:]
    if command and args.upstream is not None:
        raise UsageError("give either --upstream URL or a server command, not both")
    cwd = None
    if not command and args.upstream is None:
        from cassette.client.launch import recorded_server

        recorded = recorded_server(header, args.tape, source=args.tape)
        command, cwd = list(recorded.command), recorded.cwd
        args.from_header = bool(command)
        args.upstream = recorded.url
    recorded_on = str(header.transport)
    default = "stdio" if command else recorded_on
    if not command and recorded_on == "stdio":
        default = "streamable-http"  # a URL given for a stdio recording
    transport = front_name(args.transport, default)
    if args.upstream is None and args.headers:
        raise UsageError("--header is for a server reached by URL, not a command")
    expanded = upstream_headers(args) if args.upstream is not None else None
    headers = expanded.headers if expanded is not None else None
    server = ServerTarget(
        command=tuple(command), url=args.upstream, transport=transport, headers=headers, cwd=cwd
    )
    return server, expanded


def _redactor(args: argparse.Namespace, tape: Any) -> Any:
    from cassette.store.gate import RedactOptions, joined, policy

    redactor = policy(RedactOptions.from_args(args))
    header = tape.header
    if redactor is not None and header.redaction:
        # never fewer rules than it had; numbered on after the placeholders it holds
        redactor = joined(redactor, header.redaction, events=(header, *tape.events))
    if redactor is None:
        err(f"warning: redaction is off: secrets in the variants will be written to {args.tape}")
    return redactor


def _chosen(args: argparse.Namespace, name: str) -> Any:
    """The client ``--as NAME`` records as: a profile, or with ``--capabilities`` the one
    declaring exactly those (``custom_profile``)."""
    from cassette.client.variants import custom_profile

    if args.capabilities is None:
        if args.roots:
            raise UsageError("--roots needs --capabilities roots,...")
        return name
    declared = [c.strip() for c in args.capabilities.split(",") if c.strip()]
    return custom_profile(name, declared, args.roots)


def run(args: argparse.Namespace) -> int:
    from cassette.client.launch import with_hint
    from cassette.client.record import RecordTuning
    from cassette.client.variants import PROFILES, VariantOptions, VariantResult, record_variant
    from cassette.store.storage import Cassette

    unknown = [n for n in args.profiles if n not in PROFILES]
    if unknown and args.capabilities is None:
        from cassette.core.words.suggest import did_you_mean

        raise UsageError(
            f"--as {unknown[0]}: unknown client{did_you_mean(unknown[0], PROFILES)}; choose "
            f"one of: {', '.join(PROFILES)} (or name your own with --capabilities LIST)"
        )
    tape = Cassette.load(args.tape)
    header = tape.header
    server, expanded = _server(args, header)
    tuning = RecordTuning(redactor=with_header_secrets(_redactor(args, tape), expanded))
    options = VariantOptions(
        tuning=tuning,
        step_seconds=args.timeout,
        replace=args.replace,
        answers=_answers(args.answers),
    )
    results: list[VariantResult] = []

    async def go() -> int:
        for name in dict.fromkeys(args.profiles):
            err(f"recording variant {name} of {args.tape} against {server.describe()}")
            found = await record_variant(args.tape, _chosen(args, name), server, options)
            results.append(found)
            _tell(found, os.fspath(args.tape))
        return 0

    try:
        code = run_async(go)
    except (TransportError, ExceptionGroup) as exc:
        inner = sole_exception(exc) if isinstance(exc, ExceptionGroup) else exc
        if not args.from_header or not isinstance(inner, TransportError):
            raise
        raise TransportError(with_hint(str(inner), args.tape)) from inner
    refused = [f"variant {r.name} not recorded: {r.error}" for r in results if r.error]
    if refused and not code:
        said = with_hint("; ".join(refused), args.tape if args.from_header else None)
        err("error: " + said)  # the last line, as for every failed command
        return _REFUSED
    return code


def _answers(path: str | None) -> dict[str, dict[str, Any]]:
    """``--answers FILE``: a JSON object, method -> the result the client answers with."""
    if path is None:
        return {}
    import json

    from cassette.store.files import open_regular

    with open_regular(path, "answers file") as file:  # a missing one: exit 3, named
        data = file.read(_MAX_ANSWERS + 1)
    if len(data) > _MAX_ANSWERS:
        raise UsageError(f"{path}: an answers file holds at most {_MAX_ANSWERS} bytes")
    try:
        value = json.loads(data)
    except ValueError as exc:
        raise UsageError(f"{path}: not JSON: {exc}") from exc
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise UsageError(f"{path}: must be a JSON object of method -> result object")
    return {str(method): {"result": result} for method, result in value.items()}


def _tell(result: Any, tape: str) -> None:
    if result.skipped:
        err(f"variant {result.name}: skipped: {result.skipped}")
    elif not result.error:
        refused = len(result.failed_steps)
        also = f" ({refused} answered with an error)" if refused else ""
        err(
            f"variant {result.name}: sent {result.requests} request(s) again{also}; "
            f"appended {result.appended} line(s) to {tape}"
        )
    if result.unanswered:
        asked = ", ".join(result.unanswered)
        err(
            f"warning: variant {result.name}: the server asked {asked}, which the recording "
            "never answered; the variant holds what the server did with a refusal (give "
            "--answers FILE to record a client's answer)"
        )
