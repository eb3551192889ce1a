"""Run one session in a record mode: decide under the cassette's lock, then act.

The command line (``--mode``), the pytest plugin and the SDK adapter all come through
``run_mode``, so a mode means the same thing everywhere (the table is in
``cassette.modes.policy``), and every action goes through the runtime's one path: a
recording through ``record_session`` or ``record_proxy``, a replay or an extension
through ``serve`` (an extension is the replay with ``cassette.modes.extend`` as its
fallback), on whatever front the options name.

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
from typing import Any, Literal

import attrs

from cassette.core.recording.recorder import BeforeRecord
from cassette.core.redaction.redactor import Redactor
from cassette.core.replay.matching import LIFECYCLE_METHODS, MissReport
from cassette.core.replay.sessions import ReplayPool
from cassette.core.wire.jsonrpc import Kind, classify_value
from cassette.core.wire.model import MessageEvent
from cassette.core.words.volatile import Ignores
from cassette.errors import (
    CassetteError,
    CassetteNotFoundError,
    FaultExit,
    NotWritableError,
    UsageError,
    sole_exception,
)
from cassette.modes.episode import ExtendOptions, describe_request
from cassette.modes.extend import Extension
from cassette.modes.policy import Action, ModeChoice, missing_cassette_message, plan
from cassette.runtime.conversation import DeliveryPolicy, PolicySessionPool, ReplayResult
from cassette.runtime.frames import serve_frames
from cassette.runtime.record import (
    RecordConfig,
    RecordResult,
    default_redactor,
    project_keeps_stderr,
    record_proxy,
    record_session,
)
from cassette.runtime.replay_pool import ReplayOptions, replay_pool
from cassette.runtime.serve import front_of, serve
from cassette.store.destination import session_path
from cassette.store.lock import FileLock, claim_slot
from cassette.store.report import Report
from cassette.store.storage import Cassette, has_recording
from cassette.transport import (
    CassetteFront,
    FrameStream,
    RecordingFront,
    ServeOptions,
    Target,
)

__all__ = [
    "ModeOptions",
    "ModeResult",
    "Report",
    "decide",
    "next_session_path",
    "run_http",
    "run_mode",
    "run_stdio",
    "session_path",
    "unplayed_requests",
]

Info = Callable[[str], None]


def _redactor(choice: Redactor | Literal["default"] | None) -> Redactor | None:
    return default_redactor() if choice == "default" else choice


@attrs.frozen(kw_only=True)
class ModeOptions:
    """Everything a session in a record mode needs, decided once by its caller.

    ``target`` is the live server, reached and recorded with ``transport``; ``front`` is
    how clients reach us (``stdio``, or a network front listening as ``listen`` says).
    ``redactor`` is what a fresh recording redacts with (an extension redacts what it
    appends as the cassette's header says). ``policy`` is how replies are delivered; its
    ``on_miss`` is the runner's to set (each miss also goes to the report).
    ``report``, ``on_info`` and ``on_finish`` are the caller's channels (below).
    """

    target: Target
    transport: str = "stdio"
    front: str = "stdio"
    strategy: str | None = None
    fsync: bool = False
    redactor: Redactor | None = attrs.field(factory=default_redactor, converter=_redactor)
    passthrough_stderr: bool = True
    #: whether a recording keeps the server's stderr (``RecordConfig.keep_stderr``; by
    #: default as the project says)
    keep_stderr: bool = attrs.field(factory=project_keeps_stderr)
    upstream_timeout: float | None = None
    era: str = "auto"  # the era a recording is made in (RecordConfig.era)
    listen: ServeOptions = ServeOptions()
    policy: DeliveryPolicy = DeliveryPolicy()
    #: params a replay never matches on (JSON Pointers; ``Strategy.ignore``)
    ignore: tuple[str, ...] = ()
    #: a used-up request gets its last answer again (``Strategy.allow_repeats``)
    allow_repeats: bool = False
    #: sees each message before a recording or an extension writes it
    before_record: BeforeRecord | None = None
    #: an extension's fresh server first gets the session's earlier requests (``--prime``)
    prime: bool = False
    #: recording again (mode ``all``), an answer changed only in volatile values keeps
    #: its old line (``RecordConfig.volatile``)
    volatile: Ignores | None = None
    #: a recording probes the server beside its session (``RecordConfig.probe``)
    probe: bool = True
    #: the side channel a supervising process reads (``--report FILE``; none by default)
    report: Report | None = None
    #: hears what the mode does, for a person (``recording X``, ``appended ...``)
    on_info: Info | None = None
    #: hears each replay result as it is known (a network front: when it stops)
    on_finish: Callable[[ReplayResult], None] | None = None


@attrs.frozen
class ModeResult:
    """How a session run in a mode ended."""

    action: Action
    path: str
    misses: tuple[MissReport, ...] = ()
    summary: str = ""
    appended: tuple[str, ...] = ()
    exit_code: int | None = None
    #: how a recording went (``RECORD`` only)
    recording: RecordResult | None = None


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
    try:
        await lock.wait(
            on_wait=lambda: say(f"waiting for {os.fspath(path)}: another process holds it")
        )
    except NotWritableError:
        # A read-only checkout: a cassette that is there replays without the lock (nobody
        # can be writing it); anything that would write says why in one line.
        if plan(choice.mode, has_recording(path)) is Action.REPLAY:
            return Action.REPLAY, None
        raise
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


def _any_success(tape: Cassette) -> bool:
    """Whether the server answered some request with a result (as the recorder counts
    success; ``lint``'s ``no-success`` also pairs each answer with its request)."""
    return any(
        event.dir == "s2c" and classify_value(event.message) is Kind.RESPONSE
        for event in tape.events
        if isinstance(event, MessageEvent)
    )


def _load(path: str, lock: FileLock | None) -> Cassette:
    try:
        return Cassette.load(path)
    finally:
        if lock is not None:
            lock.release()


class _Run:
    """What every action shares: the report, the person's messages, the miss callback."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        choice: ModeChoice,
        report: Report | None,
        on_info: Info | None,
    ) -> None:
        self.path = os.fspath(path)
        self.choice = choice
        self.report = report or Report(None, self.path)
        self.info = _say(on_info)

    def policy(self, options: ModeOptions) -> DeliveryPolicy:
        """The caller's policy, with each miss written to the report before it is told."""
        told = options.policy.on_miss

        def on_miss(text: str) -> None:
            self.report.write("miss", text=text)
            if told is not None:
                told(text)

        return attrs.evolve(options.policy, on_miss=on_miss)

    def no_faults_while_recording(self) -> UsageError:
        """Faults are laid over a replay: a recording must hold what the server said."""
        why = "records it again" if self.choice.mode == "all" else "would record it now"
        return UsageError(
            f"{self.path}: a fault plan is laid over a replay, and {self.choice.describe()} "
            f"{why}; record it without faults first (or share a recorded cassette)"
        )

    def missing(self) -> CassetteNotFoundError:
        return CassetteNotFoundError(missing_cassette_message(self.path, self.choice))

    def started(self, action: Action) -> None:
        """Said first: the action, and (an extension) the cassette's size before anything is
        appended, so a supervisor can take back what a failing test appended."""
        size = None
        if action is Action.EXTEND:
            with contextlib.suppress(OSError):
                size = os.path.getsize(self.path)
        self.report.write(
            "session",
            action=action.value,
            mode=self.choice.mode,
            source=self.choice.source,
            size=size,
        )
        _announce(action, self.path, self.choice, self.info)

    def recorded(self, result: RecordResult) -> None:
        """A recording that never succeeded is an error of the session; one that did says
        what it wrote (either is told at once: the run may be ending on a signal)."""
        if not result.succeeded:
            self.report.write("error", text=result.failure())
            self.info(f"error: {result.failure()}")
        else:  # the one line every recording ends with (``RecordResult.written``)
            self.info(result.written())

    def check_success(self, tape: Cassette, options: ModeOptions) -> None:
        """Warn when the cassette a mode replays holds no successful answer: a failed
        recording left by an older version (this one keeps those as ``.failed``), which
        would make every request miss with no hint why."""
        if _any_success(tape):
            return
        text = (
            f"{self.path}: no request in it got a successful answer: a failed recording, "
            "not a cassette (`cassette lint` says so); every request will miss. Delete it "
            "to record afresh"
        )
        warn = options.policy.on_warning
        if warn is not None:
            warn(text)
        else:
            self.info(f"warning: {text}")

    def failed(self, exc: BaseException) -> None:
        inner = sole_exception(exc)
        if isinstance(inner, FaultExit):
            self.report.write("end", misses=0, appended=0, exit=inner.code)
        elif isinstance(inner, CassetteError):
            self.report.write("error", text=str(inner))

    @contextlib.contextmanager
    def recording(self, lock: FileLock | None) -> Iterator[None]:
        """The cassette's lock is let go once the recording has its name, however it
        ended (the recording names it: ``cassette.store.destination``)."""
        try:
            yield
        finally:
            if lock is not None:
                lock.release()


async def run_mode(
    path: str | os.PathLike[str],
    choice: ModeChoice,
    options: ModeOptions,
    *,
    client: FrameStream | None = None,
) -> ModeResult:
    """One serving in ``choice``'s mode, as ``options`` say. ``client`` is a harness's
    stream (the session is then that one client, whatever ``options.front`` says)."""
    on_finish = options.on_finish
    run = _Run(path, choice, options.report, options.on_info)
    try:
        action, lock = await decide(run.path, choice, run.info)
        if action is Action.MISSING:
            raise run.missing()
        if action is Action.RECORD and options.policy.faults is not None:
            if lock is not None:
                lock.release()
            raise run.no_faults_while_recording()
        run.started(action)
        if action is Action.RECORD:
            return await _record(run, lock, options, client)
        tape = _load(run.path, lock)
        run.check_success(tape, options)
        outcome = await _replay(run, action, tape, options, client=client, on_finish=on_finish)
        run.report.write("end", misses=len(outcome.misses), appended=len(outcome.appended))
        return outcome
    except BaseException as exc:
        run.failed(exc)
        raise


async def _record(
    run: _Run, lock: FileLock | None, options: ModeOptions, client: FrameStream | None
) -> ModeResult:
    with run.recording(lock):
        config = RecordConfig(
            path=run.path,
            transport=options.transport,
            overwrite=run.choice.mode == "all",  # replaced once the new one succeeded
            locked=True,
            fsync=options.fsync,
            strategy=options.strategy,
            redactor=options.redactor,
            passthrough_stderr=options.passthrough_stderr,
            keep_stderr=options.keep_stderr,
            upstream_timeout=options.upstream_timeout,
            on_warning=options.policy.on_warning,
            on_info=run.info,
            on_result=run.recorded,
            before_record=options.before_record,
            era=options.era,
            volatile=options.volatile,
            probe=options.probe,
        )
        if client is None and options.front != "stdio":
            result = await _record_proxy(options, config)
        else:
            result = await record_session(options.target, config, client)
    run.report.write("end", misses=0, appended=0, events=result.events)
    return ModeResult(Action.RECORD, run.path, exit_code=result.exit_code, recording=result)


async def _record_proxy(options: ModeOptions, config: RecordConfig) -> RecordResult:
    """A network front records through the transport's own proxy: clients of that front
    reach a server of that transport."""
    front = front_of(options.front)
    if options.front != options.transport or not isinstance(front, RecordingFront):
        raise UsageError(
            f"a recording served on {options.front!r} needs a {options.front} server to "
            f"record, not a {options.transport} one"
        )
    if not options.target.url:
        raise UsageError(f"recording over {options.front} needs the server's URL")
    return await record_proxy(options.target, config, options.listen)


async def _replay(
    run: _Run,
    action: Action,
    tape: Cassette,
    options: ModeOptions,
    *,
    client: FrameStream | None,
    on_finish: Callable[[ReplayResult], None] | None,
) -> ModeResult:
    # a miss is described through the recording's own policy (the command's --redact-*
    # options too), or the project's when this run records nothing
    replaying = ReplayOptions(
        strategy=options.strategy,
        ignore=options.ignore,
        allow_repeats=options.allow_repeats,
        redactor=options.redactor,
        transport=options.front,
    )
    responders = replay_pool(tape, replaying)
    policy = run.policy(options)
    network = client is None and isinstance(front_of(options.front), CassetteFront)
    extension = None
    if action is Action.EXTEND:
        extension = _extension(run, tape, options, network=network)
    if client is not None:
        result = await _serve_client(client, responders, policy, extension)
        results = [result]
        if on_finish is not None:
            on_finish(result)
    else:
        results = await serve(
            options.front,
            responders,
            options=options.listen,
            policy=policy.finishing(on_finish),
            fallback=extension,
        )
    misses = tuple(m for r in results for m in r.misses)
    run.report.write("unplayed", requests=unplayed_requests(responders))
    if responders.repeats:
        run.report.write("repeats", count=responders.repeats)
    summary = "\n".join(r.summary for r in results if r.summary)
    appended: tuple[str, ...] = ()
    if extension is not None:
        appended = tuple(extension.appended)
        if appended and not network:  # a network front told each as it went
            run.info(f"appended {len(appended)} new episode(s) to {run.path}")
    return ModeResult(action, run.path, misses, summary, appended)


async def _serve_client(
    client: FrameStream,
    responders: ReplayPool,
    policy: DeliveryPolicy,
    extension: Extension | None,
) -> ReplayResult:
    """One harness client: the serve path's per-client loop, on the stream it brought."""
    import anyio

    results: list[ReplayResult] = []
    async with anyio.create_task_group() as tg:
        pool = PolicySessionPool(responders, policy, fallback=extension, tg=tg)
        try:
            results.append(await serve_frames(client, pool))
        finally:
            tg.cancel_scope.cancel()
    if pool.exit_code is not None:
        raise FaultExit(pool.exit_code)
    return results[0]


def unplayed_requests(responders: ReplayPool) -> list[dict[str, Any]]:
    """The recorded requests no session of this serving played (line, request and its
    digest: ``cassette.core.tape.prune``), for a
    supervisor that fails tests leaving recordings unused, and for ``cassette prune``.
    Lifecycle calls are left out: a client's handshake is not a call a test forgets, and
    is never pruned. (The pool folds each session's unplayed requests in as it ends, so
    it need not keep ended sessions.)"""
    from cassette.core.tape.prune import request_digest

    return [
        {"line": seq + 1, "request": describe_request(message), "digest": request_digest(message)}
        for seq, message in responders.unplayed()
        if message.get("method") not in LIFECYCLE_METHODS
    ]


def _extension(run: _Run, tape: Cassette, options: ModeOptions, *, network: bool) -> Extension:
    def appended(request: dict[str, Any]) -> None:
        run.report.write("episode", method=request.get("method"))
        if network:  # a front that runs until stopped says so as it goes
            run.info(f"appended a new episode to {run.path}: {describe_request(request)}")

    live = ExtendOptions(
        transport=options.transport,
        on_info=run.info,
        on_appended=appended,
        passthrough_stderr=options.passthrough_stderr,
        before_record=options.before_record,
        prime=options.prime,
        redactor=options.redactor,
    )
    return Extension(tape, run.path, options.target, live)


# -- the short forms ---------------------------------------------------------------------


async def run_stdio(
    path: str | os.PathLike[str],
    command: Sequence[str | os.PathLike[str]],
    *,
    choice: ModeChoice,
    client: FrameStream | None = None,
) -> ModeResult:
    """One session with ``client`` (default: this process's stdin and stdout), the live
    server being ``command`` over stdio, with the default options: the short form of
    ``run_mode(path, choice, ModeOptions(...))``, which takes every option."""
    target = Target(command=tuple(os.fspath(arg) for arg in command))
    return await run_mode(path, choice, ModeOptions(target=target), client=client)


async def run_http(
    path: str | os.PathLike[str], upstream: str | Target, *, choice: ModeChoice
) -> Action:
    """Serve a network endpoint in a mode until cancelled, with the default options: the
    short form of ``run_mode(path, choice, ModeOptions(...))`` for a replay front, a
    recording proxy in front of ``upstream``, or (``new_episodes``) a replay front whose
    misses ``upstream`` answers."""
    target = upstream if isinstance(upstream, Target) else Target(url=upstream)
    options = ModeOptions(target=target, transport="streamable-http", front="streamable-http")
    return (await run_mode(path, choice, options)).action
