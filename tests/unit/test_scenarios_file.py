"""The scenarios file: TOML and JSON read the same, each mistake is one line naming
``file:line``, ``${VAR}`` comes from the environment at run time, and the shipped JSON
Schema accepts what the reader accepts and refuses what it refuses."""

from __future__ import annotations

import json
import subprocess
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
import tomli_w

from cassette.client.scenarios import ScenarioFile, load_scenarios, loads_scenarios
from cassette.errors import ScenarioError
from tests.helpers.support import PY, scaled

GOOD = """\
format = 1
cassettes = "tapes"
timeout = 12

[target]
command = ["python", "weather.py", "--token", "${WEATHER_TOKEN}"]
env = { WEATHER_TOKEN = "${WEATHER_TOKEN}", REGION = "eu" }
cwd = "server"
era = "2025-06-18"

[client]
name = "weather-tests"

[answers]
sampling = "Snow."
elicitation = { city = "Oslo" }
roots = ["file:///srv/weather", { uri = "file:///tmp", name = "tmp" }]
requests = { "custom/ask" = { ok = true } }

[[scenarios]]
name = "forecast"
description = "the whole surface"
steps = [
  { list = "tools" },
  { call = "forecast", arguments = { city = "Oslo" } },
  { prompt = "brief", arguments = { city = "Oslo" } },
  { read = "weather://stations" },
  { complete = { prompt = "brief" }, argument = { name = "city", value = "Os" } },
  { log-level = "debug" },
  { subscribe = "weather://stations" },
  { unsubscribe = "weather://stations" },
  { method = "ping", timeout = 2 },
  { call = "nope", expect-error = -32602, note = "unknown tools are refused" },
]

[[scenarios]]
name = "declines"
answers = { elicitation = "decline" }

[[scenarios.steps]]
call = "ask"
"""


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_good_file_reads_into_steps_and_answers(tmp_path: Path) -> None:
    file = load_scenarios(write(tmp_path, GOOD))
    assert file.names == ("forecast", "declines")
    assert (file.era, file.legacy_version, file.timeout) == ("legacy", "2025-06-18", 12.0)
    assert file.cassette_path("forecast") == tmp_path / "tapes" / "forecast.jsonl"
    steps = file.scenario("forecast").steps
    assert [s.method for s in steps] == [
        "tools/list",
        "tools/call",
        "prompts/get",
        "resources/read",
        "completion/complete",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "ping",
        "tools/call",
    ]
    assert steps[4].params == {
        "ref": {"type": "ref/prompt", "name": "brief"},
        "argument": {"name": "city", "value": "Os"},
    }
    assert (steps[8].timeout, steps[9].expect_error) == (2.0, -32602)
    assert [s.line for s in steps[:2]] == [24, 25]  # each step's own line
    forecast = file.scenario("forecast")
    assert forecast.answers.results["elicitation/create"] == {
        "action": "accept",
        "content": {"city": "Oslo"},
    }
    assert forecast.answers.results["roots/list"]["roots"][1] == {
        "uri": "file:///tmp",
        "name": "tmp",
    }
    assert file.scenario("declines").answers.results["elicitation/create"] == {"action": "decline"}
    assert file.client_capabilities(forecast) == {"sampling": {}, "elicitation": {}, "roots": {}}
    assert file.variables() == ("WEATHER_TOKEN",)


def test_toml_and_json_are_the_same_data(tmp_path: Path) -> None:
    import tomllib

    toml_file = load_scenarios(write(tmp_path, GOOD))
    json_path = write(tmp_path, json.dumps(tomllib.loads(GOOD), indent=2), "s.json")
    json_file = load_scenarios(json_path)

    def requests(file: ScenarioFile) -> list[list[tuple[str, object]]]:
        return [[(s.method, s.params) for s in sc.steps] for sc in file.scenarios]

    assert requests(json_file) == requests(toml_file)
    assert [s.answers for s in json_file.scenarios] == [s.answers for s in toml_file.scenarios]
    assert json_file.target == toml_file.target


