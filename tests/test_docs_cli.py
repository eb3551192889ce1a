"""docs/cli.md and docs/pytest.md are true: every command on them runs, in a folder holding
the files they name, with the exit code and the output the page shows
(``tests/helpers/docs_pages.py`` says how a page is read).

The folder is built here from the committed example cassette: a cassette with a finding
for ``lint``, an older session for ``diff``, a leaked token for ``redact --scan``, a
rerun for ``show --against``, a server that drifted for ``verify``, and ``npx`` runs the
pinned server-everything offline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_tools_verify import SERVER as DRIFT_SERVER
from tests.helpers.docs_pages import run_page, shims
from tests.helpers.support import PY, ROOT, LineClient, everything_command, record_command, scaled

pytestmark = pytest.mark.e2e

EXAMPLE = ROOT / "examples" / "everything.jsonl"
SERVERS = ROOT / "tests" / "servers"
TOKEN = "ghp_" + "R8x2" * 9  # the shape of a GitHub token (not a real one)

WEATHER_TOML = f"""format = 1
cassettes = "cassettes"

[target]
command = ["python", "{SERVERS / "drift_server.py"}"]
env = {{ DRIFT = "1" }}

[answers]
sampling = "Cold and white."

[[scenarios]]
name = "forecast"
steps = [
  {{ list = "tools" }},
  {{ call = "greet", arguments = {{ name = "Ada" }} }},
  {{ call = "forecast", arguments = {{ city = "Oslo" }} }},
  {{ read = "weather://stations" }},
  {{ call = "lookup_station", arguments = {{ station_id = "18700" }} }},
  {{ list = "resources" }},
  {{ list = "prompts" }},
]

[[scenarios]]
name = "summary"
steps = [
  {{ list = "tools" }},
  {{ call = "summarize", arguments = {{ text = "snow" }} }},
]
"""

BROKEN_MANIFEST = {
    "manifest": 1,
    "tools": [
        {"name": "echo", "inputSchema": {"type": "object"}},
        {"name": "echo", "inputSchema": {"type": "object"}},
        {"name": "add"},
    ],
}


def _lines() -> list[str]:
    return EXAMPLE.read_text(encoding="utf-8").splitlines()


def _write(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _edit(lines: list[str], number: int, old: str, new: str) -> None:
    """Line ``number`` (1-based, as the pages count) with ``old`` replaced once."""
    assert old in lines[number - 1], (number, lines[number - 1][:120])
    lines[number - 1] = lines[number - 1].replace(old, new, 1)


def _cassettes(work: Path) -> None:
    (work / "examples").mkdir()
    shutil.copy(EXAMPLE, work / "examples" / "everything.jsonl")
    requests = EXAMPLE.with_name("everything-requests.jsonl")  # prune: a run that plays some
    shutil.copy(requests, work / "examples" / requests.name)
    # lint: a modern-era header over a legacy session, and an answer lost
    broken = _lines()
    _edit(broken, 1, '"era":"legacy"', '"era":"modern"')
    del broken[11]  # line 12: the answer to tools/call id 4
    _write(work / "broken.jsonl", broken)
    # diff: the newer session has another protocol version, no prompt, another sum text
    shutil.copy(EXAMPLE, work / "old.jsonl")
    new = _lines()
    _edit(new, 1, '"2025-11-25"', '"2025-06-18"')
    _edit(new, 12, "The sum of 2 and 40 is 42.", "The sum is 42.")
    del new[12:14]  # lines 13 and 14: prompts/get and its answer
    _write(work / "new.jsonl", new)
    # redact --scan: a token the client sent, by mistake
    leaky = _lines()
    _edit(leaky, 9, "hello from a cassette", f"token {TOKEN}")
    _write(work / "leaky.jsonl", leaky)
    # show --against: the same test, run again with another argument
    rerun = _lines()
    _edit(rerun, 9, '"hello from a cassette"}', '"hello from elsewhere"}')
    _write(work / "rerun.jsonl", rerun)
    (work / "broken.json").write_text(json.dumps(BROKEN_MANIFEST), encoding="utf-8")


def _servers(work: Path, env: dict[str, str]) -> None:
    shutil.copy(SERVERS / "modern_server.py", work / "modern_server.py")
    (work / "weather.toml").write_text(WEATHER_TOML, encoding="utf-8")
    # verify: drift_server.py has drifted since drift.jsonl was recorded (DRIFT=0)
    (work / "drift_server.py").write_text(
        DRIFT_SERVER.replace(
            'os.environ.get("DRIFT") == "1"', 'os.environ.get("DRIFT", "1") == "1"'
        ),
        encoding="utf-8",
    )
    client = LineClient(
        record_command(work / "drift.jsonl", [PY, str(work / "drift_server.py")]),
        env={**env, "DRIFT": "0"},
        cwd=work,  # the header names the server as run from here
    )
    client.initialize()
    client.request("tools/call", {"name": "greet", "arguments": {"who": "Ada"}})
    client.request("tools/call", {"name": "fail", "arguments": {}})
    client.request("ping")
    assert client.finish()[0] == 0
    # verify: weather.jsonl recorded from the unchanged weather server, which then changed
    scenario = work / "weather-record"
    scenario.mkdir()
    (scenario / "s.toml").write_text(
        f"""format = 1
cassettes = "."
[target]
command = ["{PY}", "{SERVERS / "drift_server.py"}"]
env = {{ DRIFT = "0" }}
era = "legacy"
[answers]
sampling = "snow"
[[scenarios]]
name = "weather"
steps = [
  {{ list = "tools" }},
  {{ call = "forecast", arguments = {{ city = "Oslo" }} }},
  {{ call = "summarize", arguments = {{ text = "snow" }} }},
]
""",
        encoding="utf-8",
    )
    made = subprocess.run(
        [PY, "-m", "cassette", "record", "--scenarios", "s.toml"],
        cwd=scenario,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
    )
    assert made.returncode == 0, made.stderr
    shutil.move(scenario / "weather.jsonl", work / "weather.jsonl")
    (work / "weather_server.py").write_text(
        "import os, runpy, sys\n"
        "os.environ.update(DRIFT_PROMPT='1')\n"
        f"sys.argv = [{str(SERVERS / 'drift_server.py')!r}]\n"
        f"runpy.run_path({str(SERVERS / 'drift_server.py')!r}, run_name='__main__')\n",
        encoding="utf-8",
    )


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    work = tmp_path / "work"
    work.mkdir()
    env = shims(tmp_path / "bin", everything_command())
    _cassettes(work)
    _servers(work, env)
    return work, env


def test_every_command_in_cli_md_runs_as_shown(workspace: tuple[Path, dict[str, str]]) -> None:
    work, env = workspace
    run_page(ROOT / "docs" / "cli.md", work, env, minimum=29)


def test_every_command_in_pytest_md_runs_as_shown(tmp_path: Path) -> None:
    env = shims(tmp_path / "bin", everything_command())
    copy = tmp_path / "examples" / "server-testing"
    shutil.copytree(
        ROOT / "examples" / "server-testing",
        copy,
        ignore=shutil.ignore_patterns(".pytest_cache", "__pycache__"),
    )
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    assert os.path.isdir(copy / "cassettes")
    run_page(ROOT / "docs" / "pytest.md", tmp_path, env, minimum=5)
