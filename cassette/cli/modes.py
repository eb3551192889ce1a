"""The command line's record modes: ``--mode``, ``--report`` and ``--sessions``.

Kept apart from ``cli`` so that module stays a readable table of commands. What each
mode does is ``cassette.modes.policy``; how a session runs in one is ``cassette.modes.runner``;
this module only maps options onto them (docs/cli.md, "Record modes").

Which mode applies:

* ``record``: ``--mode``; else ``--overwrite`` (a plain recording that replaces); else
  ``MCP_CASSETTE_MODE``; else none at all: a plain recording, exactly as without modes.
* ``replay``: ``--mode``; else, when a server command follows ``--``,
  ``MCP_CASSETTE_MODE`` or ``once``; else mode ``none``. A replay given no command can
  never go live, so the environment does not change what it does.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cassette.errors import CassetteNotFoundError, UsageError
from cassette.modes.policy import (
    ENV_VAR,
    Action,
    ModeChoice,
    Report,
    missing_cassette_message,
    resolve_mode,
)

__all__ = [
    "add_mode_options",
    "apply_sessions",
    "check_replay_exists",
    "record_choice",
    "replay_choice",
    "run_http_mode",
    "run_stdio_mode",
    "split_replay_command",
]


def add_mode_options(parser: argparse.ArgumentParser) -> None:
    replay = parser.prog.endswith("replay")
    default = (
        "none; once when a server command follows --"
        if replay
        else f"${ENV_VAR} when set, else a plain recording"
    )
    parser.add_argument(
        "--mode",
        metavar="MODE",
        help="record mode: once (replay TAPE if it exists, else record it), none (replay "
        "only), all or rewrite (record again), new_episodes (replay; what TAPE lacks goes "
        f"to the server and is appended). Default: {default}; see docs/cli.md",
    )
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="append one JSON line per fact of the session (misses, appended episodes, "
        "errors) to FILE, for a supervising process",
    )
    parser.add_argument(
        "--sessions",
        metavar="DIR",
        help="number the sessions started with this DIR: the first uses TAPE, the n-th "
        "TAPE with .n before its suffix (t.jsonl, t.2.jsonl, ...)",
    )
    if replay and parser.epilog is None:
        parser.epilog = (
            "A mode that may go live needs the server's command: "
            "cassette replay TAPE --mode MODE -- COMMAND [ARG...]"
        )


def split_replay_command(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    """``replay TAPE [options] -- COMMAND...``: argparse cannot take a command after an
    optional positional, so the part after the first ``--`` is cut off first."""
    args = list(argv)
    first = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
    if first is None or args[first] != "replay" or "--" not in args[first:]:
        return args, None
    cut = args.index("--", first)
    return args[:cut], args[cut + 1 :]


def apply_sessions(args: argparse.Namespace, attribute: str) -> None:
    """``--sessions DIR``: this session's cassette is the next numbered one."""
    if getattr(args, "sessions", None) is None:
        return
    from cassette.modes.runner import next_session_path

    setattr(args, attribute, str(next_session_path(getattr(args, attribute), args.sessions)))


def _environment() -> tuple[str, str | None]:
    return (ENV_VAR, os.environ.get(ENV_VAR))


def record_choice(args: argparse.Namespace) -> ModeChoice | None:
    """The mode ``record`` runs in; ``None`` for a plain recording."""
    if args.mode is not None:
        choice = resolve_mode(("--mode", args.mode))
        if args.overwrite and choice.mode != "all":
            raise UsageError(
                f"--overwrite records again (mode all); it contradicts --mode {args.mode}"
            )
        return choice
    if args.overwrite:
        return None
    source, value = _environment()
    if value is None or not value.strip():
        return None
    return resolve_mode((source, value))


def replay_choice(args: argparse.Namespace) -> ModeChoice:
    """The mode ``replay`` runs in (see the module docstring)."""
    if args.server:
        return resolve_mode(("--mode", args.mode), _environment())
    choice = resolve_mode(("--mode", args.mode), default="none")
    if choice.mode != "none":
        raise UsageError(
            f"mode {choice.mode} may start the server, so it needs the server's command: "
            f"cassette replay TAPE --mode {choice.mode} -- COMMAND [ARG...]"
        )
    return choice


def check_replay_exists(args: argparse.Namespace, choice: ModeChoice) -> None:
    """A replay of a missing cassette names the path and the mode."""
    if not Path(args.tape).exists():
        raise CassetteNotFoundError(missing_cassette_message(args.tape, choice))


