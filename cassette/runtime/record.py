"""Recording: a transparent proxy between a client and a live server, writing the cassette.

Two shapes, chosen by what the transport can do (``cassette.transport``):

* a frame transport that reaches its server (``UpstreamConnector``: stdio, or a plugin
  such as TCP) records with ``record_session``: the client is a frame stream (by default
  our own stdin and stdout), the server the transport's ``Upstream``, and ``proxy``
  (``cassette.runtime.proxy``) relays both ways;
* a network transport with a ``RecordingFront`` (streamable HTTP, SSE) records with
  ``record_proxy``: the plugin serves the proxy and reports what passed to a ``Tap``.

Ordering rules that make a recording trustworthy:

* a frame is appended to the cassette *before* it is forwarded (``Sink``), so whatever the
  other side has seen is on disk when a kill arrives;
* the proxy forwards frames byte for byte; the recorder only reads them;
* when the client finishes, the server gets end of input (``send_eof``) and time to exit;
  when the server finishes, its exit is recorded and the client sees end of stream;
* cancelling a recording (a signal, a harness giving up) stops it gracefully: the server
  is ended in order, sooner than usual, and what it says meanwhile is still recorded
  (bounded by ``STOP_BOUND``);
* the cassette's file is claimed under its lock and named at the end
  (``cassette.store.destination``): one writer per cassette, and a session in which no
  request succeeded is set aside as ``<cassette>.failed``, never left as a cassette.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import anyio
import attrs

from cassette.core.eras.bridge import ERA_CHOICES
from cassette.core.recording.local_paths import LocalPaths
from cassette.core.recording.recorder import BeforeRecord
from cassette.core.redaction.redactor import Redactor
from cassette.core.wire.deadlines import STOP_BOUND
from cassette.core.words.text import printable
from cassette.core.words.volatile import Ignores
from cassette.errors import CassetteExistsError, UsageError, sole_exception
from cassette.registry import get_connector, get_transport
from cassette.runtime.probe import probing_beside
from cassette.runtime.proxy import proxy
from cassette.runtime.refusals import RefusalNotices
from cassette.runtime.sink import Sink, SinkOptions, SinkTap, open_sink, stderr_passthrough
from cassette.store.destination import Destination
from cassette.store.gate import for_target
from cassette.store.target_paths import (
    portable_argv,
    portable_cwd,
    project_root,
    startable_argv,
)
from cassette.transport import (
    ConnectOptions,
    FrameStream,
    RecordingFront,
    RecordOptions,
    ServeOptions,
    Target,
    Transport,
    Upstream,
    UpstreamConnector,
)

__all__ = [
    "RecordConfig",
    "RecordResult",
    "local_paths",
    "print_err",
    "project_root",
    "proxy",
    "record",
    "record_http",
    "record_proxy",
    "record_session",
    "startable_argv",
]

Warn = Callable[[str], None]


def default_redactor() -> Redactor | None:
    """The one gate's policy with no options of the command's: the built-in rules, the
    project's ``[tool.cassette.redact]``, and the value of every variable of this
    process's environment whose name says it is secret (the server inherits them, and
    may print them). ``None`` when the project turns redaction off."""
    from cassette.store.gate import policy

    return policy()


def project_keeps_stderr() -> bool:
    """Whether the project keeps a server's stderr in its cassettes (``stderr`` in
    ``[tool.cassette]``, yes by default): what a recording does unless told."""
    from cassette.store.config import keep_stderr_for, load_settings

    return keep_stderr_for(load_settings())


def _redactor(choice: Redactor | Literal["default"] | None) -> Redactor | None:
    """Redaction is on unless the caller turned it off (``None``)."""
    return default_redactor() if choice == "default" else choice


@attrs.frozen(kw_only=True)
class RecordConfig:
    """What a recording is, decided once by its caller (the CLI, a mode, a harness).

    ``redactor`` is on by default; ``None`` writes secrets as they are; ``before_record``
    is a hook that sees each message first. ``strategy`` is
    stored in the header for replays to use by default. ``upstream_timeout`` (seconds)
    answers a request the server leaves unanswered that long with an error, recorded
    (stdio: none by default, since a tool call may rightly take minutes; HTTP: the
    transport's 60 s); ``on_warning`` hears about each. ``locked``: the caller holds the
    cassette's lock already (a record mode), so the recording takes ``path`` as it is;
    otherwise a cassette another process is recording makes this one take the next
    numbered sibling, told to ``on_info``.
    """

    path: str | os.PathLike[str]
    transport: str | Transport = "stdio"
    overwrite: bool = False
    fsync: bool = False
    strategy: str | None = None
    redactor: Redactor | None = attrs.field(factory=default_redactor, converter=_redactor)
    passthrough_stderr: bool = True
    #: whether the server's stderr lines are kept in the cassette (default: as the
    #: project says, ``stderr`` in ``[tool.cassette]``, else yes; ``--no-stderr``: not);
    #: they are still shown as they come when ``passthrough_stderr``
    keep_stderr: bool = attrs.field(factory=project_keeps_stderr)
    upstream_timeout: float | None = None
    on_warning: Warn | None = None
    on_info: Warn | None = None
    locked: bool = False
    #: hears how the recording went as soon as its file has its name, also when the
    #: recording was cancelled (so a stopped command can still say what it made)
    on_result: Callable[[RecordResult], None] | None = None
    #: sees each message before it is written; may change it or drop it (``None``);
    #: redaction runs after it (``cassette.core.recording.recorder.BeforeRecord``)
    before_record: BeforeRecord | None = None
    #: the era to record in (``cassette.core.eras.bridge.era_refusal``): ``auto`` lets the client
    #: choose; ``legacy`` or ``modern`` answers the other era's opening in the server's place
    era: str = attrs.field(default="auto", validator=attrs.validators.in_(ERA_CHOICES))
    #: beside the session, start the same target again to capture what any client may
    #: list (the handshake in each era, every advertised listing under each capability
    #: set; ``cassette.runtime.probe``); ``False``: no other connection to the server
    probe: bool = True
    #: the client run this session is a start of (``cassette.store.starts.client_run``):
    #: a cassette this run recorded, found as it left it, gets this session appended as
    #: its next start; ``None``: every session is a recording of its own
    client_run: str | None = None
    #: recording again (``overwrite``), an answer that differs from the old one only in
    #: values ``verify`` treats as volatile, or these ignore, keeps its old line
    #: (``cassette.store.quiet``); ``None``: only unchanged events keep theirs
    volatile: Ignores | None = None


@attrs.frozen
class RecordResult:
    """How a recording ended: the cassette it made (``path``), the server's exit code
    (``None``: unknown, or a network upstream), how many records were written, whether any
    request succeeded; when none did, where the session was kept instead (``failed``,
    ``None`` if it held nothing) and the last lines of the server's stderr, for the person
    finding out why."""

    path: str
    exit_code: int | None
    events: int
    succeeded: bool = True
    failed: str | None = None
    stderr_tail: tuple[str, ...] = ()
    #: the start this session was appended to ``path`` as (``None``: its own cassette)
    start: int | None = None
    #: a later start of a client run that waits, beside ``path``, for an earlier start
    #: still being recorded: the last of them to end appends it
    waiting: bool = False

    def written(self) -> str:
        """The line a recording that succeeded ends with: how much it wrote, where, and
        how the server exited (when it is a process we ran)."""
        ended = "" if self.exit_code is None else f"; {_ending(self.exit_code)}"
        if self.waiting:
            return (
                f"recorded a later start ({self.events - 1} line(s); the client started the "
                f"server again while an earlier start still ran): it is appended to "
                f"{self.path} when that start ends{ended}"
            )
        if self.start is not None:
            return (
                f"appended start {self.start} ({self.events - 1} line(s); the client started "
                f"the server again) to {self.path}{ended}"
            )
        return f"wrote {self.events} line(s) to {self.path}{ended}"

    def failure(self) -> str:
        """One line saying why there is no cassette: what became of the server, what it
        last said on stderr, where the session is kept."""
        parts = [f"no request got a successful answer, so nothing was recorded as {self.path}"]
        if self.exit_code is not None:
            parts.append(_ending(self.exit_code))
        if self.stderr_tail:
            parts.append(stderr_excerpt(self.stderr_tail))
        if self.failed is not None:
            parts.append(f"the session is kept in {self.failed} (not a cassette)")
        return "; ".join(parts)


#: the last lines quoted when none of them reads as the server's error
_QUOTED = 5
#: a line that states an error: ``Error: Cannot find module 'x'`` (Node),
#: ``ModuleNotFoundError: No module named 'x'`` (Python), ``error: TOKEN is not set``,
#: ``fatal: ...``, ``panic: ...`` (Go); never a stack frame (``at f (x.js:1)``, ``File "x"``)
_ERROR_LINE = re.compile(
    r"^(?:[A-Za-z_][\w.]*)?(?:Error|Exception|Exit|error|fatal|FATAL|panic|ERROR)"
    r"(?:\s*\[\w+\])?:\s*\S"
)


def stderr_excerpt(lines: Sequence[str]) -> str:
    """What to quote of a failed server's stderr: the line that states its error (the
    last one that does: Python's ``XxxError: ...`` ends its traceback, Node's ``Error:``
    line sits above its stack), else its last few lines."""
    kept = [line for line in lines if line.strip()]
    found = [line for line in kept if _ERROR_LINE.match(line.strip())]
    if found:
        line = printable(found[-1].strip())
        last = found[-1] is kept[-1]
        return f"its last stderr: {line}" if last else f"its stderr said: {line}"
    said = " / ".join(printable(line) for line in kept[-_QUOTED:])
    return f"its last stderr: {said}"


def _ending(code: int) -> str:
    if code < 0:
        return f"the server was ended by signal {-code}"
    return f"the server exited with code {code}"


def print_err(text: str) -> None:
    """One line for a person, on stderr (stdout may be carrying protocol)."""
    import sys

    print(text, file=sys.stderr, flush=True)


def _warn(config: RecordConfig) -> Warn:
    return config.on_warning or (lambda text: print_err(f"cassette: warning: {text}"))


def _info(config: RecordConfig) -> Warn:
    return config.on_info or (lambda text: print_err(f"cassette: {text}"))


def _open(
    config: RecordConfig, plugin: Transport, target: Target, destination: Destination
) -> Sink:
    """A fresh recording of ``target`` into the destination: the header names it (a URL,
    else the command line; the recorder redacts it) and the transport that carried it.
    Secret-named variables of the server's own environment are redacted wherever they
    appear, as ours are. A later start is redacted as its cassette was (``restarted``)."""
    base = config.redactor if destination.start is None else restarted(config, destination)
    redactor = for_target(base, target.env, target.headers)
    path = destination.writing
    described: dict[str, Any]
    if target.url is not None:
        described = {"url": target.url}
    else:
        folder = target.cwd or os.getcwd()  # relative paths mean what they mean there
        described = {
            "command": portable_argv(target.command),
            "cwd": portable_cwd(folder, destination.path),
        }
    if target.headers:  # the names a replay against the live server needs, never values
        described["headers"] = sorted(target.headers)
    options = SinkOptions(
        strategy=config.strategy,
        redactor=redactor,
        overwrite=True,  # the destination decided what may be replaced
        fsync=config.fsync,
        on_warning=_warn(config),
        before_record=config.before_record,
        keep_stderr=config.keep_stderr,
        local=local_paths(),
    )
    sink = open_sink(path, plugin.name, described, options)
    sink.start = destination.start
    return sink


def restarted(config: RecordConfig, destination: Destination) -> Redactor | None:
    """What a later start appended to a cassette is redacted by: the command's policy
    joined with the cassette's header, numbering placeholders on after the cassette's
    (as an appended episode is); a cassette recorded without redaction keeps the
    command's policy, so turning redaction on still protects what is appended. A start
    that overlaps the run's first reads the cassette as written so far."""
    from cassette.errors import CassetteError
    from cassette.store.gate import joined
    from cassette.store.storage import Cassette

    try:
        cassette = Cassette.load(destination.path)
    except (CassetteError, OSError):  # the run's first start has not written it (yet)
        return config.redactor
    header = cassette.header
    if not header.redaction:
        return config.redactor
    return joined(config.redactor, header.redaction, events=(header, *cassette.events))


