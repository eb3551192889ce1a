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

from cassette.cli.exits import recording_exit
from cassette.cli.headers import (
    goes_live,
    header_options,
    upstream_headers,
    with_header_secrets,
)
from cassette.cli.layout import Layout
from cassette.cli.modes import add_mode_options, apply_sessions, record_choice, run_in_mode
from cassette.cli.options import (
    REDACTION_DESTS,
    allow_repeats,
    allowed_origins,
    fault_options,
    fault_policy,
    front_name,
    ignore_options,
    ignore_params,
    keep_volatile,
    limit_options,
    listen_options,
    origin_options,
    redaction_options,
    repeat_options,
    volatile_options,
)
from cassette.cli.output import err, log_option, log_to
from cassette.cli.running import run_async
from cassette.cli.values import seconds
from cassette.core.redaction.headers import Expanded
from cassette.core.wire.urls import check_http_url
from cassette.errors import UsageError
from cassette.modes.policy import ModeChoice
from cassette.runtime.record import RecordConfig
from cassette.store.gate import shown, shown_argv
from cassette.transport import ServeOptions, Target

__all__ = ["RecordCommand", "add_parsers", "run"]


def add_parsers(sub: Any, only: str | None = None) -> None:
    """Register ``record`` (its module registers nothing else, so ``only`` changes nothing)."""
    rec = sub.add_parser(
        "record",
        help="record a live server through a transparent proxy",
        description="Run COMMAND as an MCP server and proxy this process's stdin/stdout to "
        "it, writing every frame to TAPE as it passes. Point your client at this command "
        "instead of the server. With --scenarios FILE, cassette is the client: each "
        "scenario of FILE is run against the server FILE names and recorded to "
        "DIR/NAME.jsonl.",
    )
    rec.add_argument(
        "-o",
        "--output",
        metavar="TAPE",
        help="cassette to write (with --scenarios: the folder for the cassettes, default "
        "the file's cassettes setting, beside it)",
    )
    rec.add_argument(
        "--scenarios",
        metavar="FILE",
        help="record the scenarios of FILE (TOML or JSON; docs/scenarios.md), no client needed",
    )
    rec.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="NAME",
        help="with --scenarios: record only this scenario (repeatable)",
    )
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
    header_options(rec, "the upstream (--upstream)")
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
        "--timeout",
        "--upstream-timeout",
        dest="upstream_timeout",
        type=seconds,
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
    log_option(rec)
    rec.add_argument(
        "--no-probe",
        dest="probe",
        action="store_false",
        default=None,
        help="do not start the server again beside the session to capture what any client "
        "may list (the handshake in each era, every advertised listing under each known "
        "client's capabilities): the cassette then answers only what its own client asked "
        "(also probe = false in [tool.cassette])",
    )
    rec.add_argument(
        "--probe",
        dest="probe",
        action="store_true",
        help="probe even where [tool.cassette] says probe = false (the default otherwise)",
    )
    redaction_options(rec)
    rec.add_argument(
        "--no-stderr",
        dest="keep_stderr",
        action="store_const",
        const=False,
        default=None,
        help="keep none of the server's stderr in the cassette (it is still shown as it "
        "comes); also: stderr = false in [tool.cassette]",
    )
    rec.add_argument(
        "--before-record",
        metavar="MODULE:FUNCTION",
        help="call FUNCTION(message, direction) on each message before it is written; it "
        "returns what to write, or None to drop it; redaction runs after it (also "
        "before-record in [tool.cassette]; module:function or path/file.py:function)",
    )
    fault_options(rec)
    ignore_options(rec)
    repeat_options(rec)
    volatile_options(rec)
    add_mode_options(rec)
    rec.add_argument("server", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARG...]")
    rec.set_defaults(handler=run, serves=True)
    rec.layout = _LAYOUT


