"""Record modes: whether a session is recorded, replayed, or replayed and extended.

``cassette.modes.policy`` decides (pure values), ``cassette.modes.runner`` acts (under the
cassette's lock, through the runtime's one serve path), and ``cassette.modes.extend`` is
``new_episodes``: what a cassette lacks, answered live and appended, on any front. The
decision table and its names are re-exported here.
"""

from __future__ import annotations

from cassette.modes.policy import (
    DEFAULT_MODE,
    ENV_VAR,
    MODES,
    Action,
    Mode,
    ModeChoice,
    env_value,
    get_mode,
    missing_cassette_message,
    plan,
    resolve_mode,
)
from cassette.store.report import Report

__all__ = [
    "DEFAULT_MODE",
    "ENV_VAR",
    "MODES",
    "Action",
    "Mode",
    "ModeChoice",
    "Report",
    "env_value",
    "get_mode",
    "missing_cassette_message",
    "plan",
    "resolve_mode",
]
