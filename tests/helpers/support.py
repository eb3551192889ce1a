"""Shared helpers for the end-to-end tests: where the real counterparts live, and how to
run the official Python SDK client against a command."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "tests" / "node"
EVERYTHING_JS = (
    NODE_DIR / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)
MODERN_SERVER = ROOT / "tests" / "servers" / "modern_server.py"
PY = sys.executable
T = TypeVar("T")

#: An environment in which no live server could be started: the replay must not need one.
OFFLINE_ENV = {"PATH": "/nonexistent", "NODE_PATH": "/nonexistent"}


def slowdown() -> float:
    """How many times slower than a quiet machine this one runs now (at least 1):
    ``CASSETTE_TEST_SLOWDOWN`` when set, else the load average over the last minute per
    core. Read at each call, so a run that starts beside busy processes catches up."""
    named = os.environ.get("CASSETTE_TEST_SLOWDOWN")
    if named:
        return max(1.0, float(named))
    if sys.platform == "win32":  # no load average there
        return 1.0
    return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def scaled(seconds: float) -> float:
    """A deadline of ``seconds`` on a quiet machine, stretched by ``slowdown()``.

    Every deadline here only keeps a hang from stalling the suite: none is what a test
    asserts. On a shared, loaded machine the same work takes several times as long, so a
    fixed deadline would fail a test for the machine rather than the code; a stretched
    one still ends a real hang."""
    return seconds * slowdown()


def node() -> str:
    """The node executable; the e2e tests need it (CI installs it), so skip only without it."""
    found = shutil.which("node")
    if found is None or not EVERYTHING_JS.exists():
        pytest.skip("node or tests/node/node_modules missing: run `npm ci --prefix tests/node`")
    return found


def everything_command() -> list[str]:
    return [node(), str(EVERYTHING_JS), "stdio"]


def record_command(tape: Path, server: list[str], *extra: str) -> list[str]:
    return [PY, "-m", "cassette", "record", "-o", str(tape), *extra, "--", *server]


def replay_command(tape: Path, *extra: str) -> list[str]:
    return [PY, "-m", "cassette", "replay", str(tape), "-q", *extra]


def cassette_cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m cassette ARGS`` in ``cwd``, stdin closed, no record mode from the
    environment: its exit code and what it printed."""
    env = {k: v for k, v in os.environ.items() if k != "MCP_CASSETTE_MODE"}
    return subprocess.run(
        [PY, "-m", "cassette", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def client_starts(log: Path) -> int:
    """The episode server's starts for the tests' own sessions, from its ``--log``: the
    recorder's probes start it again beside a recording, and it logs those as ``probe``."""
    words = [line.split()[0] for line in log.read_text().splitlines()] if log.exists() else []
    return words.count("start") - words.count("probe")


def session_events(tape: Path | Any) -> list[Any]:
    """A cassette's events without the recorder's probe lines (``meta.probe``), which come
    after the session: what the client's session left."""
    from cassette.store.storage import Cassette

    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    return [e for e in cassette.events if not (getattr(e, "meta", None) or {}).get("probe")]


def run(func: Callable[[], Awaitable[T]], timeout: float = 90) -> T:
    """Run an async scenario with a deadline (``scaled``), so a bug can never hang the
    suite."""

    async def bounded() -> T:
        with anyio.fail_after(scaled(timeout)):
            return await func()

    return anyio.run(bounded)


def probe_log(tape: Path) -> Path:
    """Where a recording of ``tape`` made with ``record_command(tape, server, "--log",
    str(probe_log(tape)))`` says what it printed, the probes' line among it."""
    return tape.with_name(tape.name + ".log")


async def until_probed(tape: Path) -> None:
    """Wait until the recorder of ``tape`` says its probes are done (the ``probed the
    surface`` line in ``probe_log(tape)``, written as soon as they finish), bounded by
    ``scaled(60)``.

    The probes run beside the session and their lines are written after it, and a client
    that closes at once ends the recorder a few seconds later (the Python SDK's stdio
    client does), before a slow server's further starts could answer on a loaded machine.
    A test about what the probes give keeps its session open until they are done, a
    condition, rather than betting that those starts beat the client's exit."""
    log = probe_log(tape)
    with anyio.fail_after(scaled(60)):
        # another process writes the file: nothing here can signal, so it is polled
        while not await _said_probed(log):  # noqa: ASYNC110
            await anyio.sleep(0.05)


async def _said_probed(log: Path) -> bool:
    path = anyio.Path(log)
    return await path.exists() and b"probed the surface:" in await path.read_bytes()


def stdio_params(command: list[str], env: dict[str, str] | None = None) -> Any:
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=command[0], args=command[1:], env=env)


def dump(value: Any) -> Any:
    """A pydantic result as plain data, for comparing a live run with a replay."""
    return value.model_dump(mode="json", by_alias=True) if hasattr(value, "model_dump") else value


async def everything_calls(client: Any, label: str) -> dict[str, Any]:
    """The scripted part of a server-everything session, on an SDK ``Client`` or an
    initialized ``ClientSession`` (same methods): lists, tools (one twice, one with
    progress), a read and a prompt, as plain data for comparing a live run with a replay."""
    progress: list[float] = []

    async def on_progress(value: float, _total: float | None, _message: str | None) -> None:
        progress.append(value)

    out: dict[str, Any] = {"tools": [t.name for t in (await client.list_tools()).tools]}
    resources = (await client.list_resources()).resources
    out["resources"] = [str(r.uri) for r in resources]
    out["echo"] = dump(await client.call_tool("echo", {"message": label}))
    out["echo_again"] = dump(await client.call_tool("echo", {"message": label}))
    out["sum"] = dump(await client.call_tool("get-sum", {"a": 1, "b": 2}))
    out["long"] = dump(
        await client.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.2, "steps": 2},
            progress_callback=on_progress,
        )
    )
    out["read"] = dump(await client.read_resource(resources[0].uri))
    out["prompt"] = dump(await client.get_prompt("simple-prompt"))
    out["progress"] = progress
    return out


