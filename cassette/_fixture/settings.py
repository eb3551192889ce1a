"""What the ``mcp_cassette`` fixture is told: the command line's options, the marker's
arguments, the project's ``[tool.cassette.pytest]`` settings, and where a test's cassette
lives.

Imported when pytest starts (the plugin registers these options), so it imports only the
standard library, pytest and ``cassette.modes.policy``; the rest on first use.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from cassette.errors import UsageError as CassetteUsageError
from cassette.modes.policy import ModeChoice, env_value, resolve_test_mode

if TYPE_CHECKING:
    from cassette.store.pytest_config import PytestSettings

__all__ = [
    "KEEP_DEST",
    "KEEP_OPTION",
    "MARKER",
    "MARKER_ARGS",
    "MODE_DEST",
    "OPTION",
    "SETTINGS",
    "STOP_TIMEOUT",
    "UNUSED_DEST",
    "UNUSED_OPTION",
    "FaultsArg",
    "default_path",
    "file_safe",
    "flag",
    "ignore_pointers",
    "keep_source",
    "marker_settings",
    "project_settings",
    "resolve",
]

MARKER: Final = "mcp_cassette"
OPTION: Final = "--mcp-cassette-mode"
UNUSED_OPTION: Final = "--mcp-cassette-fail-on-unused"
KEEP_OPTION: Final = "--mcp-cassette-record-on-failure"
MODE_DEST: Final = "cassette_mcp_mode"  # unlikely to be any other plugin's dest
UNUSED_DEST: Final = "cassette_mcp_fail_on_unused"
KEEP_DEST: Final = "cassette_mcp_record_on_failure"
MARKER_ARGS: Final = (
    "path",
    "mode",
    "strategy",
    "ignore",
    "faults",
    "fail_on_unused",
    "record_on_failure",
    "scenarios",
    "scenario",
)
CONFIG_MODE: Final = "[tool.cassette.pytest] mode"
STOP_TIMEOUT: Final = 30.0

SETTINGS: Final = pytest.StashKey["PytestSettings"]()


def project_settings(config: pytest.Config) -> PytestSettings:
    found = config.stash.get(SETTINGS, None)
    if found is None:
        from cassette.store.pytest_config import PytestSettings

        return PytestSettings()
    return found


def resolve(marker_mode: str | None, config: pytest.Config) -> ModeChoice:
    """Marker, option, environment, project config, once; none from the option or the
    environment is a ceiling (``resolve_test_mode``)."""
    return resolve_test_mode(
        (f"@pytest.mark.{MARKER}", marker_mode),
        (OPTION, config.getoption(MODE_DEST)),
        env_value(),
        (CONFIG_MODE, project_settings(config).mode),
    )


# -- where cassettes live ------------------------------------------------------------------

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._\-\[\]=,+@]+")


def file_safe(name: str) -> str:
    """A file name for a test name on every platform; distinct names stay distinct."""
    safe = _UNSAFE.sub("_", name).strip(".")
    if safe != name or len(safe) > 120:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
        safe = f"{safe[:100]}-{digest}"
    return safe


def default_path(item: pytest.Item) -> Path:
    """``cassettes/<test module>/<test name>.jsonl`` beside the test file, or under the
    project's ``cassette-dir`` (``[tool.cassette.pytest]``) when it names one."""
    test_file = Path(item.path)
    name = ".".join(item.nodeid.split("::")[1:]) or item.name
    folder = project_settings(item.config).cassette_dir or test_file.parent / "cassettes"
    return folder / test_file.stem / f"{file_safe(name)}.jsonl"


def marker_settings(item: pytest.Item) -> dict[str, Any]:
    """The marker's arguments, the closest marker winning for each (function over class
    over module); a positional argument is the path."""
    settings: dict[str, Any] = {}
    for marker in item.iter_markers(MARKER):
        unknown = sorted(set(marker.kwargs) - set(MARKER_ARGS))
        if unknown or len(marker.args) > 1:
            pytest.fail(
                f"@pytest.mark.{MARKER} takes a path and the keywords "
                f"{', '.join(MARKER_ARGS)}; got "
                f"{', '.join(unknown) or 'several positional arguments'}",
                pytrace=False,
            )
        if marker.args:
            settings.setdefault("path", marker.args[0])
        for key, value in marker.kwargs.items():
            settings.setdefault(key, value)
    return settings


FaultsArg = Any  # a plan file's path, a list of rule tables, a FaultPlan, or None


def ignore_pointers(project: Sequence[str], marker: Any) -> tuple[str, ...]:
    """The project's ignore pointers and the marker's (a string or a list), checked."""
    from cassette.core.matching import check_ignore_pointer

    given = [marker] if isinstance(marker, str) else list(marker or ())
    if not all(isinstance(p, str) for p in given):
        raise CassetteUsageError(f"@pytest.mark.{MARKER}(ignore=...) takes JSON Pointers")
    pointers = tuple(dict.fromkeys([*project, *given]))
    for pointer in pointers:
        check_ignore_pointer(pointer)
    return pointers


def flag(marker: Any, option: bool | None, project: bool) -> bool:
    """The marker's, else the option's (only ever on), else the project's."""
    if marker is not None:
        return bool(marker)
    return bool(option) or project


def keep_source(marker: Any, option: bool | None) -> str:
    """Where ``record_on_failure`` came from, for the report that says it was honoured."""
    if marker is not None:
        return f"@pytest.mark.{MARKER}(record_on_failure=True)"
    if option:
        return KEEP_OPTION
    return "record-on-failure in [tool.cassette.pytest]"
