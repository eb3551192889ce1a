"""The cross-client matrix (issue 14): real clients against real servers, each cell recorded
with one client and replayed to another, the replaying client's observations on replay
compared with its own live run against the same server.

A cell is SERVER/TRANSPORT: RECORDER -> REPLAYER:
1. RECORDER runs the scripted session (tests/clients/session.json) live through
   ``cassette record`` (stdio: ``cassette record -o TAPE -- SERVER``; HTTP and SSE:
   ``cassette record -o TAPE --upstream URL``), against a fresh server;
2. REPLAYER runs the same session live against a fresh server: its baseline;
3. REPLAYER runs it against ``cassette replay TAPE`` (stdio, or ``--front http``/``sse``).
``verdict`` judges it: pass when REPLAYER observes on replay exactly what it observed live
and the replay reported no miss; refused when the live server refused REPLAYER, or the
recording cannot tell whether it would have served REPLAYER's era (``cassette_cannot_serve``),
and the replay refuses it with a reported miss that says how to record for it.

The drivers are tests/clients/*.py and tests/node/clients/*.mjs (tests/clients/README.md).
The default run is DEFAULT_CELLS; CASSETTE_FULL_MATRIX=1 runs every cell, and
CASSETTE_MATRIX=plain only the plain cells of the clients people run (``plain_cells``):
those recorded by the scripted session's client, and the plain-recording family
(``tools_cells``, CASSETTE_MATRIX=tools alone): a plain ``cassette record`` by a client
that lists only tools (the Python SDK 2 ``Client`` given no callbacks, as every agent
framework connects), replayed to Claude Code, Gemini CLI, the Inspector CLI, fastmcp's
Client with handlers, langchain, the AI SDK, the TypeScript SDK 1.x and the Python SDK
1.x, against server-everything, mcp 2.3.0's server (with a roots-gated tool) and
fastmcp's, over stdio and streamable HTTP; every client runs the same short session
(connect, list tools, call them: ``TOOLS_STEPS``). DEFAULT_CELLS holds eight of them.
Either way each cell's outcome lands in build/client-matrix/ and the table in build/client-matrix.md
(tests/conftest.py writes it); docs/client-matrix.md holds the last full table. Cells that
fail are in EXPECTED_FAILURES (strict xfail: a cell that starts passing turns the suite
red until it is taken out).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cassette.core.eras.legacy_calls import ANNOUNCED
from tests.e2e.matrix_table import RESULTS, seen
from tests.e2e.matrix_verdict import STEPS, cassette_cannot_serve, failed_step, verdict
from tests.helpers.support import (
    EVERYTHING_JS,
    NODE_DIR,
    OFFLINE_ENV,
    PORT0_JS,
    PY,
    ROOT,
    Background,
    listening,
    node,
    replay_command,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

CLIENTS_DIR = ROOT / "tests" / "clients"
MCP1_PY = CLIENTS_DIR / ".venv-mcp1" / "bin" / "python"
INSPECTOR_JS = (
    NODE_DIR / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "launcher"
)
FULL = os.environ.get("CASSETTE_FULL_MATRIX") == "1"

#: seconds one driver run may take (the Inspector runs one process per step)
RUN_TIMEOUT = 300
#: seconds a server, proxy or front may take to say it is listening (fastmcp imports a lot)
READY_TIMEOUT = 90

SERVERS = ("everything", "dual", "fastmcp")
TRANSPORTS = ("stdio", "http", "sse")
CLIENTS = ("py2-auto", "py2-legacy", "py2-modern", "py1", "ts1", "ts2", "fastmcp", "inspector")
#: The Inspector CLI opens one session per method, so what it records is one session per
#: step: only the Inspector itself replays that (with --sessions), no single-session client.
RECORDERS = tuple(c for c in CLIENTS if c != "inspector")
#: The clients people run, which replay here but do not record: two AI agents driven
#: through a fake of their model API (each run is two sessions, its health check and one
#: turn), langchain in its default mode (a session per call), pydantic-ai and the AI SDK.
#: They replay what the Python SDK 2 default client recorded.
APPS = ("claude-code", "gemini-cli", "langchain", "ai-sdk", "pydantic-ai")
#: mcp 2.3.0's own server (tests/servers/mcp23_server.py): accepts both eras, its
#: discovery lists only 2026-07-28; the plain cells' other server beside fastmcp.
PLAIN_SERVERS = ("mcp23", "fastmcp")
#: Done means of the clients people run: recorded with a plain `cassette record` by the
#: Python SDK 2 default client, replayed to these, over stdio and HTTP.
PLAIN_REPLAYERS = ("claude-code", "gemini-cli", "langchain", "ai-sdk", "ts1", "py1", "inspector")
#: The plain-recording family: the recording client lists only tools, as every agent
#: framework connects (``py2-default``: the Python SDK 2 ``Client`` given no callbacks,
#: tests/clients/py_sdk2_default.py), and every client runs the same short session:
#: connect, list tools, call the echo tool and, on mcp23, its roots-gated ``read_file``
TOOLS_RECORDER = "py2-default"
TOOLS_STEPS = "tools,echo,gated"
TOOLS_SERVERS = ("everything", "mcp23", "fastmcp")
TOOLS_REPLAYERS = (
    "claude-code", "gemini-cli", "inspector", "fastmcp", "langchain", "ai-sdk", "ts1", "py1",
)  # fmt: skip
#: CASSETTE_MATRIX=plain runs the plain cells of the clients people run alone (both
#: families); CASSETTE_MATRIX=tools the plain-recording family alone
MATRIX = os.environ.get("CASSETTE_MATRIX", "")


def driver(client: str) -> list[str]:
    """The argv that runs CLIENT's driver (arguments KIND TRANSPORT TARGET... follow)."""
    match client:
        case _ if client in APPS:
            return app_driver(client)
        case "py2-auto" | "py2-legacy" | "py2-modern" | "py2-default":
            return py2_driver(client)
        case "py1":
            if not MCP1_PY.exists():
                pytest.skip(f"{MCP1_PY} missing: scripts/test.sh makes it")
            return [str(MCP1_PY), str(CLIENTS_DIR / "py_sdk1.py")]
        case "ts1" | "ts2":
            return [node(), str(NODE_DIR / "clients" / f"ts_sdk{client[2]}.mjs")]
        case "fastmcp":
            return [PY, str(CLIENTS_DIR / "fastmcp_client.py")]
        case "inspector":
            node()
            if not INSPECTOR_JS.exists():
                pytest.skip("the MCP Inspector is missing: run `npm ci --prefix tests/node`")
            return [PY, str(CLIENTS_DIR / "inspector_cli.py")]
    raise AssertionError(client)


