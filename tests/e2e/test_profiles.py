"""The client profiles of ``cassette variant --as`` (cassette/core/eras/profiles.py) against
the clients we pin: each pinned client recorded itself, and each variant replayed to it.

1. Each pinned client (Claude Code and Gemini CLI through tests/clients/agent_cli.py,
   the Inspector CLI through tests/clients/inspector_cli.py, for ``bare`` the Python
   SDK 2 ``Client`` given no callbacks, and for the SDK clients given their handlers the
   cross-client matrix's drivers: the Python SDK 2 ``Client`` and fastmcp's for
   ``sdk-handlers``, each its own source, the Python SDK 1.x for ``py-sdk1``, the
   TypeScript SDK 1.x for ``ts-sdk1`` and the AI SDK for ``ai-sdk``) calls the one tool
   of tests/servers/asking_server.py through ``cassette record``. That server is legacy only
   and asks, inside the call, for the client's roots, a form and a sampled message, so
   the recording shows what the client declares (its era: whether it probed with
   ``server/discover`` first; the revision it asks for; its capabilities and
   ``clientInfo``) and how it answers each question. The test fails when the profile
   says otherwise, and when the profile does not name the pinned version. (An SDK
   client's answers and ``clientInfo`` are its application's: those profiles leave them
   to the recorded client, and only what they say is compared.)
2. ``show`` says a variant recorded ``--as NAME`` fits NAME, and a replay of that cassette
   to the pinned client NAME is answered from that variant: on a 2026-07-28 cassette of
   the dual-era server, the client calls the ``roots`` tool, whose recorded answer
   differs in each session (the main recording's client declared no roots; each profile
   lists its own), so the answer the client gets names the session that served it.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from cassette.client.variants import PROFILES
from tests.helpers.support import NODE_DIR, PY, ROOT, node, record_command, replay_command, run

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

CLIENTS_DIR = ROOT / "tests" / "clients"
SERVERS = ROOT / "tests" / "servers"
ASKING = [PY, str(SERVERS / "asking_server.py")]
DUAL = [PY, str(SERVERS / "dual_era_server.py")]
#: what each question is answered with by a profile that does not list it (the variant's
#: client refuses it, as ``cassette.client.connection.refuse`` does)
REFUSED = {"error": {"code": -32601, "message": "Method not found"}}
QUESTIONS = ("roots/list", "elicitation/create", "sampling/createMessage")
#: the npm package each profile of a Node client was read from (tests/node/package.json)
PACKAGES = {
    "claude-code": "@anthropic-ai/claude-code",
    "gemini-cli": "@google/gemini-cli",
    "inspector": "@modelcontextprotocol/inspector",
    "ts-sdk1": "@modelcontextprotocol/sdk",
    "ai-sdk": "@ai-sdk/mcp",
}
PINNED = json.loads((NODE_DIR / "package.json").read_text("utf-8"))["dependencies"]
#: the SDK 1.x venv's pins (tests/clients/requirements-mcp1.txt): NAME==VERSION lines
MCP1_PINS = dict(
    line.split("==", 1)
    for line in (CLIENTS_DIR / "requirements-mcp1.txt").read_text("utf-8").splitlines()
    if "==" in line and not line.startswith("#")
)
#: each profile of an SDK client given its handlers, and the matrix drivers it was read
#: from (tests/clients/README.md): a profile that names two clients is checked with each
DRIVEN = {
    "sdk-handlers": ("py2-auto", "fastmcp"),
    "py-sdk1": ("py1",),
    "ts-sdk1": ("ts1",),
    "ai-sdk": ("ai-sdk",),
}
#: every pinned client a profile was taken from: (profile, the client's matrix id)
SOURCES = [
    *((name, name) for name in ("claude-code", "gemini-cli", "inspector", "bare")),
    *((name, client) for name, clients in DRIVEN.items() for client in clients),
]


def agent(mode: str, kind: str, command: list[str], cwd: Path) -> dict[str, Any]:
    """Run Claude Code or Gemini CLI (a fake model API) against ``command``."""
    binary = NODE_DIR / "node_modules" / ".bin" / mode.split("-", maxsplit=1)[0]
    if not binary.exists():
        pytest.skip(f"{mode} is missing: run `npm ci --prefix tests/node`")
    done = subprocess.run(
        [PY, str(CLIENTS_DIR / "agent_cli.py"), "--mode", mode, kind, "stdio", *command],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"{mode} printed nothing; stderr:\n{done.stderr}"
    return dict(json.loads(lines[-1]))


def inspector(kind: str, command: list[str], tool: str, arguments: dict[str, Any]) -> Any:
    """One Inspector CLI session calling ``tool`` on ``command`` (its driver's ``invoke``)."""
    node()
    sys.path.insert(0, str(CLIENTS_DIR))
    try:
        driver = importlib.import_module("inspector_cli")
        common = importlib.import_module("common")
    finally:
        sys.path.remove(str(CLIENTS_DIR))
    if not driver.INSPECTOR.exists():
        pytest.skip("the MCP Inspector is missing: run `npm ci --prefix tests/node`")
    target = common.Target(kind, "stdio", command, None)
    args = json.dumps(arguments)
    return driver.invoke(
        target, "--method", "tools/call", "--tool-name", tool, "--tool-args-json", args
    )


async def bare_session(command: list[str], tool: str, arguments: dict[str, Any]) -> str:
    """The Python SDK 2 ``Client`` given no callbacks (``bare``): list what the server
    offers, call ``tool``; the call's text, or its error."""
    from mcp import Client

    from tests.helpers.support import stdio_params

    async with Client(stdio_params(command)) as client:
        await client.list_tools()
        await client.list_prompts()
        await client.list_resources()
        try:
            result = await client.call_tool(tool, arguments)
        except Exception as exc:  # the server refused: that is what this client is told
            return f"error: {exc}"
        return str(result.content[0].text)  # type: ignore[union-attr]


def driven(client: str, command: list[str], folder: Path) -> dict[str, Any]:
    """One run of the matrix driver of ``client`` (tests/clients/README.md) against
    ``command``, its session cut to the asking server's one tool call."""
    from tests.e2e.test_client_matrix import driver

    done = subprocess.run(
        [*driver(client), "asking", "stdio", *command],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=folder,
        env={**os.environ, "CASSETTE_MATRIX_HOME": str(folder), "CASSETTE_MATRIX_STEPS": "echo"},
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"{client} printed nothing; stderr:\n{done.stderr}"
    return dict(json.loads(lines[-1]))


def record_client(name: str, folder: Path, client: str | None = None) -> list[dict[str, Any]]:
    """The session in which pinned client ``name`` (or the matrix driver ``client``)
    called the asking server's tool, recorded through ``cassette record`` (a session per
    start: an agent starts the server for its health check and again for its turn)."""
    tape = folder / "asked.jsonl"
    command = record_command(tape, ASKING, "--no-probe", "--sessions", str(folder))
    echo = {"message": "hello matrix"}
    if name in ("claude-code", "gemini-cli"):
        assert agent(name, "asking", command, folder).get("connected"), name
    elif name == "inspector":
        assert inspector("asking", command, "echo", echo)
    elif name in DRIVEN:
        said = driven(client or DRIVEN[name][0], command, folder)
        assert "Echo" in json.dumps(said.get("echo")), said
    else:
        assert run(lambda: bare_session(command, "echo", echo)).startswith("Echo")
    for path in sorted(folder.glob("asked*.jsonl")):
        lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        if any((e.get("message") or {}).get("method") == "tools/call" for e in lines):
            return lines
    raise AssertionError(f"no recorded session of {name} called the tool")


def declared(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """What a recorded session shows of its client: its era (``dual``: it probed with
    ``server/discover`` before its ``initialize``), the legacy revision it asked for, its
    capabilities and ``clientInfo`` (the same in the probe's envelope, when it probed),
    and its answer to each question, a root's file URI and name read as the profile
    plays the client's working folder (``file:///workspace``)."""
    messages = [(e["dir"], e["message"]) for e in lines if e.get("kind") == "message"]
    requests = [m for d, m in messages if d == "c2s" and "method" in m and "id" in m]
    init = next(m["params"] for m in requests if m["method"] == "initialize")
    seen: dict[str, Any] = {
        "era": "legacy" if requests[0]["method"] == "initialize" else "dual",
        "legacy_version": init["protocolVersion"],
        "capabilities": init["capabilities"],
        "client_info": init["clientInfo"],
    }
    if seen["era"] == "dual":
        meta = requests[0]["params"]["_meta"]
        envelope = {
            "capabilities": meta["io.modelcontextprotocol/clientCapabilities"],
            "client_info": meta["io.modelcontextprotocol/clientInfo"],
        }
        assert envelope == {k: seen[k] for k in envelope}, "probe and initialize differ"
    asked = {m["id"]: m["method"] for d, m in messages if d == "s2c" and "method" in m}
    answers = {}
    for direction, message in messages:
        if direction == "c2s" and "method" not in message and message.get("id") in asked:
            kept = {k: v for k, v in message.items() if k in ("result", "error")}
            answers[asked[message["id"]]] = as_played(kept)
    seen["answers"] = answers
    return seen


def as_played(answer: dict[str, Any]) -> dict[str, Any]:
    roots = (answer.get("result") or {}).get("roots")
    if not roots:
        return answer
    played = []
    for root in roots:
        assert str(root["uri"]).startswith("file:///"), root
        played.append({**root, "uri": "file:///workspace"})
        if "name" in root:
            played[-1]["name"] = "workspace"
    return {"result": {"roots": played}}


def expected(name: str) -> dict[str, Any]:
    """What profile ``name`` says its client declares and answers (members it leaves to
    the recorded client are not compared)."""
    profile = PROFILES[name]
    said: dict[str, Any] = {
        "era": "legacy" if profile.era == "legacy" else "dual",
        "capabilities": dict(profile.capabilities or {}),
    }
    if profile.legacy_version is not None:
        said["legacy_version"] = profile.legacy_version
    if profile.client_info is not None:
        said["client_info"] = dict(profile.client_info)
    if profile.answers is not None:
        said["answers"] = {q: dict(profile.answers.get(q, REFUSED)) for q in QUESTIONS}
    return said


def pinned_as(client: str) -> str:
    """How a profile taken from matrix client ``client`` names its pinned version."""
    if client == "py1":
        return f"mcp {MCP1_PINS['mcp']}"
    if client == "fastmcp":
        return f"fastmcp {version('fastmcp')}"
    return f"mcp {version('mcp')}"  # the Python SDK 2: bare, py2-auto


def test_every_profile_of_a_real_client_is_checked_against_it() -> None:
    """A profile added to the table without a pinned client to check it against fails."""
    checked = {name for name, _ in SOURCES}
    unchecked = {n for n, p in PROFILES.items() if p.taken_from and n not in checked}
    assert not unchecked, f"profiles no pinned client checks: {sorted(unchecked)}"


@pytest.mark.parametrize(("name", "client"), SOURCES, ids=[f"{n}-{c}" for n, c in SOURCES])
def test_a_profile_is_what_its_pinned_client_declares_and_answers(
    name: str, client: str, tmp_path: Path
) -> None:
    profile = PROFILES[name]
    assert profile.taken_from, f"profile {name} names no client it was taken from"
    if name in PACKAGES:
        pinned = PINNED[PACKAGES[name]]
        assert pinned in profile.taken_from, f"{name}: pinned {pinned}, {profile.taken_from}"
        assert PACKAGES[name] in profile.taken_from
    else:
        pinned = pinned_as(client)
        assert pinned in profile.taken_from, f"{name}: pinned {pinned}, {profile.taken_from}"
    want = expected(name)
    seen = declared(record_client(name, tmp_path, client))
    got = {k: seen[k] for k in want}
    assert got == want, f"profile {name} differs from the pinned client: {differing(got, want)}"


def differing(got: dict[str, Any], want: dict[str, Any]) -> str:
    return "; ".join(
        f"{k}: the client {json.dumps(got[k])}, the profile {json.dumps(want[k])}"
        for k in want
        if got[k] != want[k]
    )


# -- a variant fits its pinned client ---------------------------------------------------

#: the tool whose answer names the session that served it
ROOTS_TOOL = "roots"


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2026-07-28 cassette of the dual-era server by the SDK 2 default client: its
    listings, and the roots tool refused (it declared no roots)."""
    tape = tmp_path_factory.mktemp("plain") / "dual.jsonl"
    said = run(lambda: bare_session(record_command(tape, DUAL), ROOTS_TOOL, {}))
    assert said.startswith("error"), said
    assert json.loads(tape.read_text("utf-8").splitlines()[0])["era"] == "modern"
    return tape


def answer_of(tape: Path, variant: str | None) -> str:
    """The recorded answer of the roots tool in session ``variant`` (None: the main one)."""
    calls: set[Any] = set()
    for line in tape.read_text("utf-8").splitlines()[1:]:
        event = json.loads(line)
        if (event.get("meta") or {}).get("variant") != variant:
            continue
        message = event.get("message") or {}
        if message.get("method") == "tools/call" and message["params"]["name"] == ROOTS_TOOL:
            calls.add(message["id"])
        result = message.get("result") or {}
        if message.get("id") in calls and result.get("content"):
            return str(result["content"][0]["text"])
        if message.get("id") in calls and "error" in message:
            return str(message["error"]["message"])
    raise AssertionError(f"session {variant} holds no answer of the {ROOTS_TOOL} tool")


@pytest.mark.parametrize("name", ["claude-code", "gemini-cli", "inspector"])
def test_a_variant_fits_its_pinned_client_and_serves_it(
    name: str, plain: Path, tmp_path: Path
) -> None:
    tape = tmp_path / "dual.jsonl"
    shutil.copy(plain, tape)
    variant = subprocess.run(
        [PY, "-m", "cassette", "variant", str(tape), "--as", name],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert variant.returncode == 0, variant.stderr
    shown = subprocess.run(
        [PY, "-m", "cassette", "show", str(tape)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    line = next(x for x in shown.splitlines() if x.strip().startswith(f"session {name}:"))
    fits = re.search(r"; fits ([^;]+)", line)
    assert fits is not None, shown
    assert name in fits.group(1).split(", "), shown
    if PROFILES[name].era == "legacy":  # a legacy-only client's variant, on a modern cassette
        assert f"session {name}: serves legacy " in line
    recorded, main = answer_of(tape, name), answer_of(tape, None)
    assert recorded != main
    replay = replay_command(tape)
    if name == "inspector":
        got = inspector("dual-roots", replay, ROOTS_TOOL, {})["content"][0]["text"]
    else:
        got = agent(name, "dual-roots", replay, tmp_path)["echo"]
    assert recorded in str(got), f"{name} was served {got!r}; its variant holds {recorded!r}"