def _claim(config: RecordConfig) -> Destination:
    """The cassette's file, under its lock; a person is told when it is busy. A start of
    a client run that recorded the cassette joins that run's recording
    (``cassette.store.run_note``), decided under the run's note as one step."""
    if config.client_run is None or config.overwrite or config.locked:
        return _claimed(config)
    from cassette.store.run_note import claiming

    with claiming(config.path, config.client_run) as claim:
        if claim.joined is not None:
            return Destination.later_start(claim.joined)
        destination = _claimed(config)
        if destination.path == destination.asked:  # a numbered sibling is nobody's run
            destination.ticket = claim.took()
        return destination


def _claimed(config: RecordConfig) -> Destination:
    try:
        destination = Destination.claim(
            config.path, overwrite=config.overwrite, locked=config.locked
        )
    except CassetteExistsError as exc:
        if config.client_run is None:
            raise
        raise CassetteExistsError(
            f"{exc}; a client that starts the server once per call has its later starts "
            "appended only within the run that recorded it: to record such a client again, "
            "remove the cassette first (--overwrite would keep its last start only)"
        ) from None
    if destination.busy is not None:
        holder = f"process {destination.busy}" if destination.busy else "another process"
        _info(config)(
            f"{destination.asked} is being recorded by {holder}; this session is "
            f"recorded to {destination.path}"
        )
    return destination


