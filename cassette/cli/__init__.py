"""``python -m cassette``: the command line, a thin layer over the public API.

Everything for people goes to stderr: in stdio modes stdout belongs to the protocol.
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
  128+N  stopped by signal N (130 for Ctrl-C, 143 for SIGTERM); the cassette is closed first
  record otherwise exits with the recorded server's own exit code when it exited by itself.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from cassette._version import __version__
from cassette.cli.modes import (
    add_mode_options,
    apply_sessions,
    miss_reporter,
    record_in_mode,
    replay_in_mode,
    split_replay_command,
)
from cassette.errors import (
    CassetteError,
    PluginError,
    TransportError,
    UsageError,
)

__all__ = ["main"]

EXIT_MISSES = 1
EXIT_USAGE = 2
EXIT_CASSETTE = 3
EXIT_TRANSPORT = 4
EXIT_INTERNAL = 70


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"cassette: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="cassette",
        description="Record real MCP sessions and replay them as a server.",
        epilog="Exit codes: 0 ok, 1 replay misses or tool findings, 2 usage, 3 cassette, "
        "4 transport, 128+N signal. See docs/cli.md.",
    )
    parser.add_argument("--version", action="version", version=f"cassette-mcp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

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
        help="transport plugin (default: stdio, or streamable-http with --upstream)",
    )
    rec.add_argument(
        "--upstream",
        metavar="URL",
        help="record the server at URL instead of a server command: streamable HTTP (or "
        "legacy HTTP+SSE with --transport sse) through a local reverse proxy; with a plugin "
        "that has no proxy, the plugin reaches URL and the client talks to us on stdio",
    )
    _listen_options(rec, "the recording proxy")
    _limit_options(rec, "an HTTP request body the proxy accepts (stdio recording forwards any)")
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
        "error in its place (recorded): over HTTP (--upstream) a 504, default 60; over stdio "
        "a JSON-RPC error, default none (a tool call may rightly take minutes)",
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

    rep = sub.add_parser(
        "replay",
        help="serve a cassette as an MCP server",
        description="Answer an MCP client from TAPE, as the recorded server did. Requests "
        "that were not recorded get a JSON-RPC error naming the closest recording.",
    )
    rep.add_argument("tape", metavar="TAPE", help="cassette to serve")
    rep.add_argument(
        "--strategy",
        metavar="S",
        help="strict, default or loose (default: the cassette's, else default)",
    )
    rep.add_argument(
        "--front",
        "--transport",
        dest="transport",
        default="stdio",
        help="how clients reach the replay: stdio (default), http (streamable HTTP) or "
        "sse (legacy HTTP+SSE)",
    )
    _listen_options(rep, "the HTTP front")
    _limit_options(rep, "a client line (stdio) or request body (HTTP, else 413)")
    rep.add_argument("-q", "--quiet", action="store_true", help="no start-up banner")
    add_mode_options(rep)
    rep.set_defaults(server=[])  # replay TAPE [options] -- COMMAND: see split_replay_command
    rep.add_argument(
        "--pace",
        choices=("none", "recorded"),
        default="none",
        help="none (default): answer as fast as possible; recorded: reproduce the recorded "
        "delays between server messages",
    )
    rep.add_argument(
        "--pace-scale", type=float, default=1.0, metavar="X", help="multiply recorded delays by X"
    )
    rep.add_argument(
        "--pace-cap", type=float, default=5.0, metavar="S", help="at most S seconds per delay"
    )
    rep.add_argument(
        "--answer-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds to wait for the client's answer to a replayed server request (default 30)",
    )
    _add_tool_commands(sub)
    return parser


def _add_tool_commands(sub: Any) -> None:
    """lint, diff, redact, show, check, verify: parsers only; code imported when they run."""
    from cassette.tools import add_tool_commands

    add_tool_commands(sub)


def _run_tool(args: argparse.Namespace) -> int:
    from cassette.tools import dispatch

    return dispatch(args)


def _size(text: str) -> int:
    from cassette.core.limits import parse_size

    try:
        return parse_size(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _limit_options(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--max-message-bytes",
        type=_size,
        metavar="SIZE",
        help=f"largest {what}: bytes, or with KB, MB, GB, KiB, MiB, GiB "
        "(default 64MiB, or max-message-bytes in [tool.cassette])",
    )
    parser.add_argument(
        "--max-depth",
        type=int,
        metavar="N",
        help="JSON nested deeper than N arrays and objects is refused, in messages and "
        "cassettes (default 256, or max-depth in [tool.cassette])",
    )


def _apply_limits(args: argparse.Namespace) -> int | None:
    """Set the process's depth limit; return the size limit (``None``: the default)."""
    from cassette.core.limits import set_max_depth
    from cassette.store.config import limits_for, load_settings

    if args.max_depth is not None and args.max_depth < 1:
        raise UsageError(f"--max-depth must be at least 1, not {args.max_depth}")
    size, depth = limits_for(
        load_settings(), max_message_bytes=args.max_message_bytes, max_depth=args.max_depth
    )
    if depth is not None:
        set_max_depth(depth)
    return size