RAW_SERVER = ROOT / "tests" / "servers" / "raw_server.py"


def own_group() -> dict[str, Any]:
    """``Popen`` arguments that start a child in a process group of its own, so that
    ``kill_tree`` ends whatever it started too (a recorder's server, say)."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def kill_tree(proc: subprocess.Popen[bytes]) -> None:
    """Kill a child started with ``own_group`` and everything it started, then reap it."""
    if sys.platform == "win32":
        subprocess.run(
            ["taskkill", "/F", "/T", "/PID", str(proc.pid)], capture_output=True, check=False
        )
    else:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=scaled(10))


class LineClient:
    """A stdlib JSON-lines client driving a subprocess, every read bounded by a deadline."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None, **kwargs: Any) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=None if env is None else {**os.environ, **env},
            **own_group(),
            **kwargs,
        )
        self._buffer = b""
        self._next_id = 0
        self._chunks: queue.Queue[bytes] = queue.Queue()
        if sys.platform == "win32":  # select() takes sockets only there: a thread reads
            threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while chunk := os.read(fd, 65536):
            self._chunks.put(chunk)
        self._chunks.put(b"")

    def _chunk(self, timeout: float) -> bytes | None:
        """The next chunk of the client's stdout (``b""`` at its end), ``None`` if none
        came within ``timeout`` seconds."""
        import selectors

        if sys.platform == "win32":
            try:
                return self._chunks.get(timeout=timeout)
            except queue.Empty:
                return None
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            if not sel.select(timeout):
                return None
        return os.read(fd, 65536)

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        data = message if isinstance(message, bytes) else (json.dumps(message) + "\n").encode()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def readline(self, timeout: float = 20.0) -> bytes:
        import time

        timeout = scaled(timeout)
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            chunk = self._chunk(left) if left > 0 else None
            if chunk is None:
                raise TimeoutError(f"no line within {timeout}s; got {self._buffer!r}")
            if not chunk:
                rest, self._buffer = self._buffer, b""
                return rest
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line + b"\n"

    def receive(self, timeout: float = 20.0) -> dict[str, Any]:
        """The next JSON line (lines that are not JSON, like a server's banner, are skipped)."""
        while True:
            line = self.readline(timeout)
            if not line:
                raise EOFError("the server closed its stdout")
            try:
                return json.loads(line)
            except ValueError:
                continue

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            reply = self.receive()
            if reply.get("id") == self._next_id and "method" not in reply:
                return reply

    def initialize(self) -> dict[str, Any]:
        reply = self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "line-client", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def finish(self, timeout: float = 30.0) -> tuple[int, str]:
        """Close stdin, wait for the exit; returns (code, stderr)."""
        assert self.proc.stdin is not None
        assert self.proc.stderr is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=scaled(timeout))
        err = self.proc.stderr.read()
        return self.proc.returncode, err.decode("utf-8", "replace")

    def kill_group(self) -> None:
        kill_tree(self.proc)


