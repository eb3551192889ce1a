"""Run one session in a record mode: decide under the cassette's lock, then act.

The command line (``--mode``), the pytest plugin and the SDK adapter all come through
here, so a mode means the same thing everywhere (the table is in ``cassette.modes.policy``).

Ordering rules, per action:

* the decision (does a recording exist?) and a fresh recording happen under the
  cassette's ``FileLock``, held until the recording is complete: two processes that
  both find a cassette missing record it one after the other, and the second, finding
  it recorded by then, replays it (``once``) or extends it (``new_episodes``);
* ``none`` never locks and never writes: it works on a read-only checkout;
* ``all`` records into a hidden sibling file and moves it over the old cassette only
  once the recording holds an event, so a server that fails to start, or a run that is
  killed, leaves the old cassette as it was;
* a replay or an extension loads the cassette under the lock and lets go at once;
  an extension takes the lock again for each append.

``Report`` is the side channel a supervising process reads (``--report FILE``): one JSON
line per fact (``session``, ``miss``, ``episode``, ``error``, ``end``), each appended with
one write, a miss *before* its error reaches the client, so whoever sees the error can
already read why.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from cassette.core.matching import MissReport, Strategy
from cassette.core.replayer import Replayer
from cassette.errors import CassetteError, CassetteNotFoundError
from cassette.modes.episodes import acquire, file_appender, serve_extending
from cassette.modes.policy import Action, ModeChoice, Report, missing_cassette_message, plan
from cassette.runtime.session import ReplayResult, record, record_http, replay, serve_replay
from cassette.store.lock import FileLock, claim_slot
from cassette.store.storage import Cassette, has_recording
from cassette.transport import FrameStream

__all__ = [
    "ModeResult",
    "Report",
    "decide",
    "next_session_path",
    "run_http",
    "run_stdio",
    "session_path",
]

Info = Callable[[str], None]


@attrs.frozen
class ModeResult:
    """How a session run in a mode ended."""

    action: Action
    path: str
    misses: tuple[MissReport, ...] = ()
    summary: str = ""
    appended: tuple[str, ...] = ()
    exit_code: int | None = None


def session_path(path: str | os.PathLike[str], number: int) -> Path:
    """The cassette of the ``number``-th session: ``t.jsonl``, then ``t.2.jsonl``, ..."""
    base = Path(path)
    return base if number <= 1 else base.with_name(f"{base.stem}.{number}{base.suffix}")


def next_session_path(path: str | os.PathLike[str], sessions: str | os.PathLike[str]) -> Path:
    """The cassette of the next session numbered in the folder ``sessions``: each caller,
    in any process, gets the next number (``--sessions``)."""
    tape = Path(path).resolve()
    key = hashlib.sha256(str(tape).encode("utf-8")).hexdigest()[:16]
    return session_path(tape, claim_slot(sessions, key))


def _say(on_info: Info | None) -> Info:
    def info(text: str) -> None:
        if on_info is not None:
            on_info(text)

    return info


async def decide(
    path: str | os.PathLike[str], choice: ModeChoice, on_info: Info | None = None
) -> tuple[Action, FileLock | None]:
    """The action for this session, with the cassette's lock held when it may write."""
    if choice.mode == "none":
        return (Action.REPLAY if has_recording(path) else Action.MISSING), None
    lock = FileLock(path)
    say = _say(on_info)
    await acquire(lock, lambda: say(f"waiting for {os.fspath(path)}: another process holds it"))
    return plan(choice.mode, has_recording(path)), lock


def _announce(action: Action, path: str, choice: ModeChoice, info: Info) -> None:
    if action is Action.REPLAY:
        text = f"{path} exists; replaying it (the server is not started)"
    elif action is Action.EXTEND:
        text = f"{path} exists; replaying it, and requests it lacks go to the server"
    elif choice.mode == "all":
        text = f"recording {path} again, to replace it"
    else:
        text = f"{path} is missing; recording it"
    info(f"{choice.describe()}: {text}")


def _strategy(tape: Cassette, strategy: str | Strategy | None) -> str | Strategy:
    stored = tape.header.target.get("strategy")
    return strategy or (stored if isinstance(stored, str) else None) or "default"


def _load(path: str, lock: FileLock | None) -> Cassette:
    try:
        return Cassette.load(path)
    finally:
        if lock is not None:
            lock.release()


def _holds_events(path: Path) -> bool:
    """A header and at least one event: a server that never started leaves only a header."""
    try:
        with path.open("rb") as file:
            return bool(file.readline()) and bool(file.readline().strip())
    except FileNotFoundError:
        return False


