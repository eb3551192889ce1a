"""``cassette replay``'s banner: one plain line on what is served and whether anything is
wrong, the details under ``-v``, and the client configuration to paste.

The default line is judged from what the replay has read anyway before its first answer.
A long cassette answers ``initialize`` from its opening while the rest loads
(``cassette.runtime.replay_pool``, ``cassette.store.opening``), and the checks that prove
the opening answers as the whole does also prove what the banner needs of the rest: one
session, no variant, no later server start, a server that asked its client for nothing.
So the banner judges the known clients (``cassette.core.eras.fits``) from the opening and the
recorder's probes, which end the file and are read from its end (``read_probes``);
nothing else of the cassette is read for it. Any other cassette is loaded whole before
its first answer, and the banner judges from that.

``-v`` tells of the whole cassette (its requests counted, a line per session): the
replay then loads it whole first, as it did before the first line existed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cassette.cli.output import err

if TYPE_CHECKING:
    from cassette.core.eras.fits import Survey
    from cassette.core.replay.opening import OpeningPool
    from cassette.core.replay.sessions import ReplayPool

    Pool = ReplayPool | OpeningPool

__all__ = ["print_banner"]


def print_banner(
    shown: str,
    path: Path,
    pool: Pool,
    *,
    front: str,
    behaviour: tuple[str, ...],
    verbose: bool,
) -> None:
    """The banner of a replay of the cassette at ``path`` (``shown``: as the person named
    it) served from ``pool`` on ``front``; ``behaviour``: the options its client
    configuration repeats; ``verbose``: the details too (``pool`` holds the whole)."""
    from cassette.core.eras.first_screen import first_line
    from cassette.core.eras.fits import survey
    from cassette.core.wire.model import era_of

    found = survey(era_of(pool.recording.header), banner_events(pool, path))
    more = "" if verbose else "; run with -v for details"
    err(f"replaying {shown}: {first_line(found.verdicts)}{more}")
    if verbose:
        _details(path, pool, found, front)
    if front == "stdio":
        from cassette.cli.configs import client_config, print_config

        print_config(client_config(path, extra=behaviour))


def banner_events(pool: Pool, path: Path) -> Sequence[Any]:
    """What the banner judges from: the opening and the probes of a cassette served from
    its opening (its whole not loaded), else the whole cassette the pool holds."""
    from cassette.core.replay.opening import OpeningPool

    if isinstance(pool, OpeningPool) and not pool.loaded:
        from cassette.store.opening import read_probes

        return [*pool.recording.events, *read_probes(path)]
    return pool.recording.events


def _details(path: Path, pool: Pool, found: Survey, front: str) -> None:
    """``-v``: what the cassette recorded, its requests, its strategy, and a line per
    session (``cassette show``'s)."""
    from cassette.core.eras.variants import split_all
    from cassette.core.replay.starts import count_starts

    tape = pool.recording
    header = tape.header
    main, variants, _ = split_all(tape.events)  # the recorder's probes are no session's
    sessions = [main, *variants.values()]
    exchanges = sum(1 for events in sessions for e in events if _request(e))
    version = header.protocol_version or "unknown protocol"
    starts = count_starts(tape.events)
    held = f"; {starts} server starts, served in order" if starts > 1 else ""
    err(
        f"  {path}: {header.transport} recording, {found.era} era, {version}; "
        f"{exchanges} requests{held}; strategy {pool.strategy.name}; serving on {front}; "
        f"{found.served}"
    )
    for line in found.lines:  # which clients each session serves (cassette.core.eras.fits)
        err(f"  {line}")
    if pool.first_start > 1:
        err(f"  a later start of the client's run: serving the cassette's start {pool.first_start}")


def _request(event: Any) -> bool:
    """Whether ``event`` is a client's request (what the count of requests counts)."""
    message = getattr(event, "message", None)
    return getattr(event, "dir", None) == "c2s" and isinstance(message, dict) and "id" in message