@contextlib.contextmanager
def _recording(
    config: RecordConfig, plugin: Transport, target: Target
) -> Iterator[tuple[Sink, list[RecordResult]]]:
    """A sink writing to the claimed destination; at the end the file gets its name and
    the result (how the session went, where it is) is appended to the list yielded."""
    destination = _claim(config)
    sink: Sink | None = None
    outcome: list[RecordResult] = []
    try:
        sink = _open(config, plugin, target, destination)
        yield sink, outcome
    finally:
        succeeded = sink is not None and sink.succeeded
        try:
            if sink is not None:
                sink.finish()
        finally:
            happened = sink is not None and sink.count > 1  # more than a header
            failed = destination.finish(succeeded, happened=happened, volatile=config.volatile)
        if sink is not None:
            outcome.append(_result(destination, sink, failed))
            if config.on_result is not None:
                config.on_result(outcome[0])


def _result(destination: Destination, sink: Sink, failed: Path | None) -> RecordResult:
    return RecordResult(
        os.fspath(destination.path),
        sink.exit_code,
        sink.count,
        succeeded=sink.succeeded,
        failed=None if failed is None else os.fspath(failed),
        stderr_tail=tuple(sink.stderr_tail),
        start=destination.appended if destination.start is not None else None,
        waiting=destination.start is not None and destination.appended is None,
    )