def _listen_options(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--host", default="127.0.0.1", help=f"address {what} listens on (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=0, help=f"port {what} listens on (default 0: a free one)"
    )


_FRONT_ALIASES = {"http": "streamable-http"}


def _err(text: str) -> None:
    sys.stderr.write(f"cassette: {text}\n")
    sys.stderr.flush()


def _run_async(func: Callable[[], Awaitable[int]], outcome: list[int] | None = None) -> int:
    """Run ``func`` under anyio, turning SIGINT/SIGTERM into a clean, coded exit.

    A network front runs until it is stopped, so for it a signal is the normal end: it
    puts its own exit code in ``outcome`` (from a ``finally``), and that code wins.
    """
    import anyio

    caught: list[int] = []

    async def guarded() -> int:
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                if sys.platform == "win32":  # no signal receiver there; Ctrl-C still works
                    return
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for signum in signals:
                        caught.append(int(signum))
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(watch)
            code = await func()
            tg.cancel_scope.cancel()
        if caught:
            return outcome[0] if outcome else 128 + caught[0]
        return code

    try:
        return anyio.run(guarded)
    except KeyboardInterrupt:
        return 128 + signal.SIGINT


def _record(args: argparse.Namespace) -> int:
    from cassette.core.matching import get_strategy
    from cassette.runtime.session import record

    command = list(args.server)
    if command and command[0] == "--":
        command = command[1:]
    if args.strategy is not None:
        get_strategy(args.strategy)
    args.max_message_bytes = _apply_limits(args)  # resolved: the option, else the project's
    apply_sessions(args, "output")
    if (code := record_in_mode(args, command)) is not None:
        return code
    if args.upstream is not None:
        if command:
            raise UsageError("give either --upstream URL or a server command, not both")
        if not _frame_transport(args.transport):
            return _record_http(args)
    elif not command:
        raise UsageError("record needs the server command after --, e.g. -- node server.js")
    result_code: list[int | None] = []

    redactor = _recording_redactor(args)

    async def go() -> int:
        result = await record(
            command,
            args.output,
            transport=args.transport or "stdio",
            overwrite=args.overwrite,
            fsync=args.fsync,
            strategy=args.strategy,
            url=args.upstream,
            redactor=redactor,
            upstream_timeout=args.upstream_timeout,
            on_warning=lambda text: _err(f"warning: {text}"),
        )
        result_code.append(result.exit_code)
        code = result.exit_code
        return code if isinstance(code, int) and 0 < code < 128 else 0

    return _run_async(go)


def _frame_transport(name: str | None) -> bool:
    """A plugin with no recording proxy reaches ``--upstream`` itself, the client on stdio."""
    if name is None or name in _FRONT_ALIASES:
        return False
    from cassette.registry import load_transport

    return not hasattr(load_transport(name), "record_proxy")


def _record_http(args: argparse.Namespace) -> int:
    from cassette.runtime.session import record_http

    transport = _FRONT_ALIASES.get(args.transport, args.transport) or "streamable-http"

    def ready(url: str) -> None:
        _err(f"recording {args.upstream} to {args.output}; point your client at {url}")

    redactor = _recording_redactor(args)
    outcome: list[int] = []

    async def go() -> int:
        outcome.append(0)  # stopping the proxy is how a recording ends
        await record_http(
            args.upstream,
            args.output,
            host=args.host,
            port=args.port,
            overwrite=args.overwrite,
            fsync=args.fsync,
            strategy=args.strategy,
            on_ready=ready,
            transport=transport,
            redactor=redactor,
            upstream_timeout=args.upstream_timeout,
            max_message_bytes=args.max_message_bytes,
        )
        return 0

    return _run_async(go, outcome)


def _recording_redactor(args: argparse.Namespace) -> Any:
    from cassette.store.config import load_settings, redactor_for

    redactor = redactor_for(
        load_settings(),
        enabled=not args.no_redact,
        patterns=args.redact_pattern,
        paths=args.redact_path,
        env=args.redact_env,
    )
    if redactor is None:
        _err(f"warning: redaction is off: secrets in this session will be written to {args.output}")
    return redactor


def _client_config(tape: Path, command: str = "replay") -> dict[str, Any]:
    """The ``mcpServers`` block that runs ``cassette COMMAND TAPE`` (replay, mock)."""
    return {
        "mcpServers": {
            tape.stem.replace(".", "-") or "cassette": {
                "command": sys.executable,
                "args": ["-m", "cassette", command, str(tape)],
            }
        }
    }


def _replay(args: argparse.Namespace) -> int:
    from cassette.core.matching import get_strategy
    from cassette.runtime.session import Pacing, ReplayResult, serve_replay
    from cassette.store.storage import Cassette

    max_message_bytes = args.max_message_bytes = _apply_limits(args)  # --mode reads it too
    apply_sessions(args, "tape")
    if (code := replay_in_mode(args)) is not None:
        return code
    tape = Cassette.load(args.tape)
    for warning in tape.warnings:
        _err(f"warning: {warning}")
    recorded_strategy = tape.header.target.get("strategy")
    strategy = get_strategy(args.strategy or recorded_strategy or "default")
    transport = _FRONT_ALIASES.get(args.transport, args.transport)
    path = Path(args.tape).resolve()
    if not args.quiet:
        _banner(path, tape, strategy.name, transport)

    ready = _serving_on(path, quiet=args.quiet)
    outcome: list[int] = []

    def finished(result: ReplayResult) -> None:
        if result.summary:
            _err(result.summary)
        if not outcome or result.misses:
            outcome[:] = [EXIT_MISSES if result.misses else 0]

    async def go() -> int:
        await serve_replay(
            tape,
            strategy=strategy,
            transport=transport,
            on_miss=miss_reporter(args, args.tape),
            host=args.host,
            port=args.port,
            on_ready=ready,
            on_finish=finished,
            on_warning=lambda text: _err(f"warning: {text}"),
            answer_timeout=args.answer_timeout,
            pacing=Pacing(args.pace_scale, args.pace_cap) if args.pace == "recorded" else None,
            max_message_bytes=max_message_bytes,
        )
        return outcome[0] if outcome else 0

    return _run_async(go, outcome)


def _banner(path: Path, tape: Any, strategy: str, transport: str) -> None:
    header = tape.header
    exchanges = sum(1 for m in tape.messages("c2s") if "id" in m)
    version = header.protocol_version or "unknown protocol"
    _err(
        f"replaying {path} ({header.transport} recording, {tape.era} era, {version}; "
        f"{exchanges} requests; strategy {strategy}; serving on {transport})"
    )
    if transport == "stdio":
        _print_config(_client_config(path))


def _print_config(config: dict[str, Any]) -> None:
    """A ready-to-paste client configuration, on stderr."""
    sys.stderr.write("client configuration:\n" + json.dumps(config, indent=2) + "\n")
    sys.stderr.flush()


def _serving_on(path: Path, *, quiet: bool) -> Callable[[str], None]:
    """A network front's ``on_ready`` for serving ``path`` (replay, mock): the URL and,
    unless ``quiet``, the client configuration that names it."""

    def ready(url: str) -> None:
        _err(f"serving on {url}")
        if not quiet:
            name = path.stem.replace(".", "-") or "cassette"
            _print_config({"mcpServers": {name: {"url": url}}})

    return ready


def _unwrap(exc: BaseException) -> BaseException:
    """Task groups wrap errors in exception groups; a lone error is what a person needs."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _exit_code(exc: BaseException) -> int:
    if isinstance(exc, UsageError | PluginError):
        return EXIT_USAGE
    if isinstance(exc, TransportError):
        return EXIT_TRANSPORT
    return EXIT_CASSETTE


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m cassette`` and the ``cassette`` script."""
    argv, command = split_replay_command(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    if command is not None:
        args.server = command
    handlers = {"record": _record, "replay": _replay}
    try:
        return handlers.get(args.command, _run_tool)(args)
    except Exception as raised:
        exc = _unwrap(raised)
        if isinstance(exc, CassetteError):
            _err(f"error: {exc}")
            return _exit_code(exc)
        if os.environ.get("CASSETTE_DEBUG"):
            raise
        _err(f"internal error: {type(exc).__name__}: {exc} (set CASSETTE_DEBUG=1 for details)")
        return EXIT_INTERNAL
