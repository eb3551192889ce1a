"""Fault plans, seen by the official SDK clients as they see the real faults.

A session with the pinned ``server-everything`` is recorded once (through ``cassette
record``, with the Python SDK). Then each fault kind is laid over its replay with
``cassette replay --faults`` and met by the official Python SDK client and the official
TypeScript SDK client, over stdio and over streamable HTTP: a timeout times out, an
error reaches the caller with its code, message and data, a malformed frame is the
client's parse failure, a disconnect is the client's connection error, an exit also
ends the process with its code, and a delay answers late but answers. Every plan faults
only the first ``echo`` call, and each test then calls again: the retry gets the
recorded answer, because a faulted request leaves its recording unplayed.

Nothing here waits on the clock to pass: timeouts are far from the faults' delays (a
0.5 s client timeout against a 5 s delay; 60 s against none), so only a machine
stalled for seconds could change an outcome.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.helpers.support import (
    NODE_DIR,
    PY,
    Background,
    everything_command,
    node,
    run,
    stdio_params,
)

pytestmark = pytest.mark.e2e

TS_FAULTS = NODE_DIR / "ts_faults.mjs"
ECHO = {"message": "hello faults"}
ECHOED = "Echo: hello faults"
SHORT = 0.5  # seconds: a client timeout far below the delay
DELAY = 5.0
LONG = 60.0
MCP = "MCP error"

PLANS: dict[str, str] = {
    "delay": f"seconds = {DELAY}",
    "timeout": "",
    "error": 'code = -32050\nmessage = "quota exceeded"\ndata = { retryAfter = 7 }',
    "malformed": "",
    "disconnect": "",
    "exit": "exit-code = 3",
}


@pytest.fixture(scope="module")
def tape(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """server-everything, recorded: two echo calls and a sum."""
    from mcp import Client

    path = tmp_path_factory.mktemp("faults") / "everything.jsonl"
    command = [PY, "-m", "cassette", "record", "-o", str(path), "--", *everything_command()]

    async def record() -> None:
        async with Client(stdio_params(command)) as client:
            for _ in range(2):
                await client.call_tool("echo", ECHO)
            await client.call_tool("get-sum", {"a": 1, "b": 2})

    run(record)
    return path


def plan_file(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"{kind}.toml"
    path.write_text(
        f'[[fault]]\nkind = "{kind}"\nmethod = "tools/call"\nname = "echo"\nnth = 1\n'
        + PLANS[kind]
        + "\n",
        encoding="utf-8",
    )
    return path


def replay_argv(tape: Path, plan: Path, *extra: str) -> list[str]:
    return [PY, "-m", "cassette", "replay", str(tape), "-q", "--faults", str(plan), *extra]


class HttpReplay:
    """``cassette replay --front http --faults`` in the background."""

    def __init__(self, tape: Path, plan: Path) -> None:
        self.process = Background(replay_argv(tape, plan, "--front", "http"))
        self.url = self.process.wait_for(r"serving on (http://\S+)").group(1)

    def stop(self, kind: str) -> int:
        """The exit code: an ``exit`` fault's own (the process ends by itself), else
        the one a SIGTERM gets."""
        if kind == "exit":
            return self.process.proc.wait(timeout=LONG)
        return self.process.stop()


# -- the official Python SDK ------------------------------------------------------------------


async def python_calls(target: Any, first_timeout: float, outcomes: list[Any]) -> None:
    """Two echo calls (the first with ``first_timeout``): each's result or the error it
    raised, in ``outcomes``."""
    from mcp import Client

    async with Client(target) as client:
        for seconds in (first_timeout, LONG):
            try:
                with anyio.fail_after(LONG + DELAY):
                    result = await client.session.call_tool(
                        "echo", ECHO, read_timeout_seconds=seconds
                    )
                outcomes.append(result.content[0].text)
            except Exception as exc:
                outcomes.append(exc)


def refused(group: BaseExceptionGroup[Any]) -> bool:
    """The SDK's HTTP client met a refused connection: it raises httpx's ``ConnectError``
    from its own task group, not from the call (mcp 2.x runs each POST there)."""
    import httpx2

    rest = group.split(httpx2.ConnectError)[1]
    return rest is None


def python_outcomes(target: Any, timeout: float) -> list[Any]:
    outcomes: list[Any] = []
    try:
        run(lambda: python_calls(target, timeout, outcomes), timeout=3 * LONG)
    except BaseExceptionGroup as group:  # the client's own task group
        # Only once the first call has met its fault, and only a server that is gone: a
        # retry after an HTTP exit finds nothing listening, as after a real crash.
        if len(outcomes) == 1 and refused(group):
            return [*outcomes, group]
        pytest.fail(f"the client failed outside the calls: {group!r}")
    return outcomes


def mcp_error(outcome: Any) -> tuple[int, str, Any]:
    from mcp import MCPError

    assert isinstance(outcome, MCPError), f"expected the client's MCPError, got {outcome!r}"
    return outcome.error.code, outcome.error.message, outcome.error.data


def assert_python_sees(kind: str, outcomes: list[Any], *, http: bool) -> None:
    from mcp.types import CONNECTION_CLOSED, PARSE_ERROR, REQUEST_TIMEOUT

    first, retry = outcomes
    if kind in ("delay", "timeout"):
        assert mcp_error(first)[0] == REQUEST_TIMEOUT
    elif kind == "error":
        assert mcp_error(first) == (-32050, "quota exceeded", {"retryAfter": 7})
    elif kind == "malformed":
        code, message, _ = mcp_error(first)
        # HTTP: the SDK answers the caller with its parse error; stdio: the line goes to
        # the message handler and the call waits until its timeout, as with a live server.
        assert (code, "Failed to parse JSON response" in message) == (
            (PARSE_ERROR, True) if http else (REQUEST_TIMEOUT, False)
        )
    else:  # disconnect, exit
        code, message, _ = mcp_error(first)
        assert code == CONNECTION_CLOSED, message
    if kind == "exit" and http and isinstance(retry, BaseExceptionGroup):
        # The replay process has exited: the retry's connection is refused. Before it has
        # finished exiting the retry's connection is cut instead (the branch below). A
        # crashing live server gives either, by the same race.
        assert refused(retry)
    elif kind == "exit" or (kind == "disconnect" and not http):
        assert mcp_error(retry)[0] == CONNECTION_CLOSED  # the server is gone
    else:
        assert retry == ECHOED  # the faulted call left its recording unplayed


@pytest.mark.parametrize("kind", list(PLANS))
def test_python_sdk_stdio_sees_each_fault(kind: str, tape: Path, tmp_path: Path) -> None:
    argv = replay_argv(tape, plan_file(tmp_path, kind))
    timeout = SHORT if kind in ("delay", "timeout", "malformed") else LONG
    assert_python_sees(kind, python_outcomes(stdio_params(argv), timeout), http=False)


@pytest.mark.parametrize("kind", list(PLANS))
def test_python_sdk_http_sees_each_fault(kind: str, tape: Path, tmp_path: Path) -> None:
    replay = HttpReplay(tape, plan_file(tmp_path, kind))
    try:
        timeout = SHORT if kind in ("delay", "timeout") else LONG
        assert_python_sees(kind, python_outcomes(replay.url, timeout), http=True)
    finally:
        code = replay.stop(kind)
    replay.process.wait_for(f'injected {kind}.* on tools/call "echo"')
    if kind == "exit":
        assert code == 3, replay.process.output()


def test_a_delay_answers_late_but_answers(tape: Path, tmp_path: Path) -> None:
    """With a client timeout far above the delay the call succeeds; an undelayed call sent
    meanwhile is answered first (a delay holds back one answer, not the session)."""
    from mcp import Client

    argv = replay_argv(tape, plan_file(tmp_path, "delay"))
    order: list[str] = []

    async def scenario() -> None:
        async with Client(stdio_params(argv)) as client:

            async def echo() -> None:
                result = await client.call_tool("echo", ECHO)
                order.append(result.content[0].text)

            async with anyio.create_task_group() as tg:
                tg.start_soon(echo)
                result = await client.call_tool("get-sum", {"a": 1, "b": 2})
                order.append(result.content[0].text)

    run(scenario, timeout=LONG)
    assert order == ["The sum of 1 and 2 is 3.", ECHOED]


# -- the official TypeScript SDK ----------------------------------------------------------------


def ts_outcomes(kind: str, target: list[str]) -> dict[str, Any]:
    timeout = SHORT if kind in ("delay", "timeout", "malformed", "disconnect", "exit") else LONG
    steps = [
        {"tool": "echo", "args": ECHO, "timeoutMs": int(timeout * 1000)},
        {"tool": "echo", "args": ECHO, "timeoutMs": int(LONG * 1000)},
    ]
    argv = [node(), str(TS_FAULTS), json.dumps(steps), *target]
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=3 * LONG, cwd=NODE_DIR, check=False
    )
    assert proc.returncode == 0, f"{argv}: {proc.stderr}"
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def assert_ts_sees(kind: str, out: dict[str, Any], *, http: bool) -> None:
    first, retry = out["steps"]
    errors = out["transportErrors"]
    timed_out = {
        "name": "McpError",
        "code": -32001,
        "message": "MCP error -32001: Request timed out",
    }
    closed = {"name": "McpError", "code": -32000, "message": "MCP error -32000: Connection closed"}
    if kind in ("delay", "timeout"):
        assert first == {"error": timed_out}
    elif kind == "error":
        assert first == {"error": {**first["error"], "code": -32050}}
        assert "quota exceeded" in first["error"]["message"]
    elif kind == "malformed":
        # HTTP: the body fails to parse and the call rejects with it; stdio: the line is
        # reported through onerror and the call times out.
        expected = "SyntaxError" if http else "McpError"
        assert first["error"]["name"] == expected
        assert any("JSON" in e for e in errors), errors
    elif http:  # disconnect, exit: the TypeScript client reports the cut stream, then times out
        assert first == {"error": timed_out}
        assert any("SSE stream disconnected" in e for e in errors), errors
    else:
        assert first == {"error": closed}
    if kind == "exit" or (kind == "disconnect" and not http):
        assert "error" in retry
    else:
        assert retry == {"ok": {"content": [{"type": "text", "text": ECHOED}]}}


@pytest.mark.parametrize("kind", list(PLANS))
def test_typescript_sdk_stdio_sees_each_fault(kind: str, tape: Path, tmp_path: Path) -> None:
    argv = replay_argv(tape, plan_file(tmp_path, kind))
    assert_ts_sees(kind, ts_outcomes(kind, argv), http=False)


@pytest.mark.parametrize("kind", list(PLANS))
def test_typescript_sdk_http_sees_each_fault(kind: str, tape: Path, tmp_path: Path) -> None:
    replay = HttpReplay(tape, plan_file(tmp_path, kind))
    try:
        out = ts_outcomes(kind, ["--url", replay.url])
    finally:
        code = replay.stop(kind)
    assert_ts_sees(kind, out, http=True)
    if kind == "exit":
        assert code == 3, replay.process.output()


def notified_early(tape: Path, folder: Path) -> Path:
    """``tape`` as a recording where the server's ``notifications/tools/list_changed``
    (server-everything sends it once initialized) came before the client's first call,
    not after it: which one a recording holds is a race between the two processes."""
    lines = tape.read_bytes().splitlines(keepends=True)
    notice = next((line for line in lines if b"notifications/tools/list_changed" in line), None)
    if notice is None:
        pytest.skip("this server-everything sent no tools/list_changed")
    lines.remove(notice)
    after = next(i for i, line in enumerate(lines) if b"notifications/initialized" in line)
    lines.insert(after + 1, notice)
    early = folder / "notified-early.jsonl"
    early.write_bytes(b"".join(lines))
    return early


@pytest.mark.parametrize("order", ["as recorded", "notified early"])
def test_an_exit_ends_the_stdio_replay_with_its_code(
    tape: Path, tmp_path: Path, order: str
) -> None:
    """What a supervising process sees: the replay exits with the plan's code, and the
    faulted call gets no answer. A server notification the recording holds before that
    call is replayed first (faithfully), so only answers are ruled out: expecting end of
    output at once failed whenever the recording had the notification early."""
    from tests.helpers.support import LineClient

    served = tape if order == "as recorded" else notified_early(tape, tmp_path)
    client = LineClient(replay_argv(served, plan_file(tmp_path, "exit")))
    assert "result" in client.initialize()
    call = {"name": "echo", "arguments": ECHO}
    client.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
    seen = []
    while line := client.readline():  # until stdout closes
        seen.append(json.loads(line))
    assert all("method" in message and "id" not in message for message in seen), seen
    assert client.proc.wait(timeout=LONG) == 3
    assert client.proc.stderr is not None
    assert b"exit with code 3" in client.proc.stderr.read()


def test_the_cassette_is_never_modified(tape: Path, tmp_path: Path) -> None:
    before = tape.read_bytes()
    for kind in ("error", "timeout"):
        outcomes = python_outcomes(
            stdio_params(replay_argv(tape, plan_file(tmp_path, kind))), SHORT
        )
        assert outcomes[1] == ECHOED
    assert tape.read_bytes() == before


def test_a_bad_plan_is_one_line_naming_file_and_line(tape: Path, tmp_path: Path) -> None:
    plan = tmp_path / "bad.toml"
    plan.write_text('seed = 1\n\n[[fault]]\nkind = "timeout"\n\n[[fault]]\nkind = "tiemout"\n')
    proc = subprocess.run(
        replay_argv(tape, plan), capture_output=True, text=True, timeout=LONG, check=False
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines == [
        f"cassette: error: {plan}:6: fault 2: unknown fault kind 'tiemout' (did you mean "
        "timeout?); choose one of: "
        "delay, timeout, error, malformed, disconnect, exit"
    ]
    assert "Traceback" not in proc.stderr


def test_show_lists_the_recorded_requests_a_plan_would_fault(tape: Path, tmp_path: Path) -> None:
    plan = plan_file(tmp_path, "error")
    argv = [PY, "-m", "cassette", "show", str(tape), "--faults", str(plan), "--format", "json"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=LONG, check=False)
    assert proc.returncode == 0, proc.stderr
    hits = json.loads(proc.stdout)["hits"]
    lines = tape.read_text(encoding="utf-8").splitlines()
    assert len(hits) == 1  # nth = 1: the first echo call only
    recorded = json.loads(lines[hits[0]["line"] - 1])["message"]
    assert recorded["params"] == {"name": "echo", "arguments": ECHO}
    assert hits[0]["rule"] == 1
    assert hits[0]["fault"].startswith("error -32050")


# -- other responders and fronts: the overlay is the runtime's, not a front's ----------------


def test_a_plan_over_a_mock_manifest(tmp_path: Path) -> None:
    """The same overlay over a mock: the first echo errs, the next is the manifest's."""
    from tests.helpers.support import ROOT

    manifest = ROOT / "examples" / "everything.mock.toml"
    argv = [PY, "-m", "cassette", "mock", str(manifest), "-q"]
    argv += ["--faults", str(plan_file(tmp_path, "error"))]
    args = {"message": "hello from a cassette"}

    async def calls() -> list[Any]:
        from mcp import Client, MCPError

        out: list[Any] = []
        async with Client(stdio_params(argv)) as client:
            for _ in range(2):
                try:
                    out.append((await client.call_tool("echo", args)).content[0].text)
                except MCPError as exc:
                    out.append(exc.error.code)
        return out

    assert run(calls, timeout=LONG) == [-32050, "Echo: hello from a cassette"]


def test_a_plan_over_the_sse_front(tape: Path, tmp_path: Path) -> None:
    """Legacy HTTP+SSE: the error reaches the Python SDK's SSE client, the retry replays."""
    process = Background(replay_argv(tape, plan_file(tmp_path, "error"), "--front", "sse"))
    url = process.wait_for(r"serving on (http://\S+)").group(1)

    async def calls() -> list[Any]:
        from mcp import ClientSession, MCPError
        from mcp.client.sse import sse_client

        out: list[Any] = []
        async with sse_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(2):
                try:
                    out.append((await session.call_tool("echo", ECHO)).content[0].text)
                except MCPError as exc:
                    out.append((exc.error.code, exc.error.data))
        return out

    try:
        assert run(calls, timeout=LONG) == [(-32050, {"retryAfter": 7}), ECHOED]
    finally:
        process.stop()
