"""Record modes: whether a session is recorded, replayed, or replayed and extended.

Pure decisions, no I/O: the runner, the pytest plugin and the SDK adapter ask the same
questions here and act on the answers themselves.

    mode          the cassette exists                    the cassette is missing
    once          replay it                              record it
    none          replay it                              error: nothing goes live
    all           record again, replacing it             record it
    new_episodes  replay it; what it lacks goes to the   record it
                  server and is appended

``rewrite`` is accepted as a synonym of ``all``. A mode comes from the first place that
names one, in an order the caller gives (the pytest plugin: marker, then the
``--mcp-cassette-mode`` option, then the ``MCP_CASSETTE_MODE`` environment variable, then
the project's config; ``none`` from the option or the environment is a ceiling no marker
lifts: ``resolve_test_mode``), and is ``once`` when nothing does. An unknown name is a
``UsageError`` that lists the valid ones, wherever it came from: a typo in CI must never
quietly go live.

A cassette "exists" when its file has bytes in it. An empty file is what a recording
killed before its first successful exchange leaves behind, and counts as missing.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from typing import Final, Literal

import attrs

from cassette.errors import UsageError

__all__ = [
    "DEFAULT_MODE",
    "ENV_VAR",
    "MODES",
    "Action",
    "Mode",
    "ModeChoice",
    "env_value",
    "get_mode",
    "missing_cassette_message",
    "plan",
    "resolve_mode",
    "resolve_test_mode",
]

Mode = Literal["once", "none", "all", "new_episodes"]
MODES: Final[tuple[Mode, ...]] = ("once", "none", "all", "new_episodes")
SYNONYMS: Final[Mapping[str, Mode]] = {"rewrite": "all"}
DEFAULT_MODE: Final[Mode] = "once"
ENV_VAR: Final = "MCP_CASSETTE_MODE"


class Action(enum.Enum):
    """What a session does, given its mode and whether its cassette exists."""

    REPLAY = "replay"  # answer from the cassette; a request it lacks is a miss
    RECORD = "record"  # proxy to the live server, writing the cassette afresh
    EXTEND = "extend"  # replay; a request the cassette lacks goes live and is appended
    MISSING = "missing"  # mode none and no cassette: fail, start nothing


@attrs.frozen
class ModeChoice:
    """A resolved mode and where it came from (named in messages, so a person can find it)."""

    mode: Mode
    source: str = "default"

    def describe(self) -> str:
        return (
            f"mode {self.mode}"
            if self.source == "default"
            else (f"mode {self.mode} (from {self.source})")
        )


def _valid() -> str:
    return "once, none, all (or its synonym rewrite), new_episodes"


def get_mode(name: str, source: str | None = None) -> Mode:
    """The mode ``name`` means (case and ``-``/``_`` do not matter); else a ``UsageError``."""
    key = name.strip().lower().replace("-", "_")
    if key in MODES:
        return key
    if key in SYNONYMS:
        return SYNONYMS[key]
    from cassette.core.words.suggest import unknown_choice

    choices = (*MODES, *SYNONYMS)
    raise UsageError(unknown_choice("record mode", name, choices, source=source, listed=_valid()))


def resolve_mode(*candidates: tuple[str, str | None], default: Mode = DEFAULT_MODE) -> ModeChoice:
    """The first ``(source, value)`` with a value wins; each value is checked as it is met.

    Values after the winner are checked too, so a bad ``MCP_CASSETTE_MODE`` is reported
    even in a run where an option happens to override it.
    """
    chosen: ModeChoice | None = None
    for source, value in candidates:
        if source == ENV_VAR and value is not None and not value.strip():
            # Set but empty (``MCP_CASSETTE_MODE=`` in a CI file): taking it as unset
            # would fall back to ``once`` and call the live server, in CI too.
            raise UsageError(f"{ENV_VAR} is set but empty; set it to one of: {_valid()}")
        if value is None or not value.strip():
            continue
        mode = get_mode(value, source)
        if chosen is None:
            chosen = ModeChoice(mode, source)
    return chosen or ModeChoice(default)


def resolve_test_mode(
    marker: tuple[str, str | None],
    option: tuple[str, str | None],
    env: tuple[str, str | None],
    config: tuple[str, str | None] = ("[tool.cassette.pytest] mode", None),
) -> ModeChoice:
    """A test's mode: the marker, else the option, else the environment, else the project's
    config, else ``once``; but ``none`` from the option or the environment is a ceiling
    that no marker lifts. That is what CI relies on: ``MCP_CASSETTE_MODE=none`` must turn
    a missing cassette into a red build, never into a live call, whatever a test says.
    The choice names the one source whose value is in force."""
    chosen = resolve_mode(marker, option, env, config)  # checks every value given
    for source, value in (option, env):
        if value is not None and value.strip() and get_mode(value, source) == "none":
            return ModeChoice("none", source)
    return chosen


def env_value(environ: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """The ``MCP_CASSETTE_MODE`` candidate for ``resolve_mode`` (default: ``os.environ``)."""
    env = os.environ if environ is None else environ
    return (ENV_VAR, env.get(ENV_VAR))


def plan(mode: Mode, exists: bool) -> Action:
    """The table in the module docstring."""
    if mode == "all":
        return Action.RECORD
    if not exists:
        return Action.MISSING if mode == "none" else Action.RECORD
    return Action.EXTEND if mode == "new_episodes" else Action.REPLAY


def missing_cassette_message(path: str | os.PathLike[str], choice: ModeChoice) -> str:
    """What to say when mode ``none`` meets a missing cassette."""
    return (
        f"{os.fspath(path)}: no such cassette, and {choice.describe()} only replays, so "
        "nothing was started. Record it once with the server available (mode once) and "
        "commit it."
    )
