"""``cassette record``: a transparent recording proxy in front of a live server.

The options are read once into a ``RecordCommand`` (validated there, with one-line
errors), and that value alone decides what runs:

* a server command (``-- COMMAND``) or a plugin that reaches its server itself (``--transport
  tcp --upstream URL``): the client talks to us on stdio, ``record_session`` relays;
* ``--upstream URL`` over a transport with a recording proxy (streamable HTTP, ``sse``):
  ``record_proxy`` serves a local URL for the client;
* a record mode (``--mode``, or ``MCP_CASSETTE_MODE``): the mode runner, with the same
  values as ``ModeOptions``.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import attrs

from cassette.cli.common import (
    allowed_origins,
    err,
    front_name,
    limit_options,
    listen_options,
    origin_options,
    run_async,
)
from cassette.cli.modes import add_mode_options, apply_sessions, record_choice, run_in_mode
from cassette.core.redaction import redact_text
from cassette.errors import UsageError
from cassette.modes.policy import ModeChoice
from cassette.runtime.record import RecordConfig
from cassette.transport import ServeOptions, Target

__all__ = ["RecordCommand", "add_parser", "run"]


def add_parser(sub: Any) -> None:
    rec = sub.add_parser(
        "record",
        help="record a live server through a transparent proxy",
        description="Run COMMAND as an MCP server and proxy this process's stdin/stdout to "
        "it, writing every frame to TAPE as it passes. Point your client at this command "
        "instead of the server.",
    )
    rec.add_argument("-o", "--output", required=True, metavar="TAPE", help="cassette to write")
    rec.add_argument(
        "--strategy",
        metavar="S",
        help="matching strategy replays of this cassette use by default "
        "(strict, default, loose); stored in the header",
    )
    rec.add_argument(
        "--transport",
        help="transport plugin (default: stdio, or streamable-http with --upstream; "
        "http is short for streamable-http)",
    )
    rec.add_argument(
        "--upstream",
        metavar="URL",
        help="record the server at URL instead of a server command: streamable HTTP (or "
        "legacy HTTP+SSE with --transport sse) through a local reverse proxy; with a plugin "
        "that has no proxy, the plugin reaches URL and the client talks to us on stdio",
    )
    listen_options(rec, "the recording proxy")
    origin_options(rec, "the recording proxy")
    limit_options(rec, "an HTTP request body the proxy accepts (stdio recording forwards any)")
    rec.add_argument(
        "--overwrite", action="store_true", help="replace TAPE if it already holds a recording"
    )
    rec.add_argument(
        "--fsync", action="store_true", help="flush every event to disk, not only to the OS"
    )
    rec.add_argument(
        "--upstream-timeout",
        type=float,
        default=None,
        metavar="S",
        help="seconds the server may take to answer a request before the client gets an "
        "error in its place (recorded): over HTTP and SSE (--upstream) a 504, default 60; "
        "over stdio a JSON-RPC error, default none (a tool call may rightly take minutes)",
    )
    rec.add_argument(
        "--era",
        choices=("auto", "legacy", "modern"),
        default="auto",
        help="the protocol era to record in: auto (default) lets the client choose; legacy "
        "answers a dual-era client's server/discover probe with -32601 as a legacy server "
        "would, so it falls back to initialize (a cassette for initialize-only clients); "
        "modern refuses initialize with -32022 (see docs/matching.md)",
    )
    rec.add_argument(
        "--no-redact",
        action="store_true",
        help="write secrets as they are (warned about); redaction is on by default",
    )
    rec.add_argument(
        "--redact-pattern",
        action="append",
        default=[],
        metavar="REGEX",
        help="also redact what this regular expression matches (repeatable)",
    )
    rec.add_argument(
        "--redact-path",
        action="append",
        default=[],
        metavar="POINTER",
        help="also redact the value at this JSON Pointer in every message (repeatable)",
    )
    rec.add_argument(
        "--redact-env",
        action="append",
        default=[],
        metavar="NAME",
        help="also redact the value of this environment variable wherever it appears",
    )
    add_mode_options(rec)
    rec.add_argument("server", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARG...]")
    rec.set_defaults(handler=run)


@attrs.frozen(kw_only=True)
class RecordCommand:
    """``cassette record``'s options, validated: what to record, how, and where."""

    target: Target
    config: RecordConfig
    listen: ServeOptions
    #: record through the transport's own proxy (a network transport and ``--upstream``)
    network: bool
    mode: ModeChoice | None
    report: str | None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RecordCommand:
        from cassette.cli.common import apply_limits
        from cassette.core.matching import get_strategy

        command = list(args.server)
        if command and command[0] == "--":
            command = command[1:]
        if args.strategy is not None:
            get_strategy(args.strategy)
        limit = apply_limits(args)
        mode = record_choice(args.mode, overwrite=args.overwrite)
        if mode is None and args.report is not None:
            raise UsageError(
                "--report needs a mode (--mode, or MCP_CASSETTE_MODE): a plain recording "
                "has nothing to report"
            )
        if args.upstream is not None and command:
            raise UsageError("give either --upstream URL or a server command, not both")
        if args.upstream is None and not command:
            raise UsageError("record needs the server command after --, e.g. -- node server.js")
        default = "streamable-http" if args.upstream is not None else "stdio"
        transport = front_name(args.transport, default)
        if args.era == "modern" and transport == "sse":
            raise UsageError(
                "--era modern: the legacy HTTP+SSE transport carries legacy sessions only"
            )
        network = args.upstream is not None and _has_proxy(transport)
        origins = allowed_origins(args.allow_origin, served=network)
        output = apply_sessions(args.output, args.sessions)
        config = RecordConfig(
            path=output,
            transport=transport,
            overwrite=args.overwrite,
            fsync=args.fsync,
            strategy=args.strategy,
            redactor=_redactor(args, output),
            upstream_timeout=args.upstream_timeout,
            on_warning=lambda text: err(f"warning: {text}"),
            era=args.era,
        )
        return cls(
            target=Target(command=tuple(command), url=args.upstream),
            config=config,
            listen=ServeOptions(
                host=args.host, port=args.port, max_message_bytes=limit, allowed_origins=origins
            ),
            network=network,
            mode=mode,
            report=args.report,
        )


