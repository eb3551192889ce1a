"""The scenarios file: sessions to record, written as data (TOML or JSON), no client code.

Format 1, in TOML (JSON is the same data; docs/scenarios.md is the reference and
``cassette/schema/scenarios-v1.schema.json`` its JSON Schema)::

    format = 1
    cassettes = "cassettes"                      # where cassettes go, beside this file

    [target]
    command = ["python", "weather.py"]           # or url = "http://127.0.0.1:8000/mcp"
    env = { WEATHER_TOKEN = "${WEATHER_TOKEN}" } # ${VAR}: from the environment, at run time
    era = "auto"                                 # legacy, 2026-07-28 or auto

    [answers]                                    # what the client answers when the server asks
    sampling = "Snow tomorrow."
    roots = ["file:///srv/weather"]

    [[scenarios]]
    name = "forecast"
    steps = [
      { list = "tools" },
      { call = "forecast", arguments = { city = "Oslo" } },
      { call = "nope", expect-error = true },
    ]

Reading checks everything a run would trip over, before anything starts, and each
problem is one ``ScenarioError`` naming ``file:line``. Neither parser reports where a
*value* sits, so a line is found by looking for what the message is about (the n-th
``[[scenarios]]``, then the n-th step verb after it, or the key); it points at the right
scenario and step in files laid out as above. ``${VAR}`` is expanded only when a run
asks for the target (``ScenarioFile.server``), so listing a file's scenarios needs no
secrets.

The values live in ``cassette.client.scenario_model``, the reading and checking in
``cassette.client.scenario_reader``; this module is where both are imported from.
"""

from __future__ import annotations

from cassette.client.scenario_model import (
    FORMAT,
    LISTS,
    VERBS,
    Answers,
    Scenario,
    ScenarioFile,
    Step,
)
from cassette.client.scenario_reader import load_scenarios, loads_scenarios

__all__ = [
    "FORMAT",
    "LISTS",
    "VERBS",
    "Answers",
    "Scenario",
    "ScenarioFile",
    "Step",
    "load_scenarios",
    "loads_scenarios",
]