_LAYOUT = Layout(
    usage="cassette record -o TAPE [options] (-- COMMAND [ARG...] | --upstream URL)\n"
    "       cassette record --scenarios FILE [--scenario NAME]... [-o DIR] [options]",
    groups={
        "what to record": ("output", "transport", "upstream", "headers", "scenarios", "scenario"),
        "how it is written": (
            "overwrite",
            "fsync",
            "strategy",
            "era",
            "keep_stderr",
            "before_record",
            "ignore_param",
            "allow_repeats",
            "keep_volatile",
        ),
        "secrets (redaction is on by default)": REDACTION_DESTS,
        "timing and limits": ("upstream_timeout", "max_message_bytes", "max_depth"),
        "the recording proxy (--upstream over HTTP or SSE)": ("host", "port", "allow_origin"),
        "record modes": ("mode", "prime", "report", "sessions", "faults"),
    },
    examples=(
        "cassette record -o t.jsonl -- node server.js",
        "cassette record -o t.jsonl --upstream http://127.0.0.1:3001/mcp",
        "cassette record -o t.jsonl --mode once -- python server.py",
        "cassette record --scenarios scenarios.toml",
    ),
)


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
    faults: str | None = None
    ignore: tuple[str, ...] = ()
    prime: bool = False
    repeats: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RecordCommand:
        from cassette.cli.options import apply_limits
        from cassette.core.replay.matching import get_strategy

        command = list(args.server)
        if command and command[0] == "--":
            command = command[1:]
        if args.strategy is not None:
            get_strategy(args.strategy)
        limit = apply_limits(args)
        mode = record_choice(args.mode, overwrite=args.overwrite, source=args.mode_source)
        if mode is None and args.report is not None:
            raise UsageError(
                "--report needs a mode (--mode, or MCP_CASSETTE_MODE): a plain recording "
                "has nothing to report"
            )
        if mode is None and args.allow_repeats:
            raise UsageError(
                "--allow-repeats needs a mode (--mode once, none or new_episodes): a plain "
                "recording answers nothing from the cassette"
            )
        if mode is None and args.faults is not None:
            raise UsageError(
                "--faults needs a mode (--mode once, none or new_episodes): faults are laid "
                "over a replay, never over a recording"
            )
        if args.upstream is not None and command:
            raise UsageError("give either --upstream URL or a server command, not both")
        if args.upstream is None and not command:
            from cassette.cli.suggest import no_command

            raise UsageError(no_command("record", "no server command, and no --upstream URL"))
        default = "streamable-http" if args.upstream is not None else "stdio"
        transport = front_name(args.transport, default)
        if args.era == "modern" and transport == "sse":
            raise UsageError(
                "--era modern: the legacy HTTP+SSE transport carries legacy sessions only"
            )
        proxied = _has_proxy(transport)
        if command and proxied:
            raise UsageError(
                f"--transport {args.transport} reaches a server at a URL: give --upstream URL "
                "instead of a server command (a command is recorded over stdio)"
            )
        network = args.upstream is not None and proxied
        if not network:
            _no_listening(args, "a stdio recording listens on nothing: they are for --upstream")
        if network:
            check_http_url(args.upstream, "--upstream")
        elif args.upstream is not None and "://" not in args.upstream:
            raise UsageError(f"--upstream: {args.upstream!r} is not a URL (it needs a scheme)")
        origins = allowed_origins(args.allow_origin, served=network)
        output = apply_sessions(args.output, args.sessions)
        headers = _headers(args, live=mode is None or goes_live(mode, output))
        config = RecordConfig(
            path=output,
            transport=transport,
            overwrite=args.overwrite,
            fsync=args.fsync,
            strategy=args.strategy,
            redactor=with_header_secrets(_redactor(args, output), headers),
            upstream_timeout=args.upstream_timeout,
            on_warning=lambda text: err(f"warning: {text}"),
            on_info=err,  # through err: a --log file gets the probes' line too
            before_record=_before_record(args.before_record),
            keep_stderr=_keep_stderr(args.keep_stderr),
            era=args.era,
            probe=_probe(args.probe),
            client_run=_client_run(mode is None and not network and not args.overwrite),
            volatile=keep_volatile(args),
        )
        return cls(
            target=Target(
                command=tuple(command),
                url=args.upstream,
                headers=headers.headers if headers is not None else None,
            ),
            config=config,
            listen=ServeOptions(
                host=args.host, port=args.port, max_message_bytes=limit, allowed_origins=origins
            ),
            network=network,
            mode=mode,
            report=args.report,
            faults=args.faults,
            ignore=ignore_params(args),
            repeats=allow_repeats(args) if mode is not None else False,
            prime=args.prime,
        )


def _client_run(plain: bool) -> str | None:
    """A plain stdio recording is a start of its client's run: a client that starts the
    server again while it runs (once per tool call) has each start appended to the one
    cassette (``cassette.store.starts``). A mode or ``--overwrite`` says what a start
    means already, and a recording proxy serves every session of its client itself."""
    if not plain:
        return None
    from cassette.store.starts import client_run

    return client_run()


def _no_listening(args: argparse.Namespace, why: str) -> None:
    """``--host``, ``--port`` and ``--allow-origin`` where nothing listens: refused, not
    silently ignored."""
    from cassette.cli.options import listening_given

    given = listening_given(args)
    if given:
        raise UsageError(f"{given}: {why}")


def _keep_stderr(given: bool | None) -> bool:
    """``--no-stderr``, else the project's ``stderr``, else keep it."""
    from cassette.store.config import keep_stderr_for, load_settings

    return keep_stderr_for(load_settings(), given)


def _probe(option: bool | None) -> bool:
    """``--probe`` or ``--no-probe``, else the project's ``probe`` (``probe_setting``)."""
    from cassette.store.config import probe_setting

    return probe_setting(option)


def _before_record(spec: str | None) -> Any:
    """The hook the option names, else the project's ``before-record``, else none."""
    from cassette.store.config import find_pyproject, load_hook, load_settings

    if spec is None:
        configured = load_settings().get("before-record")
        if configured is None:
            return None
        if not isinstance(configured, str):
            raise UsageError('[tool.cassette] before-record must be "module:function"')
        found = find_pyproject()
        return load_hook(configured, found.parent if found is not None else None)
    return load_hook(spec)