def _unwrap(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


class _Run:
    """What every action shares: the report, the person's messages, the miss callback."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        choice: ModeChoice,
        report: Report | None,
        on_miss: Info | None,
        on_info: Info | None,
    ) -> None:
        self.path = os.fspath(path)
        self.choice = choice
        self.report = report or Report(None, self.path)
        self._on_miss = on_miss
        self.info = _say(on_info)

    def miss(self, text: str) -> None:
        self.report.write("miss", text=text)
        if self._on_miss is not None:
            self._on_miss(text)

    def missing(self) -> CassetteNotFoundError:
        return CassetteNotFoundError(missing_cassette_message(self.path, self.choice))

    def started(self, action: Action) -> None:
        self.report.write(
            "session", action=action.value, mode=self.choice.mode, source=self.choice.source
        )
        _announce(action, self.path, self.choice, self.info)

    def failed(self, exc: BaseException) -> None:
        inner = _unwrap(exc)
        if isinstance(inner, CassetteError):
            self.report.write("error", text=str(inner))

    @contextlib.contextmanager
    def recording(self, lock: FileLock | None) -> Iterator[Path]:
        """Where a fresh recording goes, for as long as it is being made: the cassette
        itself, or (``all``) a sibling moved over it afterwards if it holds an event. The
        cassette's lock is let go at the end, however the recording ended."""
        target = Path(self.path)
        staged = target
        if self.choice.mode == "all" and has_recording(target):
            staged = target.with_name(f".{target.name}.recording")
        try:
            yield staged
        finally:
            self.promote(staged)
            if lock is not None:
                lock.release()

    def promote(self, staged: Path) -> None:
        target = Path(self.path)
        if staged == target:
            return
        if _holds_events(staged):
            os.replace(staged, target)
        else:
            with contextlib.suppress(FileNotFoundError):
                staged.unlink()


async def run_stdio(
    path: str | os.PathLike[str],
    command: Sequence[str],
    *,
    choice: ModeChoice,
    client: FrameStream | None = None,
    strategy: str | None = None,
    transport: str = "stdio",
    fsync: bool = False,
    report: Report | None = None,
    on_miss: Info | None = None,
    on_info: Info | None = None,
    passthrough_stderr: bool = True,
    redactor: Any = "default",
    max_message_bytes: int | None = None,
) -> ModeResult:
    """One session with ``client`` (default: this process's stdin and stdout).

    ``redactor`` is what a fresh recording redacts with (see ``session.record``); an
    extension redacts what it appends as the cassette's header says. A replay refuses a
    client line over ``max_message_bytes`` (a recording forwards any line: it must stay
    transparent).
    """
    run = _Run(path, choice, report, on_miss, on_info)
    try:
        action, lock = await decide(run.path, choice, run.info)
        if action is Action.MISSING:
            raise run.missing()
        run.started(action)
        if action is Action.RECORD:
            return await _record(
                run,
                lock,
                command=command,
                client=client,
                strategy=strategy,
                transport=transport,
                fsync=fsync,
                passthrough_stderr=passthrough_stderr,
                redactor=redactor,
            )
        tape = _load(run.path, lock)
        if action is Action.REPLAY:
            result = await _replay(run, tape, client, strategy, max_message_bytes)
            outcome = ModeResult(action, run.path, result.misses, result.summary)
        else:
            outcome = await _extend(
                run,
                tape,
                command=command,
                client=client,
                strategy=strategy,
                transport=transport,
                passthrough_stderr=passthrough_stderr,
            )
        run.report.write("end", misses=len(outcome.misses), appended=len(outcome.appended))
        return outcome
    except BaseException as exc:
        run.failed(exc)
        raise


async def _record(
    run: _Run,
    lock: FileLock | None,
    *,
    command: Sequence[str],
    client: FrameStream | None,
    strategy: str | None,
    transport: str,
    fsync: bool,
    passthrough_stderr: bool,
    redactor: Any,
) -> ModeResult:
    with run.recording(lock) as staged:
        result = await record(
            command,
            staged,
            client=client,
            transport=transport,
            overwrite=True,
            fsync=fsync,
            strategy=strategy,
            passthrough_stderr=passthrough_stderr,
            redactor=redactor,
        )
    run.report.write("end", misses=0, appended=0, events=result.events)
    return ModeResult(Action.RECORD, run.path, exit_code=result.exit_code)


async def _replay(
    run: _Run,
    tape: Cassette,
    client: FrameStream | None,
    strategy: str | Strategy | None,
    max_message_bytes: int | None = None,
) -> ReplayResult:
    chosen = _strategy(tape, strategy)
    limit = max_message_bytes
    if client is not None:
        return await replay(
            client, Replayer(tape, chosen), on_miss=run.miss, max_message_bytes=limit
        )
    results = await serve_replay(
        tape, strategy=chosen, transport="stdio", on_miss=run.miss, max_message_bytes=limit
    )
    return results[0] if results else ReplayResult((), "")


async def _extend(
    run: _Run,
    tape: Cassette,
    *,
    command: Sequence[str],
    client: FrameStream | None,
    strategy: str | Strategy | None,
    transport: str,
    passthrough_stderr: bool,
) -> ModeResult:
    if client is None:
        from cassette.transports.stdio import StdioClientStream

        client = StdioClientStream()

    def waiting() -> None:
        run.info(f"waiting for {run.path}: another process holds it")

    appender = file_appender(run.path, on_wait=waiting)

    async def append_and_report(events: list[Any]) -> None:
        await appender(events)
        for event in events:
            message = getattr(event, "message", None)
            if isinstance(message, dict) and event.dir == "c2s" and "id" in message:
                run.report.write("episode", method=message.get("method"))

    result = await serve_extending(
        client,
        tape,
        command,
        appender=append_and_report,
        strategy=_strategy(tape, strategy),
        transport=transport,
        on_miss=run.miss,
        on_info=run.info,
        passthrough_stderr=passthrough_stderr,
    )
    if result.appended:
        run.info(f"appended {len(result.appended)} new episode(s) to {run.path}")
    return ModeResult(Action.EXTEND, run.path, result.misses, result.summary, result.appended)


async def run_http(
    path: str | os.PathLike[str],
    upstream: str,
    *,
    choice: ModeChoice,
    strategy: str | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    fsync: bool = False,
    report: Report | None = None,
    on_ready: Callable[[str], None] | None = None,
    on_miss: Info | None = None,
    on_info: Info | None = None,
    on_finish: Callable[[ReplayResult], None] | None = None,
    redactor: Any = "default",
    max_message_bytes: int | None = None,
) -> Action:
    """Serve a streamable-HTTP endpoint in a mode until cancelled: a replay front or a
    recording proxy in front of ``upstream``, or (``new_episodes``) a replay front whose
    misses ``upstream`` answers, appended to the cassette."""
    run = _Run(path, choice, report, on_miss, on_info)
    try:
        action, lock = await decide(run.path, choice, run.info)
        if action is Action.MISSING:
            raise run.missing()
        run.started(action)
        if action is Action.RECORD:
            with run.recording(lock) as staged:
                await record_http(
                    upstream,
                    staged,
                    host=host,
                    port=port,
                    overwrite=True,
                    fsync=fsync,
                    strategy=strategy,
                    on_ready=on_ready,
                    redactor=redactor,
                    max_message_bytes=max_message_bytes,
                )
            return action
        tape = _load(run.path, lock)
        if action is Action.EXTEND:
            await _extend_http(
                run,
                tape,
                upstream,
                strategy=strategy,
                host=host,
                port=port,
                on_ready=on_ready,
                on_finish=on_finish,
                max_message_bytes=max_message_bytes,
            )
            return action
        await serve_replay(
            tape,
            strategy=_strategy(tape, strategy),
            transport="streamable-http",
            host=host,
            port=port,
            on_ready=on_ready,
            on_miss=run.miss,
            on_finish=on_finish,
            max_message_bytes=max_message_bytes,
        )
        return action
    except BaseException as exc:
        run.failed(exc)
        raise


async def _extend_http(
    run: _Run,
    tape: Cassette,
    upstream: str,
    *,
    strategy: str | None,
    host: str,
    port: int,
    on_ready: Callable[[str], None] | None,
    on_finish: Callable[[ReplayResult], None] | None,
    max_message_bytes: int | None = None,
) -> None:
    """``new_episodes`` over streamable HTTP (``cassette.transports._http_extend``)."""
    from cassette.modes.episodes import describe_request
    from cassette.transports._http_extend import HttpExtender, serve_extending_http

    def appended(request: dict[str, Any]) -> None:
        run.report.write("episode", method=request.get("method"))
        run.info(f"appended a new episode to {run.path}: {describe_request(request)}")

    def finish(misses: list[MissReport], summary: str) -> None:
        if on_finish is not None:
            on_finish(ReplayResult(tuple(misses), summary))

    extender = HttpExtender(tape, run.path, upstream, on_info=run.info, on_appended=appended)
    await serve_extending_http(
        tape,
        extender,
        strategy=_strategy(tape, strategy),
        host=host,
        port=port,
        on_ready=on_ready,
        on_miss=run.miss,
        on_finish=finish,
        max_message_bytes=max_message_bytes,
    )
