"""What the ``mcp_cassette`` fixture is told: the command line's options, the marker's
arguments, the ``mcp_cassette_config`` fixture's settings, the project's
``[tool.cassette.pytest]`` settings, and where a test's cassette lives.

A setting comes from the first of these that gives it: the marker (function over class
over module), then ``mcp_cassette_config`` (the fixture a module, a class or a conftest
overrides, as pytest-recording's ``vcr_config``), then the project, then the default. The
record mode has the command line and the environment between the fixture and the
project, and ``none`` from either is a ceiling (``resolve``).

Imported when pytest starts (the plugin registers these options), so it imports only the
standard library, pytest and ``cassette.modes.policy``; the rest on first use.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from cassette.errors import UsageError as CassetteUsageError
from cassette.modes.policy import ModeChoice, env_value, resolve_test_mode

if TYPE_CHECKING:
    from cassette.store.pytest_config import PytestSettings

__all__ = [
    "CONFIG_FIXTURE",
    "KEEP_DEST",
    "KEEP_OPTION",
    "MARKER",
    "MARKER_ARGS",
    "MARKER_SOURCE",
    "MODE_DEST",
    "OPTION",
    "PEER_ARGS",
    "PEER_DEST",
    "PEER_OPTION",
    "REPORT_DEST",
    "REPORT_OPTION",
    "SETTINGS",
    "STOP_TIMEOUT",
    "UNUSED_DEST",
    "UNUSED_OPTION",
    "FaultsArg",
    "ci_value",
    "default_path",
    "file_safe",
    "flag",
    "given_settings",
    "ignore_pointers",
    "keep_source",
    "marker_settings",
    "project_settings",
    "resolve",
    "run_report",
]

MARKER: Final = "mcp_cassette"
#: the fixture whose dict gives a module's or a class's settings (``vcr_config``'s role)
CONFIG_FIXTURE: Final = "mcp_cassette_config"
MARKER_SOURCE: Final = f"@pytest.mark.{MARKER}"
OPTION: Final = "--mcp-cassette-mode"
UNUSED_OPTION: Final = "--mcp-cassette-fail-on-unused"
KEEP_OPTION: Final = "--mcp-cassette-record-on-failure"
#: the run's report: every test's facts, for ``cassette prune``
REPORT_OPTION: Final = "--mcp-cassette-report"
REPORT_DEST: Final = "cassette_mcp_report"
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
    "allow_repeats",
    "keep_volatile",
    "probe",
)
#: What vcrpy and pytest-recording users write, and the marker argument that means it:
#: accepted, with a warning naming ours.
PEER_ARGS: Final = {
    "record_mode": "mode",
    "ignore_params": "ignore",
    "ignore_param": "ignore",
    "allow_playback_repeats": "allow_repeats",
    "record_on_exception": "record_on_failure",
    "cassette": "path",
}
#: pytest-recording's option, honoured for MCP cassettes when it is given
PEER_OPTION: Final = "--record-mode"
PEER_DEST: Final = "record_mode"
CONFIG_MODE: Final = "[tool.cassette.pytest] mode"
STOP_TIMEOUT: Final = 30.0

SETTINGS: Final = pytest.StashKey["PytestSettings"]()


def project_settings(config: pytest.Config) -> PytestSettings:
    found = config.stash.get(SETTINGS, None)
    if found is None:
        from cassette.store.pytest_config import PytestSettings

        return PytestSettings()
    return found


def resolve(
    marker_mode: str | None, config: pytest.Config, source: str = MARKER_SOURCE
) -> ModeChoice:
    """Marker (or the config fixture, ``source`` naming which), option, environment,
    project config, once; none from the option or the environment is a ceiling
    (``resolve_test_mode``).

    The option is ours, else pytest-recording's ``--record-mode`` when it was given (its
    ``rewrite`` is our ``all``), so ``pytest --record-mode=none`` starts no live server for
    an MCP cassette either. With no mode given anywhere, a run under CI (``CI`` set, not
    empty, ``0`` or ``false``) defaults to ``none``, as pytest-recording's default is: a
    forgotten setting never starts real servers with real credentials in CI."""
    ours = config.getoption(MODE_DEST)
    theirs = config.getoption(PEER_DEST, None)  # None: pytest-recording absent, or not given
    option = (OPTION, ours) if ours or not isinstance(theirs, str) else (PEER_OPTION, theirs)
    choice = resolve_test_mode(
        (source, marker_mode),
        option,
        env_value(),
        (CONFIG_MODE, project_settings(config).mode),
    )
    ci = ci_value()
    if choice.source == "default" and ci is not None:
        return ModeChoice("none", f"CI={ci}")
    return choice


def run_report(config: pytest.Config) -> Path | None:
    """Where ``--mcp-cassette-report`` puts the run's facts (relative to where pytest
    was started), or ``None``."""
    given = config.getoption(REPORT_DEST, None)
    if not given:
        return None
    found: Path = Path(config.invocation_params.dir) / os.fspath(given)
    return found


def ci_value(environ: Mapping[str, str] | None = None) -> str | None:
    """``CI``'s value when it says this is a CI run (set, not empty, not 0 or false)."""
    value = (os.environ if environ is None else environ).get("CI", "").strip()
    return None if value.lower() in ("", "0", "false", "no") else value


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
        kwargs = _canonical(item, marker.kwargs, MARKER_SOURCE)
        unknown = sorted(set(kwargs) - set(MARKER_ARGS))
        if unknown or len(marker.args) > 1:
            pytest.fail(_marker_problem(unknown), pytrace=False)
        if marker.args:
            settings.setdefault("path", marker.args[0])
        for key, value in kwargs.items():
            settings.setdefault(key, value)
    return settings