def local_paths(root: Path | None = None) -> LocalPaths:
    """This machine's folders a recording writes portably in stderr and raw lines, as
    ``portable_argv`` writes the command line: the project's root (``root``, default
    ``project_root()``) and the home folder, each as found and as resolved."""
    root = project_root() if root is None else root
    home = Path.home()
    spellings = [(root, root.resolve()), (home, home.resolve())]
    project, mine = ({os.fspath(p) for p in pair} for pair in spellings)
    return LocalPaths(project=sorted(project), home=sorted(mine))


async def record_session(
    target: Target, config: RecordConfig, client: FrameStream | None = None
) -> RecordResult:
    """Record the live server at ``target`` through a frame proxy, to ``config.path``.

    ``client`` is the stream to the client; by default, our own stdin and stdout (what
    ``cassette record`` does). Cancelling it stops it gracefully (see the module
    docstring); the cassette is then complete, with the server's exit in it."""
    plugin = get_connector(config.transport)
    with _recording(config, plugin, target) as (sink, outcome):
        session = _stoppable(_session(plugin, target, config, sink, client))
        if config.probe and sink.start is None:  # a later start: the first one asked
            await probing_beside(sink, plugin, target, session, _info(config))
        else:
            await session
    return outcome[0]


async def _stoppable(session: Callable[[anyio.Event], Awaitable[None]]) -> None:
    """Run ``session`` so that cancelling it from outside sets its stop event instead of
    cutting it off: it then has ``STOP_BOUND`` seconds to end gracefully, after which it
    is cancelled after all. The cancellation is delivered once it has ended."""
    stop = anyio.Event()
    bound = anyio.CancelScope(shield=True)

    async def stop_on_cancel() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            if not stop.is_set():
                stop.set()
                bound.deadline = anyio.current_time() + STOP_BOUND

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(stop_on_cancel)
            with bound:
                await session(stop)
            tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        inner = sole_exception(group)  # this group is ours: its caller sees the error itself
        if inner is group:
            raise
        inner.__suppress_context__ = True  # its own cause is kept
        raise inner from inner.__cause__