def test_variables_come_from_the_environment_when_the_target_is_asked_for(tmp_path: Path) -> None:
    file = load_scenarios(write(tmp_path, GOOD))  # no variable needed to read it
    server = file.server({"WEATHER_TOKEN": "wx-live-4f9a1c7e"})
    assert server.command == ("python", "weather.py", "--token", "wx-live-4f9a1c7e")
    assert server.env == {"WEATHER_TOKEN": "wx-live-4f9a1c7e", "REGION": "eu"}
    assert server.cwd == str((tmp_path / "server").resolve())
    with pytest.raises(ScenarioError, match=r"s\.toml:5: \$\{WEATHER_TOKEN\} is not set"):
        file.server({})


def test_dollar_dollar_is_a_literal_dollar(tmp_path: Path) -> None:
    text = GOOD.replace('REGION = "eu"', 'REGION = "$${HOME}"')
    server = load_scenarios(write(tmp_path, text)).server({"WEATHER_TOKEN": "t"})
    assert server.env is not None
    assert server.env["REGION"] == "${HOME}"


# Each mistake, the line it must name, and words the message must hold.
BAD = [
    ("format = 2\n", 1, "written for scenarios format 2; this cassette-mcp reads format 1"),
    ('[target]\ncommand = ["x"]\n', 1, "no format"),
    ('format = 1\nscenarios = []\n[target]\ncommand = ["x"]\n', 2, "no scenarios"),
    ("format = 1\nbogus = 1\n", 2, "unknown key 'bogus'"),
    ('format = 1\n[target]\nurl = "ftp://x"\n', 3, "http:// or https://"),
    ('format = 1\n[target]\ncommand = "node x.js"\n', 3, "list of strings"),
    ('format = 1\n[target]\ncommand = ["x"]\nurl = "http://h/mcp"\n', 2, "either command"),
    ('format = 1\n[target]\ncommand = ["x"]\nera = "2099-01-01"\n', 4, "era must be"),
    ('format = 1\n[target]\ncommand = ["x"]\nheaders = { a = "b" }\n', 4, "headers go with a url"),
    ("format = 1\n[target\n", 2, "not valid TOML"),
]
SCENARIO = '\n[[scenarios]]\nname = "a"\nsteps = [\n  {{ list = "tools" }},\n  {step}\n]\n'
TARGET = 'format = 1\n[target]\ncommand = ["x"]\n'
BAD_STEPS = [
    ('{ call = "x", list = "tools" }', "needs exactly one of"),
    ('{ list = "everything" }', "lists tools, prompts, resources, resource-templates"),
    ('{ call = "x", argument = {} }', "unknown key 'argument'"),
    ('{ prompt = "p", arguments = { n = 1 } }', "prompt arguments are strings"),
    ('{ log-level = "loud" }', "a log level is one of"),
    ('{ complete = { tool = "x" }, argument = { name = "a", value = "b" } }', "complete is"),
    ('{ call = "x", timeout = 0 }', "above 0"),
    ('{ call = "x", expect-error = "yes" }', "expect-error is true or an error code"),
]