def py2_driver(client: str) -> list[str]:
    """The Python SDK 2 ``Client`` in a mode, or as an agent framework makes it."""
    if client == TOOLS_RECORDER:
        return [PY, str(CLIENTS_DIR / "py_sdk2_default.py")]
    mode = {"auto": "auto", "legacy": "legacy", "modern": "2026-07-28"}[client[4:]]
    return [PY, str(CLIENTS_DIR / "py_sdk2.py"), "--mode", mode]


def app_driver(client: str) -> list[str]:
    """The argv of the driver of one of the APPS."""
    match client:
        case "claude-code" | "gemini-cli":
            node()
            agent = NODE_DIR / "node_modules" / ".bin" / client.split("-", maxsplit=1)[0]
            if not agent.exists():
                pytest.skip(f"{client} is missing: run `npm ci --prefix tests/node`")
            return [PY, str(CLIENTS_DIR / "agent_cli.py"), "--mode", client]
        case "ai-sdk":
            return [node(), str(NODE_DIR / "clients" / "ai_sdk.mjs")]
        case "langchain":
            if not MCP1_PY.exists():
                pytest.skip(f"{MCP1_PY} missing: scripts/test.sh makes it")
            return [str(MCP1_PY), str(CLIENTS_DIR / "langchain_client.py")]
        case "pydantic-ai":
            return [PY, str(CLIENTS_DIR / "pydantic_ai_client.py")]
    raise AssertionError(client)


# -- servers ---------------------------------------------------------------------------


def server_command(server: str, transport: str) -> list[str]:
    """The server's command; over HTTP and SSE it binds port 0 and prints the port it got
    (server-everything through tests/node/port0.mjs, ours through uvicorn)."""
    script = {
        "dual": "dual_era_server.py",
        "mcp23": "mcp23_server.py",
        "fastmcp": "fastmcp_server.py",
    }.get(server)
    if script is None:
        mode = {"stdio": "stdio", "http": "streamableHttp", "sse": "sse"}[transport]
        if transport == "stdio":
            return [node(), str(EVERYTHING_JS), mode]
        return [node(), str(PORT0_JS), str(EVERYTHING_JS), mode]
    argv = [PY, str(ROOT / "tests" / "servers" / script)]
    return argv if transport == "stdio" else [*argv, transport, "0"]


