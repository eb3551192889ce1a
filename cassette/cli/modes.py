"""The command line's record modes: ``--mode``, ``--report`` and ``--sessions``.

What each mode does is ``cassette.modes.policy``; how a session runs in one is
``cassette.modes.runner``; this module only decides which mode applies and hands the
runner the ``ModeOptions`` value the command built (docs/cli.md, "Record modes").

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
from collections.abc import Sequence
from typing import TYPE_CHECKING

from cassette.cli.exits import recording_exit
from cassette.cli.output import err
from cassette.cli.running import run_async
from cassette.cli.values import folder
from cassette.errors import UsageError
from cassette.modes.policy import ENV_VAR, Action, ModeChoice, resolve_mode

if TYPE_CHECKING:
    from cassette.modes.runner import ModeOptions, ModeResult

__all__ = [
    "add_mode_options",
    "apply_sessions",
    "exit_for",
    "record_choice",
    "replay_choice",
    "run_in_mode",
    "split_replay_command",
]


def add_mode_options(parser: argparse.ArgumentParser) -> None:
    """``--mode``, ``--report`` and ``--sessions`` on ``record`` or ``replay``."""
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
        "--prime",
        action="store_true",
        help="new_episodes: before the first request the cassette lacks, send the fresh "
        "server the session's earlier requests (answers dropped), so a stateful server "
        "answers from the state the recording had",
    )
    # Who chose --mode, when a supervisor passes it on (the pytest plugin): messages then
    # name the one source a person set, not this command line they never wrote.
    parser.add_argument("--mode-source", help=argparse.SUPPRESS)
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="append one JSON line per fact of the session (misses, appended episodes, "
        "errors, the recorded requests it never played) to FILE, for a supervising process "
        "and for cassette prune",
    )
    parser.add_argument(
        "--sessions",
        type=folder,
        metavar="DIR",
        help="number the sessions started with this DIR: the first uses TAPE, the n-th "
        "TAPE with .n before its suffix (t.jsonl, t.2.jsonl, ...)",
    )
    if replay and parser.epilog is None:
        parser.epilog = (
            "A mode that may go live needs the server's command: "
            "cassette replay TAPE --mode MODE -- COMMAND [ARG...]"
        )


#: the commands that take a TAPE and options before ``-- COMMAND``
_CUT = ("replay", "check", "variant", "verify")


def split_replay_command(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    """``replay TAPE [options] -- COMMAND...`` (and ``check``, ``variant``, ``verify``):
    argparse cannot take a command after an optional positional, so the part after the
    first ``--`` is cut off first."""
    args = list(argv)
    first = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
    if first is None or args[first] not in _CUT or "--" not in args[first:]:
        return args, None
    cut = args.index("--", first)
    return args[:cut], args[cut + 1 :]


def apply_sessions(path: str, sessions: str | None) -> str:
    """``--sessions DIR``: this session's cassette is the next numbered one."""
    if sessions is None:
        return path
    from cassette.modes.runner import next_session_path

    return str(next_session_path(path, sessions))


def _environment() -> tuple[str, str | None]:
    return (ENV_VAR, os.environ.get(ENV_VAR))


def record_choice(
    mode: str | None, *, overwrite: bool, source: str | None = None
) -> ModeChoice | None:
    """The mode ``record`` runs in; ``None`` for a plain recording. ``source`` names who
    chose ``mode`` (``--mode-source``; default ``--mode``)."""
    if mode is not None:
        choice = resolve_mode((source or "--mode", mode))
        if overwrite and choice.mode != "all":
            raise UsageError(f"--overwrite records again (mode all); it contradicts --mode {mode}")
        return choice
    if overwrite:
        return None
    source, value = _environment()
    if value is None:
        return None
    return resolve_mode((source, value))  # set but empty: an error, never a plain recording


def replay_choice(mode: str | None, *, has_command: bool) -> ModeChoice:
    """The mode ``replay`` runs in (see the module docstring)."""
    if has_command:
        return resolve_mode(("--mode", mode), _environment())
    choice = resolve_mode(("--mode", mode), default="none")
    if choice.mode != "none":
        from cassette.cli.suggest import no_command

        why = f"{choice.describe()} may start the server, so it needs its command"
        raise UsageError(no_command("replay", why, ("--mode", choice.mode)))
    return choice


def exit_for(result: ModeResult) -> int:
    """A recording exits as a plain one does (``recording_exit``); a replay or an
    extension with 1 when something had no answer."""
    if result.action is Action.RECORD:
        return recording_exit(result.recording, told=True)
    return 1 if result.misses else 0


def run_in_mode(
    tape: str,
    choice: ModeChoice,
    options: ModeOptions,
    *,
    report: str | None,
    network: bool,
) -> int:
    """Run a command in ``choice``'s mode with the options it built; the exit code.

    On stdio the session ends when the client leaves. A ``network`` front (a recording
    proxy or a replay front for an upstream URL) runs until stopped, which is its
    normal end: its exit code is then decided by what it served."""
    import attrs

    from cassette.modes.runner import run_mode
    from cassette.runtime.conversation import ReplayResult
    from cassette.store.report import Report

    code: int | None = None

    def finished(result: ReplayResult) -> None:
        nonlocal code
        if result.summary:
            err(result.summary)
        code = 1 if result.misses else 0

    async def go() -> int:
        nonlocal code
        if network:
            code = 0  # stopping is how a proxy or a front ends
        channels = attrs.evolve(
            options,
            report=Report(report, tape),
            on_info=err,
            on_finish=finished if network else None,
        )
        result = await run_mode(tape, choice, channels)
        if not network and result.summary:
            err(result.summary)
        return (code or 0) if network else exit_for(result)

    return run_async(go, on_signal=(lambda: code) if network else None)
