"""cassette as the client: the direction for server authors.

Replay serves a cassette to a client in place of a server. This package goes the other
way: it speaks to a live server as a client does, to record scenarios written as data
(no client code) and to re-fire a cassette's requests at a changed server and say what
drifted (``verify``). Everything here drives the target through the transports'
``UpstreamConnector`` and records through the runtime's recording machinery, so redaction,
limits and the cassette lock apply as in every recording; nothing imports the official SDK.

The functions that talk to servers are ``async`` (anyio: asyncio or trio)::

    import anyio
    from cassette.client import load_scenarios, record_scenarios, verify

    scenarios = load_scenarios("tests/weather.toml")
    results = anyio.run(lambda: record_scenarios(scenarios))        # a ScenarioResult each
    report = anyio.run(lambda: verify("tests/weather.jsonl", ["python", "weather.py"]))
    report.assert_ok()                                               # AssertionError + diff

* ``load_scenarios`` / ``loads_scenarios``: a checked ``ScenarioFile`` (docs/scenarios.md);
* ``record_scenarios`` / ``record_scenario``: run scenarios as a ``ScenarioOptions`` says
  (a record mode, default ``all``), a ``ScenarioResult`` with a ``StepResult`` per step;
* ``verify``: a ``VerifyReport`` of ``Verdict`` values, as a ``VerifyOptions`` says
  (``update=True`` writes the drift into the cassette; ``Ignores`` says what to leave out);
* ``snapshot``: verify, record when missing, update under ``all`` (what the pytest
  fixture's ``verify`` runs);
* ``record_variant``: a cassette's session again as another client (``PROFILES``), appended
  as a variant session (what ``cassette variant`` runs), a ``VariantResult``.

Names are imported on first use, so ``import cassette.client`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cassette._lazy import lazy_exports

if TYPE_CHECKING:
    from cassette.client.compare import Ignores
    from cassette.client.drift import VerifyOptions, verify
    from cassette.client.record import (
        RecordTuning,
        ScenarioOptions,
        ScenarioResult,
        record_scenario,
        record_scenarios,
    )
    from cassette.client.report import Verdict, VerifyReport
    from cassette.client.scenarios import (
        Answers,
        Scenario,
        ScenarioFile,
        Step,
        load_scenarios,
        loads_scenarios,
    )
    from cassette.client.snapshots import SnapshotOptions, project_ignores, snapshot
    from cassette.client.steps import StepResult
    from cassette.client.target import ServerTarget
    from cassette.client.variants import PROFILES, VariantOptions, VariantResult, record_variant

_LAZY: dict[str, str] = {
    "PROFILES": "cassette.client.variants",
    "VariantOptions": "cassette.client.variants",
    "VariantResult": "cassette.client.variants",
    "record_variant": "cassette.client.variants",
    "Ignores": "cassette.client.compare",
    "RecordTuning": "cassette.client.record",
    "ScenarioOptions": "cassette.client.record",
    "ScenarioResult": "cassette.client.record",
    "record_scenario": "cassette.client.record",
    "record_scenarios": "cassette.client.record",
    "Verdict": "cassette.client.report",
    "VerifyReport": "cassette.client.report",
    "Answers": "cassette.client.scenarios",
    "Scenario": "cassette.client.scenarios",
    "ScenarioFile": "cassette.client.scenarios",
    "Step": "cassette.client.scenarios",
    "load_scenarios": "cassette.client.scenarios",
    "loads_scenarios": "cassette.client.scenarios",
    "project_ignores": "cassette.client.snapshots",
    "snapshot": "cassette.client.snapshots",
    "SnapshotOptions": "cassette.client.snapshots",
    "StepResult": "cassette.client.steps",
    "ServerTarget": "cassette.client.target",
    "verify": "cassette.client.drift",
    "VerifyOptions": "cassette.client.drift",
}

__all__ = [
    "PROFILES",
    "Answers",
    "Ignores",
    "RecordTuning",
    "Scenario",
    "ScenarioFile",
    "ScenarioOptions",
    "ScenarioResult",
    "ServerTarget",
    "SnapshotOptions",
    "Step",
    "StepResult",
    "VariantOptions",
    "VariantResult",
    "Verdict",
    "VerifyOptions",
    "VerifyReport",
    "load_scenarios",
    "loads_scenarios",
    "project_ignores",
    "record_scenario",
    "record_scenarios",
    "record_variant",
    "snapshot",
    "verify",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