def _session(
    plugin: UpstreamConnector,
    target: Target,
    config: RecordConfig,
    sink: Sink,
    client: FrameStream | None,
) -> Callable[[anyio.Event], Awaitable[None]]:
    """One recorded session through ``plugin``, as ``_stoppable`` runs it."""
    stderr_out = stderr_passthrough if config.passthrough_stderr else None
    options = ConnectOptions(on_side_event=lambda event: sink.side_event(event, stderr_out))

    async def run(stop: anyio.Event) -> None:
        reached: list[Upstream] = []
        try:
            async with plugin.connect(target, options) as upstream:
                reached.append(upstream)
                if config.redactor is not None:
                    config.redactor.prepare()  # while the server starts, not on its answers
                stream = client if client is not None else _stdio_client()
                try:
                    await proxy(
                        stream,
                        upstream,
                        sink,
                        upstream_timeout=config.upstream_timeout,
                        on_warning=_warn(config),
                        era=config.era,
                        stop=stop,
                    )
                finally:
                    with anyio.CancelScope(shield=True):
                        await stream.aclose()
        finally:
            # Cut off (a stop past its bound, a failed write): the transport has ended
            # the server by now; its exit still belongs in the cassette.
            if reached and not sink.exit_recorded and not sink.writer.closed:
                with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                    sink.exit(await reached[0].wait())

    return run


def _stdio_client() -> FrameStream:
    from cassette.transports.stdio.transport import StdioClientStream

    return StdioClientStream()


async def record(
    command: Sequence[str | os.PathLike[str]],
    path: str | os.PathLike[str],
    client: FrameStream | None = None,
) -> RecordResult:
    """Record a live server through a transparent proxy into ``path``, with the default
    options: the short form of ``record_session(Target(command=...), RecordConfig(...))``,
    which takes every option. ``client`` is the stream to the client (default: our own
    stdin and stdout)."""
    argv = tuple(os.fspath(arg) for arg in command)
    return await record_session(Target(command=argv), RecordConfig(path=path), client)


# -- the network proxy ---------------------------------------------------------------------


def recording_front(transport: str | Transport) -> RecordingFront:
    """The plugin's recording proxy, or a ``UsageError`` saying it has none."""
    plugin = get_transport(transport) if isinstance(transport, str) else transport
    if not isinstance(plugin, RecordingFront):
        raise UsageError(f"transport {plugin.name!r} cannot record an upstream URL")
    return plugin


async def record_proxy(
    upstream: str | Target, config: RecordConfig, listen: ServeOptions = ServeOptions()
) -> RecordResult:
    """Record a live network endpoint through the transport's local reverse proxy, until
    cancelled. Point the client at the URL ``listen.on_ready`` receives; every client
    session that passes through is kept in the one cassette. A ``Target`` with
    ``headers`` has the proxy send them upstream with every request (their names are
    recorded, their values never)."""
    target = upstream if isinstance(upstream, Target) else Target(url=upstream)
    if target.url is None:
        raise UsageError("recording through a proxy needs the server's URL")
    plugin = recording_front(config.transport)
    options = RecordOptions(
        host=listen.host,
        port=listen.port,
        max_message_bytes=listen.max_message_bytes,
        on_ready=listen.on_ready,
        upstream_timeout=config.upstream_timeout,
        allowed_origins=listen.allowed_origins,
        era=config.era,
        headers=target.headers,
    )
    with _recording(config, plugin, target) as (sink, outcome):
        if config.redactor is not None:
            config.redactor.prepare()  # before the first client, not on its first request
        names = tuple(target.headers or ())
        tap = RefusalNotices(SinkTap(sink), target.url, names, _info(config))
        session = plugin.record_proxy(target.url, tap, options)
        if config.probe and isinstance(plugin, UpstreamConnector):
            await probing_beside(sink, plugin, target, session, _info(config))
        else:
            await session
    return outcome[0]


async def record_http(upstream: str, path: str | os.PathLike[str]) -> RecordResult:
    """Record ``upstream`` over streamable HTTP until cancelled, with the default options:
    the short form of ``record_proxy(upstream, RecordConfig(...), ServeOptions(...))``,
    which takes every option."""
    config = RecordConfig(path=path, transport="streamable-http")
    return await record_proxy(upstream, config)
