"""``cassette replay TAPE``: serve a cassette as an MCP server, on any front.

The options are read once into a ``ReplayCommand`` (a ``DeliveryPolicy`` for how replies
reach clients, ``ServeOptions`` for where the front listens), and the runtime's one serve
path does the rest, whatever the front: stdio, streamable HTTP, SSE or a plugin's.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from cassette.cli.configs import serving_on
from cassette.cli.exits import EXIT_MISSES
from cassette.cli.modes import add_mode_options, apply_sessions, replay_choice, run_in_mode
from cassette.cli.options import (
    allow_repeats,
    allowed_origins,
    fault_options,
    fault_policy,
    front_name,
    ignore_options,
    ignore_params,
    limit_options,
    listen_options,
    listening_given,
    origin_options,
    repeat_options,
)
from cassette.cli.output import err, log_option, log_to
from cassette.cli.running import run_async
from cassette.cli.values import factor, positive_count, seconds
from cassette.errors import CassetteNotFoundError, UsageError
from cassette.modes.policy import ModeChoice, missing_cassette_message
from cassette.runtime.conversation import DeliveryPolicy
from cassette.store.storage import has_recording
from cassette.transport import ServeOptions

if TYPE_CHECKING:
    from cassette.cli.layout import Layout
    from cassette.core.replay.opening import OpeningPool
    from cassette.core.replay.pacing import Pacing
    from cassette.core.replay.sessions import ReplayPool, ResponderPool
    from cassette.runtime.replay_pool import ReplayOptions

__all__ = ["ReplayCommand", "add_parsers", "opened", "run"]


def add_parsers(sub: Any, only: str | None = None) -> None:
    """Register ``replay`` (its module registers nothing else, so ``only`` changes nothing)."""
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
    ignore_options(rep)
    repeat_options(rep)
    rep.add_argument(
        "--front",
        "--transport",
        dest="transport",
        default="stdio",
        help="how clients reach the replay: stdio (default), http (streamable HTTP), "
        "sse (legacy HTTP+SSE), or a plugin's front",
    )
    listen_options(rep, "the HTTP front")
    origin_options(rep, "the HTTP front")
    require_auth_options(rep)
    limit_options(rep, "a client line (stdio) or request body (HTTP, else 413)")
    rep.add_argument("-q", "--quiet", action="store_true", help="no start-up banner")
    rep.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="the banner's details too: eras, revisions, requests, and which known clients "
        "each session serves (reads the whole cassette before the first answer)",
    )
    log_option(rep)
    fault_options(rep)
    add_mode_options(rep)
    rep.set_defaults(server=[])  # replay TAPE [options] -- COMMAND: see split_replay_command
    rep.add_argument(
        "--max-sessions",
        type=positive_count,
        default=1000,
        metavar="N",
        help="HTTP front: at most N sessions open at once; one more ends the least recently "
        "used, whose next request gets 404 (default 1000)",
    )
    rep.add_argument(
        "--pace",
        choices=("none", "recorded"),
        default="none",
        help="none (default): answer as fast as possible; recorded: reproduce the recorded "
        "delays between server messages, on every front",
    )
    rep.add_argument(
        "--pace-scale", type=factor, default=1.0, metavar="X", help="multiply recorded delays by X"
    )
    rep.add_argument(
        "--pace-cap", type=factor, default=5.0, metavar="S", help="at most S seconds per delay"
    )
    rep.add_argument(
        "--answer-timeout",
        type=seconds,
        default=30.0,
        metavar="S",
        help="seconds to wait for the client's answer to a replayed server request (default 30)",
    )
    rep.set_defaults(handler=run, serves=True)
    rep.layout = _layout


def _pacing(args: argparse.Namespace) -> Pacing | None:
    """``--pace recorded``'s pacing, built only then (a replay does not pace by default)."""
    if args.pace != "recorded":
        return None
    from cassette.core.replay.pacing import Pacing

    return Pacing(args.pace_scale, args.pace_cap)


def _layout() -> Layout:
    """``replay --help``'s layout, built only when help is printed: a replay parses its
    options on every start and shows no help."""
    from cassette.cli.layout import Layout

    return Layout(
        usage="cassette replay TAPE [options] [--mode MODE -- COMMAND [ARG...]]",
        groups={
            "matching": ("strategy", "ignore_param", "allow_repeats"),
            "how clients reach the replay": (
                "transport",
                "host",
                "port",
                "allow_origin",
                "quiet",
                "verbose",
            ),
            "timing and limits": (
                "pace",
                "pace_scale",
                "pace_cap",
                "answer_timeout",
                "max_message_bytes",
                "max_depth",
            ),
            "record modes": ("mode", "prime", "report", "sessions", "faults"),
        },
        examples=(
            "cassette replay t.jsonl",
            "cassette replay t.jsonl --front http --port 8080",
            "cassette replay t.jsonl --strategy loose --ignore-param /params/arguments/now",
            "cassette replay t.jsonl --mode once -- node server.js",
        ),
    )