def _has_proxy(transport: str) -> bool:
    from cassette.registry import get_transport
    from cassette.transport import RecordingFront

    return isinstance(get_transport(transport), RecordingFront)


def _redactor(args: argparse.Namespace, output: str) -> Any:
    from cassette.store.config import load_settings, redactor_for

    redactor = redactor_for(
        load_settings(),
        enabled=not args.no_redact,
        patterns=args.redact_pattern,
        paths=args.redact_path,
        env=args.redact_env,
    )
    if redactor is None:
        err(f"warning: redaction is off: secrets in this session will be written to {output}")
    return redactor


def run(args: argparse.Namespace) -> int:
    command = RecordCommand.from_args(args)
    if command.mode is not None:
        return _in_mode(command, command.mode)
    if command.network:
        return _record_proxy(command)
    return _record_session(command)


def _record_session(command: RecordCommand) -> int:
    from cassette.runtime.record import record_session

    async def go() -> int:
        result = await record_session(command.target, command.config)
        code = result.exit_code
        return code if isinstance(code, int) and 0 < code < 128 else 0

    return run_async(go)


def _record_proxy(command: RecordCommand) -> int:
    from cassette.runtime.record import record_proxy

    upstream = command.target.url
    assert upstream is not None
    path = os.fspath(command.config.path)

    def ready(url: str) -> None:
        err(f"recording {redact_text(upstream)} to {path}; point your client at {url}")

    listen = attrs.evolve(command.listen, on_ready=ready)
    outcome: list[int] = []

    async def go() -> int:
        outcome.append(0)  # stopping the proxy is how a recording ends
        await record_proxy(upstream, command.config, listen)
        return 0

    return run_async(go, outcome)


def _in_mode(command: RecordCommand, choice: ModeChoice) -> int:
    from cassette.modes.runner import ModeOptions
    from cassette.runtime.conversation import DeliveryPolicy

    path = os.fspath(command.config.path)
    listen = command.listen
    if command.network:
        upstream = command.target.url

        def ready(url: str) -> None:
            err(f"serving {path} for {redact_text(str(upstream))}; point your client at {url}")

        listen = attrs.evolve(listen, on_ready=ready)
    transport = front_name(str(command.config.transport), "stdio")
    options = ModeOptions(
        target=command.target,
        transport=transport,
        front=transport if command.network else "stdio",
        strategy=command.config.strategy,
        fsync=command.config.fsync,
        redactor=command.config.redactor,
        upstream_timeout=command.config.upstream_timeout,
        era=command.config.era,
        listen=listen,
        policy=DeliveryPolicy(
            on_miss=lambda text: err(f"miss: {text}"),
            on_warning=lambda text: err(f"warning: {text}"),
            max_message_bytes=listen.max_message_bytes,
        ),
    )
    return run_in_mode(path, choice, options, report=command.report, network=command.network)
