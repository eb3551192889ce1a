"""Where a replay is built: a cassette and its ``ReplayOptions`` become the pool of replay
sessions a front serves, every choice made here and nowhere else.

Every way into a replay calls ``replay_pool``: ``cassette replay``, a record mode's replay
or extension, ``serve_replay``, ``replay_sessions``, ``open_replay``, the SDK adapter and
the plugin check-suite. So a cassette replays the same whichever door it came through.
What is decided, in this order:

* **the strategy**: the one given, else the one the cassette was recorded with (its
  header's ``target.strategy``, written by ``cassette record --strategy``), else
  ``default``; then the params ``ignore`` leaves out of matching, and whether a used-up
  request is answered again (``allow_repeats``);
* **the first server start**: on the stdio front, a cassette of several starts serves
  this process the next start of its client's run (``cassette.store.starts``: a client
  that starts the server once per call); on any other front, and in process, each client
  session is a start of its own, from the first;
* **what is shown**: a miss or a warning is told through ``redactor`` when one is given,
  else through the project's display policy (``shown_policy``: the one redaction gate,
  imported only when something is first told);
* **the opening**: a cassette given as a path and served on stdio answers its first
  ``initialize`` from its opening before the rest is loaded, when the opening is proved
  to answer as the whole does (``cassette.store.opening``, ``cassette.core.replay.opening``);
  any other cassette is loaded whole first.

A cassette given as a path is loaded here; what its reading warns of goes to the
policy's ``on_warning``. Each pool is the core's ``ReplayPool`` (or, from an
opening, an ``OpeningPool`` around two of them): ``core/replay/sessions.py`` and this module
are the only places one is made.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, overload

import attrs

from cassette.core.replay.sessions import ReplayPool
from cassette.core.replay.starts import count_starts
from cassette.core.replay.strategies import Strategy, get_strategy, repeating
from cassette.core.wire.model import Recording
from cassette.runtime.conversation import DeliveryPolicy, ReplayResult, shown_policy
from cassette.store.storage import Cassette
from cassette.transport import ServeOptions, Transport

if TYPE_CHECKING:
    from cassette.core.redaction.redactor import Redactor
    from cassette.core.replay.opening import OpeningPool
    from cassette.core.replay.replayer import ShownPolicy

__all__ = ["ReplayOptions", "replay_pool"]

Finish = Callable[[ReplayResult], None]


@attrs.frozen(kw_only=True, eq=False)  # compared by identity: no __eq__ to build at import
class ReplayOptions:
    """How a cassette is replayed (``replay_pool``) and served (``serve_replay``).

    Matching: ``strategy`` (``None``: the cassette's recorded one, else ``default``),
    ``ignore`` (JSON Pointers into a request's params that never take part) and
    ``allow_repeats`` (a used-up request gets its last answer again). ``redactor``: what a
    miss or a warning is shown through (``None``: the project's display policy).
    ``opening``: on stdio, a cassette given as a path may answer ``initialize`` from its
    opening before the rest loads (``False``: load it whole first). Serving: on the front
    ``transport`` listening as ``listen`` says, delivering as ``policy`` says (a fault plan
    is its ``faults``); ``on_finish`` hears each result as it is known."""

    strategy: str | Strategy | None = None
    ignore: tuple[str, ...] = ()
    allow_repeats: bool = False
    redactor: Redactor | None = None
    opening: bool = True
    transport: str | Transport = "stdio"
    listen: ServeOptions = ServeOptions()
    policy: DeliveryPolicy = DeliveryPolicy()
    on_finish: Finish | None = None


@overload
def replay_pool(tape: Recording, options: ReplayOptions = ...) -> ReplayPool: ...


@overload
def replay_pool(
    tape: str | os.PathLike[str], options: ReplayOptions = ...
) -> ReplayPool | OpeningPool: ...


def replay_pool(
    tape: Recording | str | os.PathLike[str], options: ReplayOptions = ReplayOptions()
) -> ReplayPool | OpeningPool:
    """The replay sessions of ``tape`` (a loaded cassette, or a cassette file's path) as
    ``options`` say: what every front serves a replay from (the module docstring says
    what is decided, and how)."""
    stdio = _front_name(options.transport) == "stdio"
    if not isinstance(tape, str | os.PathLike):
        return _sessions(tape, options, _first_start(tape, stdio))
    path = os.fspath(tape)
    if stdio and options.opening:
        from cassette.store.opening import read_opening

        opening = read_opening(path)
        if opening is not None:  # proved to hold no other server start: the first it is
            from cassette.core.replay.opening import OpeningPool

            def whole() -> ReplayPool:
                return _sessions(_load(path, options), options, 1)

            return OpeningPool(_sessions(opening, options, 1), whole)
    loaded = _load(path, options)
    return _sessions(loaded, options, _first_start(loaded, stdio))


def _sessions(recording: Recording, options: ReplayOptions, first: int) -> ReplayPool:
    return ReplayPool(
        recording,
        _strategy(recording, options),
        environ=os.environ,
        shown=_shown(options.redactor),
        first_start=first,
    )


def _strategy(recording: Recording, options: ReplayOptions) -> Strategy:
    """The strategy given, else the recorded one, else ``default``; with the ignored
    params and repeats laid on."""
    chosen = options.strategy
    if chosen is None:
        recorded = recording.header.target.get("strategy")
        chosen = recorded if isinstance(recorded, str) else "default"
    strategy = get_strategy(chosen).ignoring(options.ignore)
    return repeating(strategy, options.allow_repeats)


def _shown(redactor: Redactor | None) -> ShownPolicy:
    """What a miss or a warning is shown through: ``redactor``, else the display policy."""
    if redactor is None:
        return shown_policy
    return lambda: redactor


def _first_start(recording: Recording, stdio: bool) -> int:
    """The server start the first session takes (see the module docstring); the run's
    count of starts served is looked up only for a cassette of several."""
    source = getattr(recording, "source", None)
    if not stdio or source is None or count_starts(recording.events) == 1:
        return 1
    from cassette.store.starts import first_start

    return first_start(source, recording.events, "stdio")


def _load(path: str, options: ReplayOptions) -> Cassette:
    """The whole cassette at ``path``, what its reading warns of told."""
    loaded = Cassette.load(path)
    warn = options.policy.on_warning
    if warn is not None:
        for warning in loaded.warnings:
            warn(warning)
    return loaded


def _front_name(front: str | Transport) -> str:
    return front if isinstance(front, str) else front.name
