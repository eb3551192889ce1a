"""A cassette as the snapshot of a server's answers: verify it, record it when it is
missing, accept a change under ``all``. What ``mcp_cassette.verify`` runs.

The record mode means here what it means everywhere, applied to the cassette (the server
under test always runs: testing it is the point):

====================  =======================================  ===========================
mode                  the cassette exists                      it is missing
====================  =======================================  ===========================
``none``              verify                                   fail, naming it and the mode
``once``,             verify                                   record it from the scenario
``new_episodes``                                               (without one: fail, saying
                                                               how to record it)
``all``               verify, and write what drifted into it   record it from the scenario
                      (``verify --update``)
====================  =======================================  ===========================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from cassette.client.compare import Ignores
from cassette.client.drift import VerifyOptions, verify
from cassette.client.record import ScenarioOptions, record_scenario
from cassette.client.report import VerifyReport
from cassette.client.scenarios import Scenario, ScenarioFile
from cassette.client.target import ServerTarget
from cassette.errors import CassetteNotFoundError, UsageError
from cassette.modes.policy import ModeChoice, missing_cassette_message
from cassette.store.storage import has_recording

__all__ = ["SnapshotOptions", "project_ignores", "snapshot"]

_SECTION = "[tool.cassette.verify]"


def project_ignores(settings: Mapping[str, Any] | None = None) -> Ignores:
    """``ignore`` (JSON Pointers) and ``ignore-keys`` (key names) of
    ``[tool.cassette.verify]`` in the nearest pyproject.toml; a bad value is a
    ``UsageError`` naming it."""
    from cassette.store.config import load_settings

    section = (load_settings() if settings is None else settings).get("verify", {})
    if not isinstance(section, dict):
        raise UsageError(f"{_SECTION} must be a table")
    unknown = sorted(set(section) - {"ignore", "ignore-keys"})
    if unknown:
        raise UsageError(f"{_SECTION}: unknown key {unknown[0]!r} (known: ignore, ignore-keys)")
    return Ignores(_strings(section, "ignore"), _strings(section, "ignore-keys"))


def _strings(section: Mapping[str, Any], key: str) -> list[str]:
    value = section.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{_SECTION} {key} must be a list of strings")
    return list(value)


@attrs.frozen(kw_only=True)
class SnapshotOptions:
    """How ``snapshot`` verifies: for a scenario (its file and itself; a missing cassette
    is then recorded from it, and its target is the default server), leaving out what
    ``ignores`` says, each request allowed ``time_limit`` seconds, ``${VAR}`` taken from
    ``environ`` (default: this process's)."""

    scenario: tuple[ScenarioFile, Scenario] | None = None
    ignores: Ignores = Ignores()
    time_limit: float = 30.0
    environ: Mapping[str, str] | None = None


async def snapshot(
    path: str | os.PathLike[str],
    choice: ModeChoice,
    server: ServerTarget | None = None,
    options: SnapshotOptions = SnapshotOptions(),
) -> VerifyReport:
    """Verify, record or update the cassette at ``path`` as ``choice``'s mode says (see
    the module docstring). ``server`` defaults to the scenario file's target."""
    scenario, ignores, environ = options.scenario, options.ignores, options.environ
    time_limit = options.time_limit
    tape = Path(path)
    if not has_recording(tape):
        return await _missing(tape, choice, scenario, environ)
    if server is None:
        if scenario is None:
            raise UsageError("verify needs the server: its command line or URL")
        server = scenario[0].server(environ)
    update = choice.mode == "all"
    checks = VerifyOptions(ignores=ignores, time_limit=time_limit, update=update)
    return await verify(tape, server, checks)


async def _missing(
    tape: Path,
    choice: ModeChoice,
    scenario: tuple[ScenarioFile, Scenario] | None,
    environ: Mapping[str, str] | None,
) -> VerifyReport:
    if choice.mode == "none":
        raise CassetteNotFoundError(missing_cassette_message(str(tape), choice))
    if scenario is None:
        raise CassetteNotFoundError(
            f"{tape}: no cassette to verify; record it first (cassette record -o {tape} -- "
            "COMMAND, through your client), or name a scenarios file in the marker "
            "(@pytest.mark.mcp_cassette(scenarios=...)) and it is recorded from the scenario"
        )
    file, chosen = scenario
    if tape.name != f"{chosen.name}.jsonl":
        raise UsageError(
            f"{tape}: the cassette of scenario {chosen.name!r} is named {chosen.name}.jsonl"
        )
    options = ScenarioOptions(
        choice=ModeChoice("once", choice.source), output=tape.parent, environ=environ
    )
    result = await record_scenario(file, chosen, options)
    lines = result.lines()
    return VerifyReport(
        str(tape), recorded=True, problems=tuple(lines[:-1]), note=lines[-1].partition(": ")[2]
    )