@attrs.frozen(kw_only=True, eq=False)  # compared by identity: no __eq__ to build at import
class ReplayCommand:
    """``cassette replay``'s options, validated: what to serve, where, and how."""

    tape: str
    front: str
    strategy: str | None
    listen: ServeOptions
    policy: DeliveryPolicy
    mode: ModeChoice
    server: tuple[str, ...]
    quiet: bool
    report: str | None
    #: the banner's details (``-v``): the whole cassette is read before the first answer
    verbose: bool = False
    ignore: tuple[str, ...] = ()
    prime: bool = False
    #: a used-up request gets its last answer again (``--allow-repeats``)
    repeats: bool = False
    #: the options that change what the replay does, for the client configuration it prints
    behaviour: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ReplayCommand:
        from cassette.cli.options import apply_limits
        from cassette.core.replay.matching import get_strategy

        limit = apply_limits(args)
        if args.strategy is not None:
            get_strategy(args.strategy)
        if args.answer_timeout <= 0:
            raise UsageError(f"--answer-timeout must be positive, not {args.answer_timeout:g}")
        _check_pacing(args)
        if args.quiet and args.verbose:
            raise UsageError("-q prints no banner and -v a longer one: give one of them")
        tape = apply_sessions(args.tape, args.sessions)
        front = front_name(args.transport, "stdio")
        if front == "stdio":
            given = listening_given(args)
            if given:
                raise UsageError(f"{given}: the stdio front listens on nothing (try --front http)")
        origins = allowed_origins(args.allow_origin, served=front != "stdio")
        auth, auth_servers = require_auth(args, front)
        policy = DeliveryPolicy(
            on_miss=_miss_reporter(args.report, tape),
            on_warning=lambda text: err(f"warning: {text}"),
            answer_timeout=args.answer_timeout,
            pacing=_pacing(args),
            max_message_bytes=limit,
        )
        policy = fault_policy(policy, args.faults)
        return cls(
            tape=tape,
            front=front,
            strategy=args.strategy,
            listen=ServeOptions(
                host=args.host,
                port=args.port,
                max_message_bytes=limit,
                allowed_origins=origins,
                require_auth=auth,
                authorization_servers=auth_servers,
                max_sessions=args.max_sessions,
            ),
            policy=policy,
            mode=replay_choice(args.mode, has_command=bool(args.server)),
            server=tuple(args.server),
            quiet=args.quiet,
            report=args.report,
            verbose=args.verbose,
            ignore=ignore_params(args),
            prime=args.prime,
            repeats=allow_repeats(args),
            behaviour=behaviour_args(args),
        )


def _check_pacing(args: argparse.Namespace) -> None:
    """Pacing values that cannot mean anything are refused before anything starts."""
    if args.pace_scale < 0:
        raise UsageError(f"--pace-scale must be 0 or more, not {args.pace_scale:g}")
    if args.pace_cap < 0:
        raise UsageError(f"--pace-cap must be 0 or more, not {args.pace_cap:g}")


def behaviour_args(args: argparse.Namespace) -> tuple[str, ...]:
    """The options given that change what the replay answers or how: a client
    configuration that leaves one out would quietly serve something else (paths made
    absolute, so the configuration works from anywhere)."""
    out: list[str] = []
    if args.strategy is not None:
        out += ["--strategy", args.strategy]
    for pointer in args.ignore_param:
        out += ["--ignore-param", pointer]
    if args.allow_repeats:
        out += ["--allow-repeats"]
    if args.faults is not None:
        out += ["--faults", str(Path(args.faults).resolve())]
    if args.pace != "none":
        out += ["--pace", args.pace, "--pace-scale", f"{args.pace_scale:g}"]
        out += ["--pace-cap", f"{args.pace_cap:g}"]
    if args.answer_timeout != 30.0:
        out += ["--answer-timeout", f"{args.answer_timeout:g}"]
    if args.max_message_bytes is not None:
        out += ["--max-message-bytes", str(args.max_message_bytes)]
    if args.max_depth is not None:
        out += ["--max-depth", str(args.max_depth)]
    return tuple(out)


def _miss_reporter(report_path: str | None, tape: str) -> Any:
    """Each miss on stderr, and in ``--report`` when one is given."""
    from cassette.store.report import Report

    report = Report(report_path, tape)

    def on_miss(text: str) -> None:
        report.write("miss", text=text)
        err(f"miss: {text}")

    return on_miss


def run(args: argparse.Namespace) -> int:
    command = ReplayCommand.from_args(args)
    logged = log_to(args.log)
    if logged is not None:
        err(f"logging to {logged} (as well as stderr)")
    if command.mode.mode != "none":
        return _in_mode(command)
    if command.mode.source != "default" and not has_recording(command.tape):
        # a mode named on purpose: say what it means that there is nothing to replay
        raise CassetteNotFoundError(missing_cassette_message(command.tape, command.mode))
    return _serve(command)


def opened(command: ReplayCommand) -> tuple[ReplayPool | OpeningPool, Path]:
    """The replay's pool and the cassette's absolute path, the banner printed: all a
    replay does before it serves."""
    from cassette.runtime.replay_pool import replay_pool

    pool = replay_pool(command.tape, _replay_options(command))
    path = Path(command.tape).resolve()
    if not command.quiet:
        from cassette.cli.banner import print_banner

        print_banner(
            command.tape,
            path,
            pool,
            front=command.front,
            behaviour=command.behaviour,
            verbose=command.verbose,
        )
    return pool, path