class LiveServer:
    """A fresh HTTP or SSE server for one run (the reference server keeps per-session state)."""

    def __init__(self, server: str, transport: str) -> None:
        self.proc = Background(server_command(server, transport))
        port = listening(self.proc, timeout=READY_TIMEOUT)
        self.url = f"http://127.0.0.1:{port}/{'sse' if transport == 'sse' else 'mcp'}"

    def __enter__(self) -> LiveServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.proc.kill()


# -- running a driver --------------------------------------------------------------------


@dataclass
class Run:
    """One driver run: what the client observed, and what was around it."""

    observed: dict[str, Any]
    stderr: str
    code: int
    replay_output: str = ""
    misses: list[str] = field(default_factory=list)
    #: the tools the replay said it cannot show the legacy behaviour of (its log)
    announced: list[str] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        """The client could not connect, or connected and had every step refused (a
        modern-only client that adopts 2026-07-28 without a probe, on a legacy server)."""
        if self.observed.get("stage") == "connect":
            return True
        return all(failed_step(self.observed.get(step)) for step in STEPS)

    @property
    def error(self) -> str:
        if "error" in self.observed:
            return str(self.observed["error"])
        errors = [self.observed.get(step) for step in STEPS if failed_step(self.observed.get(step))]
        return str(errors[0]["error"]) if errors and self.refused else ""


def drive(
    client: str, server: str, transport: str, where: list[str], home: Path, steps: str = ""
) -> Run:
    """CLIENT's driver run against WHERE; ``steps``: the session's steps (all when empty)."""
    argv = [*driver(client), server, transport, *where]
    env = {**os.environ, "CASSETTE_MATRIX_HOME": str(home), "CASSETTE_MATRIX_STEPS": steps}
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
            env=env,
            cwd=home,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{client} did not finish in {RUN_TIMEOUT}s; stderr: {exc.stderr!r}")
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        pytest.fail(f"{client} printed no JSON (exit {proc.returncode}); stderr:\n{proc.stderr}")
    return Run(json.loads(lines[-1]), proc.stderr, proc.returncode)


def live(client: str, server: str, transport: str, home: Path, steps: str = "") -> Run:
    if transport == "stdio":
        command = server_command(server, transport)
        return drive(client, server, transport, command, home, steps)
    with LiveServer(server, transport) as up:
        return drive(client, server, transport, [up.url], home, steps)


@dataclass
class Recording:
    tape: Path
    run: Run
    sessions: bool  # one tape per client session (the Inspector over stdio)


#: The variants every recording gets (``cassette variant --as``), so that one cassette
#: serves the clients a live server answers differently: legacy-only clients of a
#: 2026-07-28 recording, and the Inspector, which declares roots only (docs/matching.md).
VARIANTS = ("legacy", "inspector")
#: and, in the full run, the clients people run: the agents' profiles, and ``bare`` for
#: the clients that declare nothing (langchain, pydantic-ai), so that each is answered
#: from a session of its own capabilities (the default run's recordings skip them: each
#: variant is one more live run)
FULL_VARIANTS = ("claude-code", "gemini-cli", "bare") if FULL else ()


def record(
    client: str, server: str, transport: str, home: Path, *, plain: bool = False, steps: str = ""
) -> Recording:
    tape = home / f"{server}-{transport}-{client}.jsonl"
    per_step = client == "inspector"
    sessions = ["--sessions", str(home)] if per_step else []
    base = [PY, "-m", "cassette", "record", "-o", str(tape), *sessions]
    if transport == "stdio":
        command = [*base, "--", *server_command(server, "stdio")]
        run = drive(client, server, transport, command, home, steps)
    else:
        with LiveServer(server, transport) as up:
            kind = ["--transport", "sse"] if transport == "sse" else []
            proxy = Background([*base, *kind, "--upstream", up.url, "--port", "0"])
            with proxy:
                url = proxy.wait_for(r"point your client at (http://\S+)", READY_TIMEOUT).group(1)
                run = drive(client, server, transport, [url], home, steps)
                proxy.stop(signal.SIGINT)
    kept = _kept(tape)
    if not (plain or per_step or run.refused) and kept == tape:
        add_variants(tape, server, transport)
    return Recording(kept, run, per_step)