@pytest.mark.parametrize(("text", "line", "words"), BAD)
def test_each_mistake_names_its_line(tmp_path: Path, text: str, line: int, words: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as raised:
        load_scenarios(path)
    assert str(raised.value).startswith(f"{path}:{line}: ")
    assert words in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(("step", "words"), BAD_STEPS)
def test_a_bad_step_names_the_step_and_its_line(tmp_path: Path, step: str, words: str) -> None:
    path = write(tmp_path, TARGET + SCENARIO.format(step=step))
    with pytest.raises(ScenarioError) as raised:
        load_scenarios(path)
    assert str(raised.value).startswith(f"{path}:9: scenario 'a' step 2")
    assert words in str(raised.value)


def test_names_are_unique_and_file_safe(tmp_path: Path) -> None:
    twice = TARGET + SCENARIO.format(step="{ list = 'prompts' }") * 2
    with pytest.raises(ScenarioError, match=r":12: two scenarios are named 'a'"):
        load_scenarios(write(tmp_path, twice))
    unsafe = TARGET + SCENARIO.format(step="{ list = 'prompts' }").replace('"a"', '"../x"')
    with pytest.raises(ScenarioError, match=r":5: scenario #1 needs a name"):
        load_scenarios(write(tmp_path, unsafe))


def test_json_syntax_errors_name_their_line(tmp_path: Path) -> None:
    path = write(tmp_path, '{\n  "format": 1,\n  "target": {\n}}}', "s.json")
    with pytest.raises(ScenarioError, match=r"s\.json:4: not valid JSON"):
        load_scenarios(path)
    with pytest.raises(ScenarioError, match=r"\.yaml'"):
        loads_scenarios("format: 1", tmp_path / "s.yaml")
    with pytest.raises(ScenarioError, match=r"no such scenarios file"):
        load_scenarios(tmp_path / "missing.toml")


def test_an_unknown_scenario_lists_the_known_ones(tmp_path: Path) -> None:
    file = load_scenarios(write(tmp_path, GOOD))
    with pytest.raises(
        ScenarioError, match=r"no scenario named 'x' \(it has: forecast, declines\)"
    ):
        file.scenario("x")


def test_the_command_line_says_it_in_one_line_and_exits_3(tmp_path: Path) -> None:
    path = write(tmp_path, TARGET + SCENARIO.format(step='{ log-level = "loud" }'))
    result = subprocess.run(
        [PY, "-m", "cassette", "record", "--scenarios", str(path)],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )
    assert result.returncode == 3
    assert result.stderr.splitlines() == [
        f"cassette: error: {path}:9: scenario 'a' step 2 (log-level): a log level is one of "
        "debug, info, notice, warning, error, critical, alert, emergency"
    ]


# -- the shipped JSON Schema -----------------------------------------------------------------


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    resource = files("cassette") / "schema" / "scenarios-v1.schema.json"
    schema = json.loads(resource.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_schema_names_itself(validator: jsonschema.Draft202012Validator) -> None:
    assert validator.schema["$id"] == "https://cassette-mcp.dev/schema/scenarios-v1.schema.json"


def test_the_schema_accepts_what_the_reader_accepts(
    validator: jsonschema.Draft202012Validator, tmp_path: Path
) -> None:
    import tomllib

    data = tomllib.loads(GOOD)
    assert list(validator.iter_errors(data)) == []
    examples = Path(__file__).resolve().parents[2] / "examples"
    for path in sorted(examples.rglob("*.scenarios.toml")) + sorted(
        examples.rglob("scenarios.toml")
    ):
        load_scenarios(path)
        assert list(validator.iter_errors(tomllib.loads(path.read_text()))) == [], path


@pytest.mark.parametrize("step", [s for s, _ in BAD_STEPS])
def test_the_schema_refuses_the_steps_the_reader_refuses(
    validator: jsonschema.Draft202012Validator, tmp_path: Path, step: str
) -> None:
    import tomllib

    text = TARGET + SCENARIO.format(step=step)
    assert not validator.is_valid(tomllib.loads(text))
    with pytest.raises(ScenarioError):
        load_scenarios(write(tmp_path, tomli_w.dumps(tomllib.loads(text))))


def test_a_command_runs_in_the_files_folder_unless_told(tmp_path: Path) -> None:
    text = TARGET + SCENARIO.format(step='{ list = "prompts" }')
    server = load_scenarios(write(tmp_path, text)).server({})
    assert server.cwd == str(tmp_path.resolve())
    url = text.replace('command = ["x"]', 'url = "http://127.0.0.1:9/mcp"')
    assert load_scenarios(write(tmp_path, url)).server({}).cwd is None