def given_settings(
    item: pytest.Item, config: Mapping[str, Any] | None
) -> tuple[dict[str, Any], dict[str, str]]:
    """The test's settings, the marker's over the config fixture's (``config``), and where
    each came from (``MARKER_SOURCE`` or ``CONFIG_FIXTURE``), for messages that name it."""
    settings = config_settings(item, config)
    sources = dict.fromkeys(settings, CONFIG_FIXTURE)
    for key, value in marker_settings(item).items():
        if key == "mode" and "mode" in settings:
            _check_mode(settings["mode"], CONFIG_FIXTURE)  # a typo, even where overridden
        settings[key] = value
        sources[key] = MARKER_SOURCE
    return settings, sources


def _check_mode(value: Any, source: str) -> None:
    from cassette.modes.policy import get_mode

    try:
        get_mode(str(value), source)
    except CassetteUsageError as exc:
        problem = str(exc)
    else:
        return
    pytest.fail(problem, pytrace=False)  # outside the handler: one line, nothing chained


def config_settings(item: pytest.Item, config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``mcp_cassette_config`` fixture's dict: the marker's keywords (vcrpy's and
    pytest-recording's spellings too, with a warning), checked as the marker's are; its
    mode is checked even where a marker overrides it, so a typo never waits for the test
    that lacks the marker."""
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        pytest.fail(
            f"the {CONFIG_FIXTURE} fixture returns a dict of the marker's keywords, not "
            f"{type(config).__name__}",
            pytrace=False,
        )
    settings = _canonical(item, config, CONFIG_FIXTURE)
    unknown = sorted(str(key) for key in set(settings) - set(MARKER_ARGS))
    if unknown:
        pytest.fail(_marker_problem(unknown, CONFIG_FIXTURE), pytrace=False)
    return settings


def _marker_problem(unknown: Sequence[str], where: str = MARKER_SOURCE) -> str:
    """What is wrong with a marker's (or the config fixture's) arguments: each unknown
    keyword with the one it most likely misspells (``mod=`` for ``mode=``), else too many
    positional arguments."""
    from cassette.core.words.suggest import closest

    def shown(key: str) -> str:
        guess = closest(key, MARKER_ARGS)
        return f"{key}= (did you mean {guess}=?)" if guess else f"{key}="

    got = ", ".join(shown(key) for key in unknown)
    return (
        f"{where} takes a path and the keywords {', '.join(MARKER_ARGS)}; "
        f"got {got or 'several positional arguments'}"
    )


def _canonical(item: pytest.Item, kwargs: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The keywords of the marker (or the config fixture: ``where``) with vcrpy's and
    pytest-recording's spellings taken as ours, each with a warning naming ours (given
    both, ours wins)."""
    out: dict[str, Any] = {}
    for key, value in kwargs.items():
        ours = PEER_ARGS.get(key)
        if ours is None:
            out[key] = value
            continue
        item.warn(
            pytest.PytestWarning(
                f"{where}({key}=...) is the vcrpy / pytest-recording spelling; "
                f"cassette-mcp calls it {ours}=... (docs/pytest.md)"
            )
        )
        if ours not in kwargs:
            out[ours] = value
    return out


FaultsArg = Any  # a plan file's path, a list of rule tables, a FaultPlan, or None


def ignore_pointers(
    project: Sequence[str], marker: Any, where: str = MARKER_SOURCE
) -> tuple[str, ...]:
    """The project's ignore pointers and the marker's (or the config fixture's: ``where``;
    a string or a list), checked."""
    from cassette.core.replay.matching import check_ignore_pointer

    given = [marker] if isinstance(marker, str) else list(marker or ())
    if not all(isinstance(p, str) for p in given):
        raise CassetteUsageError(f"{where}(ignore=...) takes JSON Pointers")
    pointers = tuple(dict.fromkeys([*project, *given]))
    for pointer in pointers:
        check_ignore_pointer(pointer)
    return pointers


def flag(marker: Any, option: bool | None, project: bool) -> bool:
    """The marker's, else the option's (only ever on), else the project's."""
    if marker is not None:
        return bool(marker)
    return bool(option) or project


def keep_source(marker: Any, option: bool | None, source: str = MARKER_SOURCE) -> str:
    """Where ``record_on_failure`` came from (``source``: the marker or the config fixture
    that gave ``marker``), for the report that says it was honoured."""
    if marker is not None:
        return f"{source}(record_on_failure=True)"
    if option:
        return KEEP_OPTION
    return "record-on-failure in [tool.cassette.pytest]"