def _headers(args: argparse.Namespace, *, live: bool) -> Expanded | None:
    """``--header`` (and ``[tool.cassette] headers``) for an ``--upstream``; a server
    command gets its credentials from its environment instead. A session that will not
    reach the server (a mode that replays) needs none: a variable left unset is then no
    error."""
    if args.upstream is None:
        if args.headers:
            raise UsageError("--header is for --upstream URL: a server command reads its own")
        return None
    if live:
        return upstream_headers(args)
    try:
        return upstream_headers(args)
    except UsageError:
        return None


def _has_proxy(transport: str) -> bool:
    from cassette.registry import get_transport
    from cassette.transport import RecordingFront

    return isinstance(get_transport(transport), RecordingFront)


def _redactor(args: argparse.Namespace, output: str) -> Any:
    from cassette.store.gate import RedactOptions, policy

    redactor = policy(RedactOptions.from_args(args))
    if redactor is None:
        err(f"warning: redaction is off: secrets in this session will be written to {output}")
    return redactor


def adopt_orphans() -> None:
    """A server's descendant that leaves its process group is ended with it (Linux; see
    ``cassette.transports.stdio._reaper``). Only here: the process is the command's own."""
    from cassette.transports.stdio._reaper import adopt_orphans as adopt

    adopt()


def run(args: argparse.Namespace) -> int:
    if args.scenarios is not None or args.scenario:
        from cassette.cli.scenarios import run_scenarios

        return run_scenarios(args)
    if args.output is None:
        raise UsageError("record needs -o TAPE, the cassette to write (or --scenarios FILE)")
    command = RecordCommand.from_args(args)
    adopt_orphans()  # this process is the recorder's own: what leaves the group is ours
    logged = log_to(args.log)
    if logged is not None:
        err(f"logging to {logged} (as well as stderr)")
    if command.mode is not None:
        return _in_mode(command, command.mode)
    if command.network:
        return _record_proxy(command)
    return _record_session(command)


def _record_session(command: RecordCommand) -> int:
    """A plain recording with this process's stdin/stdout as the client: a banner first and
    a summary at the end, on stderr (stdout is the protocol)."""
    from cassette.runtime.record import RecordResult, record_session

    results: list[RecordResult] = []
    config = attrs.evolve(command.config, on_result=results.append)

    path = os.fspath(command.config.path)
    url = command.target.url  # what a person reads passes the gate (a CI log)
    target = shown(url) if url else shown_argv(command.target.command)
    redaction = "on" if command.config.redactor is not None else "OFF"
    err(f"recording {target} to {path} ({command.config.transport}; redaction {redaction})")

    async def go() -> int:
        await record_session(command.target, config)
        return 0

    code = run_async(go)
    result = results[0] if results else None
    if result is not None and result.succeeded:  # a failure is told by recording_exit
        err(result.written())
    told = recording_exit(result)
    return code or told  # a signal's code wins; the line was said either way


def _record_proxy(command: RecordCommand) -> int:
    from cassette.runtime.record import RecordResult, record_proxy

    upstream = command.target.url
    assert upstream is not None
    path = os.fspath(command.config.path)

    def ready(url: str) -> None:
        err(f"recording {shown(upstream)} to {path}; point your client at {url}")

    listen = attrs.evolve(command.listen, on_ready=ready)
    results: list[RecordResult] = []
    config = attrs.evolve(command.config, on_result=results.append)
    started = False

    async def go() -> int:
        nonlocal started
        started = True  # stopping the proxy is how a recording ends
        await record_proxy(command.target, config, listen)
        return 0

    code = run_async(go, on_signal=lambda: 0 if started else None)
    result = results[0] if results else None
    if result is not None and result.succeeded:  # as a stdio recording ends
        err(result.written())
    return recording_exit(result) or code


def _in_mode(command: RecordCommand, choice: ModeChoice) -> int:
    from cassette.modes.runner import ModeOptions
    from cassette.runtime.conversation import DeliveryPolicy

    path = os.fspath(command.config.path)
    listen = command.listen
    if command.network:
        upstream = command.target.url

        def ready(url: str) -> None:
            err(f"serving {path} for {shown(str(upstream))}; point your client at {url}")

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
        ignore=command.ignore,
        allow_repeats=command.repeats,
        before_record=command.config.before_record,
        keep_stderr=command.config.keep_stderr,
        prime=command.prime,
        volatile=command.config.volatile,
        probe=command.config.probe,
        policy=fault_policy(
            DeliveryPolicy(
                on_miss=lambda text: err(f"miss: {text}"),
                on_warning=lambda text: err(f"warning: {text}"),
                max_message_bytes=listen.max_message_bytes,
            ),
            command.faults,
        ),
    )
    return run_in_mode(path, choice, options, report=command.report, network=command.network)
