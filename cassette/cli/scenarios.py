"""``cassette record --scenarios FILE [--scenario NAME]... [-o DIR]``: a cassette per
scenario, recorded with cassette as the client (``cassette.client.record``).

Which mode each scenario runs in follows ``record``: ``--mode``; else ``--overwrite``
(mode ``all``: record again); else ``MCP_CASSETTE_MODE``; else a plain recording, which
refuses, before anything starts, when a cassette it would write already holds one (exit
3, naming each), exactly as ``record -o TAPE`` does.

What a person reads goes to stderr, a line per failed step and one per scenario; exit 0
when every step got what it expected, 1 when one did not (its cassette is still written),
2 usage, 3 a scenarios file that cannot be read (``file:line``) or a cassette in the way,
4 a server that cannot be started or reached.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cassette.cli.modes import record_choice
from cassette.cli.options import apply_limits, keep_volatile
from cassette.cli.output import err
from cassette.cli.running import run_async
from cassette.errors import CassetteExistsError, UsageError
from cassette.modes.policy import ModeChoice

__all__ = ["run_scenarios"]

_PLAIN = "record --scenarios"  # no mode asked for: a plain recording, which says nothing more

#: ``record`` options that name a server or a single cassette: the file does that here.
_NOT_WITH_SCENARIOS = (
    ("upstream", "--upstream (the file's [target] names the server)"),
    ("transport", "--transport (the file's [target] names it)"),
    ("report", "--report"),
    ("sessions", "--sessions"),
)


def _check(args: argparse.Namespace) -> None:
    if args.server and args.server != ["--"]:
        raise UsageError("--scenarios takes the server from the file's [target], not after --")
    for attr, option in _NOT_WITH_SCENARIOS:
        if getattr(args, attr, None):
            raise UsageError(f"--scenarios cannot be combined with {option}")
    if getattr(args, "era", "auto") != "auto":
        raise UsageError("--scenarios takes the era from the file's [target] era, not --era")
    if args.scenario and not args.scenarios:
        raise UsageError("--scenario NAME picks from a scenarios file: give --scenarios FILE")


def _choice(args: argparse.Namespace, paths: list[Path]) -> ModeChoice:
    choice = record_choice(args.mode, overwrite=args.overwrite)
    if choice is not None:
        return choice
    if args.overwrite:
        return ModeChoice("all", "--overwrite")
    from cassette.store.storage import has_recording

    taken = [str(p) for p in paths if has_recording(p)]
    if taken:
        raise CassetteExistsError(
            f"{', '.join(taken)}: already recorded; refusing to overwrite (pass --overwrite "
            "to record again, or --mode once to record only what is missing)"
        )
    return ModeChoice("once", _PLAIN)


def run_scenarios(args: argparse.Namespace) -> int:
    """The ``record --scenarios`` command."""
    from cassette.client.record import (
        RecordTuning,
        ScenarioOptions,
        ScenarioResult,
        project_redactor,
        record_scenarios,
    )
    from cassette.client.scenarios import load_scenarios

    _check(args)
    limit = apply_limits(args)  # --max-depth (and the project's) for every message read
    file = load_scenarios(args.scenarios)
    chosen = [file.scenario(n) for n in args.scenario] or list(file.scenarios)
    output = Path(args.output) if args.output else None
    choice = _choice(args, [file.cassette_path(s.name, output) for s in chosen])
    redactor = project_redactor(
        file,
        enabled=not args.no_redact,
        patterns=args.redact_pattern,
        paths=args.redact_path,
        env=args.redact_env,
        pii=True if args.redact_pii else None,
    )
    if redactor is None:
        err("warning: redaction is off: secrets in these sessions will be written as they are")
    tuning = RecordTuning(
        redactor=redactor,
        strategy=args.strategy,
        fsync=args.fsync,
        upstream_timeout=args.upstream_timeout,
        max_message_bytes=limit,
        volatile=keep_volatile(args),
    )
    failed: list[bool] = []

    def told(result: ScenarioResult) -> None:
        for line in result.lines():
            err(line)
        failed.append(not result.ok)

    async def go() -> int:
        options = ScenarioOptions(
            choice=choice,
            output=output,
            tuning=tuning,
            on_info=None if choice.source == _PLAIN else err,
            on_warning=lambda text: err(f"warning: {text}"),
            on_result=told,
        )
        await record_scenarios(file, [s.name for s in chosen], options)
        return 1 if any(failed) else 0

    return run_async(go)