def record_in_mode(args: argparse.Namespace, command: Sequence[str]) -> int | None:
    """Run ``record`` in its mode; ``None`` when it has none (a plain recording)."""
    choice = record_choice(args)
    if choice is None:
        if args.report is not None:
            raise UsageError(
                "--report needs a mode (--mode, or MCP_CASSETTE_MODE): a plain recording "
                "has nothing to report"
            )
        return None
    if args.upstream is not None:
        if command:
            raise UsageError("give either --upstream URL or a server command, not both")
        if args.transport not in (None, "http", "streamable-http"):
            raise UsageError(
                f"record modes reach --upstream over streamable HTTP only, not {args.transport}"
            )
        return run_http_mode(args, choice, args.output, args.upstream)
    if not command:
        raise UsageError("record needs the server command after --, e.g. -- node server.js")
    return run_stdio_mode(args, choice, args.output, command, transport=args.transport or "stdio")


def replay_in_mode(args: argparse.Namespace) -> int | None:
    """Run ``replay`` in its mode; ``None`` when the plain replay serves it (mode none)."""
    choice = replay_choice(args)
    if choice.mode == "none":
        check_replay_exists(args, choice)
        return None
    if args.transport != "stdio":
        raise UsageError(
            f"mode {choice.mode} serves on stdio; for HTTP use "
            f"cassette record --upstream URL --mode {choice.mode}"
        )
    return run_stdio_mode(args, choice, args.tape, args.server)


def miss_reporter(args: argparse.Namespace, tape: str) -> Callable[[str], None]:
    """Each miss on stderr, and in ``--report`` when one is given."""
    from cassette.cli import _err

    report = Report(getattr(args, "report", None), tape)

    def on_miss(text: str) -> None:
        report.write("miss", text=text)
        _err(f"miss: {text}")

    return on_miss


def _redactor(args: argparse.Namespace) -> Any:
    """The recording's redactor, from ``record``'s options (``replay`` has none)."""
    if not hasattr(args, "no_redact"):
        return "default"
    from cassette.cli import _recording_redactor

    return _recording_redactor(args)


def _exit_code(action: Action, misses: int, server_code: int | None) -> int:
    if action is Action.RECORD:
        return server_code if isinstance(server_code, int) and 0 < server_code < 128 else 0
    return 1 if misses else 0


def run_stdio_mode(
    args: argparse.Namespace,
    choice: ModeChoice,
    tape: str,
    command: Sequence[str],
    transport: str = "stdio",
) -> int:
    """Serve this process's stdin/stdout in ``choice``'s mode; returns the exit code."""
    from cassette.cli import _err, _run_async
    from cassette.modes.runner import Report, run_stdio

    if args.strategy is not None:
        from cassette.core.matching import get_strategy

        get_strategy(args.strategy)
    if not command:
        raise UsageError("this mode needs the server command after --, e.g. -- node server.js")

    async def go() -> int:
        result = await run_stdio(
            tape,
            command,
            choice=choice,
            strategy=args.strategy,
            transport=transport,
            fsync=getattr(args, "fsync", False),
            report=Report(args.report, tape),
            on_miss=lambda text: _err(f"miss: {text}"),  # run_* writes the report
            on_info=_err,
            redactor=_redactor(args),
            max_message_bytes=getattr(args, "max_message_bytes", None),
        )
        if result.summary:
            _err(result.summary)
        return _exit_code(result.action, len(result.misses), result.exit_code)

    return _run_async(go)


def run_http_mode(args: argparse.Namespace, choice: ModeChoice, tape: str, upstream: str) -> int:
    """``record --upstream URL`` in a mode: a recording proxy or a replay front."""
    from cassette.cli import _err, _run_async
    from cassette.modes.runner import Report, run_http
    from cassette.runtime.session import ReplayResult

    outcome: list[int] = []

    def ready(url: str) -> None:
        _err(f"serving {tape} for {upstream}; point your client at {url}")

    def finished(result: ReplayResult) -> None:
        if result.summary:
            _err(result.summary)
        outcome[:] = [1 if result.misses else 0]

    async def go() -> int:
        outcome.append(0)  # stopping is how a proxy or a front ends
        await run_http(
            tape,
            upstream,
            choice=choice,
            strategy=args.strategy,
            host=args.host,
            port=args.port,
            fsync=args.fsync,
            report=Report(args.report, tape),
            on_ready=ready,
            on_miss=lambda text: _err(f"miss: {text}"),  # run_* writes the report
            on_info=_err,
            on_finish=finished,
            redactor=_redactor(args),
            max_message_bytes=getattr(args, "max_message_bytes", None),
        )
        return outcome[0]

    return _run_async(go, outcome)