def add_variants(tape: Path, server: str, transport: str) -> None:
    """``cassette variant TAPE --as legacy --as inspector`` against a fresh server (the
    command the header recorded, or a new HTTP server's URL), with ``--answers``: how the
    drivers answer the server's questions (session.json), which a 2026-07-28 recording
    may not hold (fastmcp cannot ask a 2026-07-28 client anything)."""
    answers = tape.with_name(tape.name + ".answers.json")
    answers.write_text(json.dumps(session_answers(server)), "utf-8")
    argv = [PY, "-m", "cassette", "variant", str(tape), "--answers", str(answers)]
    for name in (*VARIANTS, *FULL_VARIANTS):
        argv += ["--as", name]
    if transport == "stdio":
        _variant_run(argv)
        return
    with LiveServer(server, transport) as up:
        _variant_run([*argv, "--upstream", up.url])


def session_answers(server: str) -> dict[str, Any]:
    """The results every driver gives the server's questions (tests/clients/session.json)."""
    spec = json.loads((CLIENTS_DIR / "session.json").read_text("utf-8"))
    given = spec["answers"]
    return {
        "sampling/createMessage": given["sampling"],
        "roots/list": {"roots": given["roots"]},
        "elicitation/create": spec["servers"][server]["elicitation_answer"],
    }


def _variant_run(argv: list[str]) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)
    assert proc.returncode == 0, f"cassette variant failed:\n{proc.stderr}"


def _kept(tape: Path) -> Path:
    """Where the recorder kept the session: a recording without one successful answer (a
    client the live server refused) is kept as ``TAPE.failed``, so that no replay takes it
    for a cassette by accident (issue 17); a cell replays it by that name on purpose."""
    failed = tape.with_name(tape.name + ".failed")
    return failed if not tape.exists() and failed.exists() else tape


def replay(
    client: str, server: str, transport: str, rec: Recording, home: Path, steps: str = ""
) -> Run:
    report = home / f"report-{client}.jsonl"
    log = home / f"replay-{client}.log"
    extra = ["--report", str(report), "--log", str(log)]
    extra += ["--sessions", str(home)] if rec.sessions else []
    command = replay_command(rec.tape, *extra)
    output = ""
    if transport == "stdio":
        run = drive(client, server, transport, command, home, steps)
    else:
        front = Background([*command, "--front", transport, "--port", "0"], env=OFFLINE_ENV)
        with front:
            url = front.wait_for(r"serving on (http://\S+)", READY_TIMEOUT).group(1)
            run = drive(client, server, transport, [url], home, steps)
            front.stop()
        output = front.output()
    run.replay_output = output
    if report.exists():
        for line in report.read_text("utf-8").splitlines():
            fact = json.loads(line)
            if fact.get("event") == "miss":
                run.misses.append(str(fact.get("text", "")).splitlines()[0])
    if log.exists():
        text = log.read_text("utf-8")
        told = re.findall(rf"tools/call (\S+): this tool's [^:(]*{ANNOUNCED}", text)
        run.announced = sorted(set(told))
    return run


# -- the cells ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    server: str
    transport: str
    recorder: str
    replayer: str
    #: recorded without variants: the replay serves the client by the cross-era rules alone
    plain: bool = False

    @property
    def steps(self) -> str:
        """The session's steps: the plain-recording family's short one, else all."""
        return TOOLS_STEPS if self.recorder == TOOLS_RECORDER else ""

    @property
    def id(self) -> str:
        plain = "-plain" if self.plain else ""
        return f"{self.server}-{self.transport}-{self.recorder}-to-{self.replayer}{plain}"


def all_cells() -> Iterator[Cell]:
    for server in SERVERS:
        for transport in TRANSPORTS:
            for recorder in RECORDERS:
                for replayer in CLIENTS:
                    yield Cell(server, transport, recorder, replayer)
            yield Cell(server, transport, "inspector", "inspector")
            for replayer in APPS:
                yield Cell(server, transport, "py2-auto", replayer)
    yield from plain_cells()


def tools_cells() -> Iterator[Cell]:
    """The plain-recording family (issue 40): a plain recording by a client that lists
    only tools, replayed to the clients people run, over stdio and HTTP."""
    for server in TOOLS_SERVERS:
        for transport in ("stdio", "http"):
            for replayer in TOOLS_REPLAYERS:
                yield Cell(server, transport, TOOLS_RECORDER, replayer, plain=True)


