"""What every Python driver of the cross-client matrix shares (stdlib only: each driver runs
in its own client's virtual environment).

A driver is called as

    DRIVER [--mode MODE] SERVER_KIND stdio COMMAND [ARG...]
    DRIVER [--mode MODE] SERVER_KIND http URL
    DRIVER [--mode MODE] SERVER_KIND sse URL

runs the scripted session of session.json for SERVER_KIND (everything, dual, fastmcp), and
prints ONE JSON object: what the client observed, normalised by ``normalise``. A failure to
connect prints ``{"error": ..., "stage": "connect"}`` and exits 1; a failed step is recorded
in its place as ``{"error": MESSAGE}`` and the session goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

SESSION = json.loads((Path(__file__).resolve().parent / "session.json").read_text("utf-8"))

#: Keys dropped wherever they occur, and why:
#: - ``progressToken``: a client-chosen id, random in some clients;
#: - ``requestId`` / ``relatedRequestId``: JSON-RPC ids the client or server picked;
#: - ``timestamp``: wall-clock time.
DROPPED_KEYS = frozenset({"progressToken", "requestId", "relatedRequestId", "timestamp"})

#: Per-step deadline in seconds: a replay that never answers fails the step, not the run.
STEP_TIMEOUT = 20.0
#: The steps to run, when ``CASSETTE_MATRIX_STEPS`` names them (comma-separated); every
#: step otherwise. A family of the matrix runs a shorter session: an agent framework's
#: connects, lists tools and calls them (tests/e2e/test_client_matrix.py, ``TOOLS_STEPS``).
ONLY = frozenset(filter(None, os.environ.get("CASSETTE_MATRIX_STEPS", "").split(",")))


def normalise(value: Any) -> Any:
    """Plain JSON with DROPPED_KEYS removed and ``None`` members left out (clients differ in
    whether they write an absent optional member as null). Pydantic models (the Python SDKs'
    results) are dumped by their wire names first."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, dict):
        return {
            k: normalise(v) for k, v in value.items() if k not in DROPPED_KEYS and v is not None
        }
    if isinstance(value, list | tuple):
        return [normalise(v) for v in value]
    return value


def one_line(exc: BaseException) -> str:
    """An exception as the client reported it: its type and first line (groups unwrapped)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


class Target:
    def __init__(self, kind: str, transport: str, where: list[str], mode: str | None) -> None:
        self.kind = kind
        self.transport = transport
        self.where = where
        self.mode = mode
        self.spec: dict[str, Any] = SESSION["servers"][kind]
        self.answers: dict[str, Any] = SESSION["answers"]

    @property
    def url(self) -> str:
        return self.where[0]


def parse_args(argv: list[str] | None = None) -> Target:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", default=None, help="the client's connect mode, if it has one")
    parser.add_argument("kind", choices=sorted(SESSION["servers"]))
    parser.add_argument("transport", choices=["stdio", "http", "sse"])
    parser.add_argument("where", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if not args.where:
        parser.error("a server command (stdio) or URL (http, sse) is required")
    return Target(args.kind, args.transport, args.where, args.mode)


class Observer:
    """Collects the session's observations in the order the steps ran."""

    def __init__(self) -> None:
        self.out: dict[str, Any] = {}
        self.callbacks: list[dict[str, Any]] = []
        self.logs: list[dict[str, Any]] = []
        self.connected = False

    async def step(self, name: str, action: Callable[[], Awaitable[Any]]) -> Any:
        """Run one step and note what it observed (a step ``ONLY`` leaves out: nothing)."""
        import anyio

        if ONLY and name not in ONLY:
            return None

        try:
            with anyio.fail_after(STEP_TIMEOUT):
                value = await action()
        except Exception as exc:
            self.out[name] = {"error": one_line(exc)}
            return None
        self.out[name] = normalise(value)
        return value

    def finish(self) -> dict[str, Any]:
        out = {**self.out, "callbacks": sorted_callbacks(self.callbacks), "logs": self.logs}
        if "progress_updates" in out:
            out["progress_updates"] = before_the_last(out["progress_updates"])
        return normalise(out)


def sorted_callbacks(callbacks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Callbacks in a fixed order, roots requests counted once.

    server-everything asks for roots on a 350 ms timer after the handshake, so where that
    request falls among the others varies from run to run; and when its roots tool is called
    while the timer's request is still unanswered it asks a second time, so a live run sees
    one or two roots requests by timing alone (CI once saw the recording and the live run
    differ so). The roots request carries no params: one stands for any number."""
    plain = normalise(callbacks)
    roots = [c for c in plain if c.get("kind") == "roots"][:1]
    others = [c for c in plain if c.get("kind") != "roots"]
    return sorted(others + roots, key=lambda c: json.dumps(c, sort_keys=True))


def before_the_last(updates: list[list[Any]]) -> list[list[Any]]:
    """Progress updates without the final one (progress == total): servers write it right
    before the response, and whether a client handles it before the response is a race in
    the live run too (the TypeScript SDKs often drop it). The earlier ones are not racy."""
    return [u for u in updates if u[1] is None or u[0] < u[1]]


def emit(result: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")
    sys.stdout.flush()


def main(session: Callable[[Target, Observer], Awaitable[None]]) -> int:
    """Run SESSION(target, observer) and print what it observed; 1 when it could not connect."""
    import anyio

    target = parse_args()
    observer = Observer()

    async def run() -> None:
        await session(target, observer)

    try:
        anyio.run(run)
    except Exception as exc:
        stage = "session" if observer.connected else "connect"
        emit({**observer.finish(), "error": one_line(exc), "stage": stage})
        return 1
    emit(observer.finish())
    return 0