class Background:
    """A long-running process (a server, a proxy, an HTTP replay) whose output we watch.

    ``wait_for(pattern)`` returns the first regex match in its combined output, bounded by
    a deadline: readiness is a line the program prints, never a sleep.
    """

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=None if env is None else {**os.environ, **env},
            **own_group(),
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self._queue.put(raw.decode("utf-8", "replace"))
        self._queue.put(None)

    def wait_for(self, pattern: str, timeout: float = 30.0) -> Any:
        import queue
        import re
        import time

        regex = re.compile(pattern)
        for line in self.lines:
            if match := regex.search(line):
                return match
        timeout = scaled(timeout)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                line = self._queue.get(timeout=max(left, 0.001))
            except queue.Empty:
                raise TimeoutError(
                    f"{pattern!r} not seen in {timeout}s:\n{self.output()}"
                ) from None
            if line is None:
                raise EOFError(f"exited ({self.proc.wait()}) before {pattern!r}:\n{self.output()}")
            self.lines.append(line)
            if match := regex.search(line):
                return match

    def output(self) -> str:
        """What it printed so far, including lines not yet waited for."""
        while True:
            try:
                line = self._queue.get_nowait()
            except queue.Empty:
                break
            if line is None:
                self._queue.put(None)  # the end stays for whoever waits next
                break
            self.lines.append(line)
        return "".join(self.lines)

    def stop(self, sig: int | None = None, timeout: float = 20.0) -> int:
        """Signal the process (SIGTERM by default) and wait; returns its exit code."""
        import signal as signals

        if self.proc.poll() is None:
            self.proc.send_signal(sig if sig is not None else signals.SIGTERM)
        try:
            code = self.proc.wait(timeout=scaled(timeout))
        finally:
            self.kill()
        self._thread.join(timeout=5)
        while not self._queue.empty():
            line = self._queue.get()
            if line is not None:
                self.lines.append(line)
        return code

    def kill(self) -> None:
        kill_tree(self.proc)

    def __enter__(self) -> Background:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.kill()


#: What a test server started on port 0 prints once it listens, with the port it bound:
#: uvicorn's line, tests/node/port0.mjs's, and the same words from our own small servers.
LISTENING = r"(?:Uvicorn running on http://|listening on )127\.0\.0\.1:(\d+)"
PORT0_JS = NODE_DIR / "port0.mjs"


def listening(server: Background, timeout: float = 30.0) -> int:
    """The port a server started on port 0 says it bound, once it listens.

    A port chosen free beforehand and then handed to a server can be taken by anything
    else on the machine in between (another worker, another run of the suite), so every
    test server binds port 0 itself and reports what it got."""
    try:
        return int(server.wait_for(LISTENING, timeout).group(1))
    except BaseException:
        server.kill()
        raise


def python_server(
    script: Path, kind: str = "http", *args: str, env: dict[str, str] | None = None
) -> tuple[Background, int]:
    """``SCRIPT KIND 0 ARGS...`` (a test server in HTTP or SSE mode), and its port."""
    server = Background([PY, str(script), kind, "0", *args], env=env)
    return server, listening(server)


def everything_server(mode: str) -> tuple[Background, int]:
    """The pinned reference server in ``streamableHttp`` or ``sse`` mode, and its port."""
    server = Background([node(), str(PORT0_JS), str(EVERYTHING_JS), mode])
    return server, listening(server)


@contextlib.contextmanager
def closed_port() -> Iterator[int]:
    """A loopback port that refuses connections for as long as the block runs: bound by
    this process and never listened on, so nothing else can take it meanwhile."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


@contextlib.contextmanager
def recording_over_http(
    script: Path, tape: Path, *extra: str
) -> Iterator[tuple[str, str, Background]]:
    """A Python test server (``SCRIPT http 0``) on a port of its own, and ``cassette record
    --upstream`` (with ``extra`` options) in front of it: yields the server's URL, the URL a
    client points at, and the recorder, which the caller stops to end the recording. The
    server keeps running until the block ends, for a live run beside the recorded one."""
    server, port = python_server(script)
    with server:
        upstream = f"http://127.0.0.1:{port}/mcp"
        record = [PY, "-m", "cassette", "record", "-o", str(tape), *extra]
        with Background([*record, "--upstream", upstream, "--port", "0"]) as proxy:
            url = proxy.wait_for(r"point your client at (http://\S+)").group(1)
            yield upstream, url, proxy


#: Why the HTML timeline tests skip without a browser: the command that installs it, which
#: scripts/test.sh runs itself where it may (root with apt).
NO_CHROMIUM = (
    "chromium or chromedriver is not installed: as root, "
    "`apt-get install chromium chromium-driver` (Debian's packages)"
)

#: Headless Chromium as the HTML tests run it: no sandbox (root in CI), and no network of
#: its own (without these it keeps dialling Google's hosts, which CI cannot reach).
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1200,900",
)


def front_app(
    app_class: Any,
    recording: Any,
    strategy: str = "default",
    *,
    max_body: int | None = None,
    **policy: Any,
) -> Any:
    """A replay front's ASGI app mounted in-process, as ``cassette.runtime.replay_sessions``
    documents it; ``policy`` are ``DeliveryPolicy`` fields (``on_miss``, ``answer_timeout``).
    The app's ``pool`` is kept on it, for the end-of-run ``result()``."""
    from cassette.runtime import DeliveryPolicy, replay_sessions

    pool = replay_sessions(recording, strategy, policy=DeliveryPolicy(**policy))
    options = {} if max_body is None else {"max_body": max_body}
    app = app_class(pool, **options)
    app.pool = pool
    return app