def plain_cells() -> Iterator[Cell]:
    """Done means of the clients people run: a plain recording by the Python SDK 2
    default client of mcp 2.3.0's and fastmcp's servers, replayed with no variant."""
    for server in PLAIN_SERVERS:
        for transport in ("stdio", "http"):
            for replayer in PLAIN_REPLAYERS:
                yield Cell(server, transport, "py2-auto", replayer, plain=True)
    yield from tools_cells()


#: The default run: the pairings issue 14 names, and each server, transport and client at
#: least once, in both directions across eras.
DEFAULT_CELLS = (
    Cell("dual", "stdio", "py2-auto", "py2-auto"),  # one client: the replay works today
    # no variants: a legacy client of a 2026-07-28 recording, by the cross-era rules alone
    Cell("dual", "stdio", "py2-auto", "ts1", plain=True),
    # Done means: the SDK 2 default client's cassette of the dual-era server replays to the
    # TypeScript SDK, the SDK 1.x and the Inspector CLI, over stdio and HTTP.
    Cell("dual", "stdio", "py2-auto", "ts1"),
    Cell("dual", "stdio", "py2-auto", "py1"),
    Cell("dual", "stdio", "py2-auto", "inspector"),
    Cell("dual", "http", "py2-auto", "ts1"),
    Cell("dual", "http", "py2-auto", "py1"),
    Cell("dual", "http", "py2-auto", "inspector"),
    # Done means: the TypeScript client's progress callbacks fire on replay over stdio,
    # HTTP and SSE.
    Cell("everything", "stdio", "ts1", "ts1"),
    Cell("everything", "http", "ts1", "ts1"),
    Cell("everything", "sse", "ts1", "ts1"),
    Cell("dual", "stdio", "py2-legacy", "py2-modern"),  # a modern client, a legacy cassette
    Cell("dual", "sse", "py1", "ts2"),
    Cell("everything", "http", "ts2", "py2-legacy"),
    Cell("everything", "stdio", "py2-auto", "py2-modern"),  # refused live, refused on replay
    Cell("fastmcp", "stdio", "fastmcp", "py1"),
    Cell("fastmcp", "http", "py1", "fastmcp"),
    Cell("fastmcp", "sse", "ts2", "py2-auto"),
    # An AI agent, for real (a fake model API): a plain recording of mcp 2.3.0's server by
    # the SDK 2 default client, served to Gemini CLI, which asks for 2025-06-18 (Claude
    # Code's health check and turns: tests/e2e/test_agents.py)
    Cell("mcp23", "stdio", "py2-auto", "gemini-cli", plain=True),
    # The plain-recording family: each replayer once, each server over each transport at
    # least once (the agents, Claude Code's tool list and Gemini CLI's connect-time
    # listings, first of all; server-everything's tool list, which depends on the
    # client's capabilities, to a client of each probed listing key: claude-code, ai-sdk,
    # ts1 through sdk-handlers' probe, which declares roots.listChanged where it does not)
    *(
        Cell(server, transport, TOOLS_RECORDER, replayer, plain=True)
        for server, transport, replayer in (
            ("everything", "stdio", "claude-code"),
            ("mcp23", "stdio", "gemini-cli"),
            ("fastmcp", "http", "inspector"),
            ("mcp23", "http", "fastmcp"),
            ("everything", "http", "langchain"),
            ("everything", "stdio", "ai-sdk"),
            ("everything", "http", "ts1"),
            ("fastmcp", "stdio", "py1"),
        )
    ),
)

#: Cells that fail today, each with the behaviour of issue 14 that it waits for (made from
#: a full run by `python -m tests.e2e.matrix_table --expected build/client-matrix`): under
#: "fail", cells that failed in every run (strict xfails); under "racy", cells that passed
#: in one full run and failed in another, because what the client sees depends on how its
#: reads split the replay's writes (non-strict: a strict mark would make the suite flaky).
_EXPECTED = json.loads(Path(__file__).with_name("client_matrix_expected.json").read_text("utf-8"))
RACY: dict[str, str] = _EXPECTED.get("racy", {})
EXPECTED_FAILURES: dict[str, str] = {**_EXPECTED.get("fail", {}), **RACY}