def _serve(command: ReplayCommand) -> int:
    from cassette.runtime.conversation import ReplayResult
    from cassette.runtime.serve import front_of, serve

    front = front_of(command.front)  # an unknown front is refused before the banner
    pool, path = opened(command)
    listen = attrs.evolve(command.listen, on_ready=serving_on(path, quiet=command.quiet))
    # A listening front (not stdio, whose one client ends the run) is stopped by a signal,
    # which is its normal end: it exits by what it served, 0 if it served nobody.
    code: int | None = None if command.front == "stdio" else 0

    def finished(result: ReplayResult) -> None:
        nonlocal code
        if result.summary:  # it quotes the recording too: through the gate, as a miss line
            from cassette.store.gate import shown

            err(shown(result.summary))
        if code is None or result.misses:
            code = EXIT_MISSES if result.misses else 0

    async def go() -> int:
        try:
            await serve(front, pool, options=listen, policy=command.policy.finishing(finished))
        finally:  # a listening front ends by a signal: what it served is reported all the same
            _report_unplayed(command, pool)
        return code or 0

    return run_async(go, on_signal=lambda: code)


def _report_unplayed(command: ReplayCommand, responders: ResponderPool) -> None:
    """``--report``: the recorded requests no session played, as a mode's replay reports
    them (what ``cassette prune`` goes by)."""
    from cassette.core.replay.sessions import ReplayPool

    if command.report is None or not isinstance(responders, ReplayPool):
        return
    from cassette.modes.runner import unplayed_requests
    from cassette.store.report import Report

    Report(command.report, command.tape).write("unplayed", requests=unplayed_requests(responders))


def _replay_options(command: ReplayCommand) -> ReplayOptions:
    """What the library's replay is told: the command's matching options, its front and
    its delivery policy (whose ``on_warning`` tells what reading the cassette warns of).
    A long one may answer ``initialize`` from its opening while the rest loads, as the
    banner reads only that opening (``cassette.cli.banner``); not with ``-v``, whose
    details tell of the whole cassette, nor with ``--report``, which tells of every
    request the whole cassette holds."""
    from cassette.runtime.replay_pool import ReplayOptions

    return ReplayOptions(
        strategy=command.strategy,
        ignore=command.ignore,
        allow_repeats=command.repeats,
        opening=not command.verbose and command.report is None,
        transport=command.front,
        policy=command.policy,
    )


def _in_mode(command: ReplayCommand) -> int:
    """A replay that may go live: on stdio, with the server command after ``--``."""
    from cassette.modes.runner import ModeOptions
    from cassette.transport import Target

    if command.front != "stdio":
        raise UsageError(
            f"mode {command.mode.mode} serves on stdio; for HTTP use "
            f"cassette record --upstream URL --mode {command.mode.mode}"
        )
    if not command.server:
        from cassette.cli.suggest import no_command

        why = f"{command.mode.describe()} may start the server, so it needs its command"
        raise UsageError(no_command("replay", why, ("--mode", command.mode.mode)))
    # The runner writes each miss to the report itself: here it is only told.
    policy = attrs.evolve(command.policy, on_miss=lambda text: err(f"miss: {text}"))
    options = ModeOptions(
        target=Target(command=command.server),
        strategy=command.strategy,
        listen=command.listen,
        policy=policy,
        ignore=command.ignore,
        prime=command.prime,
        allow_repeats=command.repeats,
    )
    return run_in_mode(command.tape, command.mode, options, report=command.report, network=False)


# -- --require-auth: an HTTP front that asks for a bearer token -----------------------------
# So a client's handling of authorization can be tested offline
# (``cassette.transports.http._http_auth``); nothing that expands or redacts credentials is
# imported for it.


def require_auth_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--require-auth",
        action="store_true",
        help="HTTP front: answer a request without a bearer token with 401 and a "
        "WWW-Authenticate challenge naming this front's protected resource metadata (RFC "
        "9728), to test a client's handling of authorization offline. Only the token's "
        "presence is checked, never its validity; without this flag a replay needs no "
        "credentials",
    )
    parser.add_argument(
        "--auth-server",
        action="append",
        default=[],
        metavar="URL",
        help="with --require-auth: an authorization server the metadata lists "
        "(repeatable; default none)",
    )


def require_auth(args: argparse.Namespace, front: str) -> tuple[bool, tuple[str, ...]]:
    """``--require-auth`` and ``--auth-server``, checked: for the streamable HTTP front."""
    servers: tuple[str, ...] = ()
    if args.auth_server:  # a plain replay imports no URL checks
        from cassette.core.wire.urls import check_http_url

        servers = tuple(check_http_url(url, "--auth-server") for url in args.auth_server)
    if servers and not args.require_auth:
        raise UsageError("--auth-server is for --require-auth")
    if args.require_auth and front != "streamable-http":
        raise UsageError("--require-auth is for the streamable HTTP front (--front http)")
    return bool(args.require_auth), servers