def params() -> list[Any]:
    chosen = {"plain": plain_cells, "tools": tools_cells}.get(MATRIX)
    cells = list(chosen() if chosen else all_cells() if FULL else DEFAULT_CELLS)
    out = []
    for cell in cells:
        reason = EXPECTED_FAILURES.get(cell.id)
        strict = cell.id not in RACY
        marks = [pytest.mark.xfail(strict=strict, reason=reason)] if reason else []
        out.append(pytest.param(cell, id=cell.id, marks=marks))
    return out


_recordings: dict[tuple[str, str, str, bool], Recording] = {}
_baselines: dict[tuple[str, str, str, str], Run] = {}


def recording(cell: Cell, home: Path) -> Recording:
    key = (cell.server, cell.transport, cell.recorder, cell.plain)
    if key not in _recordings:
        _recordings[key] = record(
            cell.recorder, cell.server, cell.transport, home, plain=cell.plain, steps=cell.steps
        )
    return _recordings[key]


def baseline(cell: Cell, home: Path) -> Run:
    key = (cell.server, cell.transport, cell.replayer, cell.steps)
    if key not in _baselines:
        _baselines[key] = live(cell.replayer, cell.server, cell.transport, home, cell.steps)
    return _baselines[key]


#: (server, transport) pairs whose roots request comes on a timer of the server's own
#: (server-everything: 350 ms after the handshake), whether or not a tool asked: over HTTP,
#: whether a session saw it depends on how long the session lasted, live and at record time
#: alike (a loaded machine stretches a live run past the timer). Over stdio the server also
#: sends it as its input ends, so every session of a client declaring roots sees it and it
#: is compared. The roots tool's answer is compared everywhere, as a step of its own.
TIMED_ROOTS = {("everything", "http")}


def untimed(observed: dict[str, Any], where: tuple[str, str]) -> dict[str, Any]:
    """OBSERVED without the roots requests a server's own timer may or may not have sent."""
    callbacks = observed.get("callbacks")
    if where not in TIMED_ROOTS or not isinstance(callbacks, list):
        return observed
    kept = [c for c in callbacks if not (isinstance(c, dict) and c.get("kind") == "roots")]
    return {**observed, "callbacks": kept}


def differences(
    live_obs: dict[str, Any], replayed: dict[str, Any], where: tuple[str, str] = ("", "")
) -> dict[str, Any]:
    """Each step whose observation differs: {step: {"live": ..., "replay": ...}}; WHERE is
    the cell's (server, transport)."""
    live_obs, replayed = untimed(live_obs, where), untimed(replayed, where)
    keys = sorted(set(live_obs) | set(replayed))
    return {
        k: {"live": live_obs.get(k), "replay": replayed.get(k)}
        for k in keys
        if live_obs.get(k) != replayed.get(k)
    }


def save(cell: Cell, outcome: dict[str, Any]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{cell.id}.json").write_text(
        json.dumps({**cell.__dict__, "id": cell.id, **outcome}, sort_keys=True), "utf-8"
    )


@pytest.mark.parametrize("cell", params())
def test_cell(cell: Cell, tmp_path_factory: pytest.TempPathFactory) -> None:
    home = tmp_path_factory.mktemp(cell.id[:40])
    rec = recording(cell, tmp_path_factory.mktemp("rec"))
    if rec.run.refused and cell.replayer != cell.recorder:
        # What it recorded is the refusal: only the same client replays that meaningfully.
        save(cell, {"status": "n/a", "note": f"{cell.recorder} on {cell.server}"})
        pytest.skip(f"the live server refused {cell.recorder}: {rec.run.error}")
    assert rec.tape.exists(), f"nothing recorded; {cell.recorder} stderr:\n{rec.run.stderr}"
    base = baseline(cell, tmp_path_factory.mktemp("live"))
    replayed = replay(cell.replayer, cell.server, cell.transport, rec, home, cell.steps)
    outcome = {
        "live": base.observed,
        "replay": replayed.observed,
        "live_refused": base.refused,
        "live_error": base.error,
        "replay_refused": replayed.refused,
        "replay_error": replayed.error,
        "misses": replayed.misses,
        "diff": differences(base.observed, replayed.observed, (cell.server, cell.transport)),
        "cannot_tell": cassette_cannot_serve(rec.tape, base.observed.get("protocol")),
        "server": cell.server,
        "announced": replayed.announced,
    }
    status, why = verdict(outcome)
    save(cell, {**outcome, "status": status})
    assert status != "fail", f"{cell.replayer}: {why}: {seen(outcome)}"
