"""Recording scenarios: cassette as the client, through the recording everyone else uses.

Each scenario is one session, and its cassette is made by the record-mode runner
(``cassette.modes.runner.run_mode``) exactly as for any client: under the cassette's lock,
redacted with the project's rules (and every ``${VAR}`` the target takes, since those are
secrets by construction), ``all`` staged beside the old cassette until the new one holds
something. Only the client is different: instead of a person's MCP client, the steps.

* a command (or a plugin that reaches its server itself) runs as ``cassette record``
  does on stdio, its client side an in-memory stream the steps drive;
* a URL over a transport with a recording proxy (streamable HTTP, legacy SSE) gets that
  proxy on a free local port, and the steps reach it with the transport's own client: the
  cassette is the HTTP recording a real client's session would make, statuses included.

The mode decides what a run does: ``all`` (what ``record --scenarios --overwrite`` uses)
records again, ``once`` records what is missing and replays the rest (a step the replay
cannot answer fails, naming the closest recording), ``new_episodes`` appends what a
changed scenario adds, ``none`` only replays.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from cassette.client.connection import McpClient, closed_errors
from cassette.client.opening import open_session
from cassette.client.scenarios import Scenario, ScenarioFile
from cassette.client.steps import ScenarioAnswers, StepResult, run_steps
from cassette.client.target import ServerTarget
from cassette.core.redaction.redactor import Redactor
from cassette.core.words.volatile import Ignores
from cassette.errors import TransportError
from cassette.modes.policy import Action, ModeChoice, plan
from cassette.modes.runner import ModeOptions, ModeResult, run_mode
from cassette.runtime.conversation import DeliveryPolicy
from cassette.store.storage import has_recording
from cassette.transport import ConnectOptions, FrameStream, ServeOptions, Target

__all__ = [
    "RecordTuning",
    "ScenarioOptions",
    "ScenarioResult",
    "project_redactor",
    "reachable",
    "record_scenario",
    "record_scenarios",
]

Info = Callable[[str], None]
_DONE = {
    Action.RECORD: "recorded",
    Action.REPLAY: "replayed",
    Action.EXTEND: "extended",
    Action.MISSING: "missing",
}


@attrs.frozen(kw_only=True)
class RecordTuning:
    """How the cassettes are written, as for ``cassette record``: ``redactor`` (``"project"``:
    the project's rules plus every ``${VAR}`` of the target; ``None``: off), the strategy
    stored in the header, ``fsync``, and ``upstream_timeout`` (seconds the server may take
    to answer before the request gets an error in its place, recorded),
    ``max_message_bytes`` as ``record --max-message-bytes`` takes it, ``volatile`` as
    ``record --keep-volatile`` gives it, and ``probe`` as ``record --no-probe`` turns it
    off."""

    redactor: Redactor | Literal["project"] | None = "project"
    strategy: str | None = None
    fsync: bool = False
    upstream_timeout: float | None = None
    #: the largest request body a URL target's recording proxy accepts (default 64 MiB)
    max_message_bytes: int | None = None
    #: recording again, an answer changed only in volatile values keeps its old line
    #: (``record --keep-volatile``; ``RecordConfig.volatile``)
    volatile: Ignores | None = None
    #: the recorder probes the server beside each session (``RecordConfig.probe``)
    probe: bool = True


@attrs.frozen
class ScenarioResult:
    """One scenario's run: where its cassette is, what the mode did, how each step went,
    and (``error``) why the session could not run at all."""

    scenario: str
    cassette: str
    action: str  # recorded, replayed, extended
    steps: tuple[StepResult, ...] = ()
    error: str = ""

    @property
    def failed(self) -> tuple[StepResult, ...]:
        return tuple(s for s in self.steps if not s.ok and s.run)

    @property
    def ok(self) -> bool:
        return not self.error and all(s.ok for s in self.steps)

    def lines(self) -> list[str]:
        """What a person is told, one line each: failures first, then the outcome."""
        out = [f"scenario {self.scenario}: {self.error}"] if self.error else []
        for result in self.failed:
            step = result.step
            out.append(
                f"scenario {self.scenario}: step {step.index} ({step.describe()}) failed: "
                f"{result.detail}"
            )
        skipped = sum(not s.run for s in self.steps)
        done = f"{len(self.steps) - skipped} step(s) {self.action} in {self.cassette}"
        if self.failed or skipped:
            done += f" ({len(self.failed)} failed" + (f", {skipped} not run)" if skipped else ")")
        out.append(f"scenario {self.scenario}: {done}")
        return out

    def as_data(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "cassette": self.cassette,
            "action": self.action,
            "ok": self.ok,
            "error": self.error,
            "steps": [
                {"step": s.step.index, "request": s.step.describe(), "ok": s.ok, "detail": s.detail}
                for s in self.steps
            ],
        }


def project_redactor(
    file: ScenarioFile, environ: Mapping[str, str] | None = None, **rules: Any
) -> Redactor | None:
    """The redaction a scenario's cassette gets: the project's rules (``[tool.cassette]``
    nearest the scenarios file), ``rules`` (``enabled``, ``patterns``, ``paths``, ``env``,
    ``pii``, as ``cassette.store.gate.RedactOptions`` holds them), and the value of every
    variable the target takes."""
    from cassette.store.gate import RedactOptions, policy

    return policy(
        RedactOptions(**rules),
        start=file.path.parent,
        extra_env=file.variables(),
        environ=os.environ if environ is None else environ,
    )


async def _session(
    client: McpClient, file: ScenarioFile, scenario: Scenario, answers: ScenarioAnswers
) -> tuple[list[StepResult], str]:
    """Open the session in the file's era and run the steps; (results, error)."""
    import anyio

    try:
        with anyio.fail_after(file.timeout):
            opening = await open_session(
                client,
                file.era,
                client_info=file.client_info,
                capabilities=file.client_capabilities(scenario),
                legacy_version=file.legacy_version,
            )
    except TimeoutError:
        return [], f"the server did not finish the handshake within {file.timeout:g}s"
    except closed_errors():
        return [], "the server closed the connection during the handshake"
    except TransportError as exc:
        return [], str(exc)
    return await run_steps(client, opening, scenario.steps, answers, file.timeout), ""


@attrs.frozen(kw_only=True)
class ScenarioOptions:
    """How scenarios are run: in ``choice``'s mode (by default each is recorded afresh),
    their cassettes in ``output`` (default: where the scenario file says), ``${VAR}``
    taken from ``environ`` (default: this process's), written as ``tuning`` says.
    ``on_info`` hears what the mode does (``recording X``), ``on_warning`` what went
    wrong on the way, and ``on_result`` each scenario's result as it is known."""

    choice: ModeChoice = ModeChoice("all", "the caller")
    output: str | os.PathLike[str] | None = None
    environ: Mapping[str, str] | None = None
    tuning: RecordTuning = RecordTuning()
    on_info: Info | None = None
    on_warning: Info | None = None
    on_result: Callable[[ScenarioResult], None] | None = None


async def record_scenario(
    file: ScenarioFile,
    scenario: Scenario,
    options: ScenarioOptions = ScenarioOptions(),
) -> ScenarioResult:
    """Run ``scenario`` against the file's target as ``options`` say (see the module
    docstring); its cassette is ``<output>/<name>.jsonl``."""
    choice, output, environ = options.choice, options.output, options.environ
    tuning, on_info, on_warning = options.tuning, options.on_info, options.on_warning
    import anyio

    env = os.environ if environ is None else environ
    server = file.server(env)
    path = file.cassette_path(scenario.name, output)
    action = _DONE[plan(choice.mode, has_recording(path))]
    network = _network(server)
    redactor = tuning.redactor
    mode_options = ModeOptions(
        target=server.target(),
        transport=server.transport_name,
        front=server.transport_name if network else "stdio",
        strategy=tuning.strategy,
        fsync=tuning.fsync,
        redactor=project_redactor(file, env) if redactor == "project" else redactor,
        passthrough_stderr=False,
        upstream_timeout=tuning.upstream_timeout,
        policy=DeliveryPolicy(on_warning=on_warning),
        volatile=tuning.volatile,
        probe=tuning.probe,
    )
    answers = ScenarioAnswers(scenario.answers)
    outcome: list[tuple[list[StepResult], str]] = []

    async def drive(stream: FrameStream) -> None:
        outcome.append(await _session(McpClient(stream, answers), file, scenario, answers))

    async with anyio.create_task_group() as tg:
        if network:
            ready = _Ready()
            listen = ServeOptions(on_ready=ready.set)
            if tuning.max_message_bytes is not None:
                listen = attrs.evolve(listen, max_message_bytes=tuning.max_message_bytes)
            mode = attrs.evolve(mode_options, listen=listen)
            tg.start_soon(_serve_until_cancelled, path, choice, mode, on_info)
            url = await ready.wait()
            connector = _connector(server.transport_name)
            target = Target(url=url, headers=server.headers)
            async with connector.connect(target, ConnectOptions(standalone_stream=True)) as stream:
                await drive(stream)
            tg.cancel_scope.cancel()
        else:
            from cassette.transports.memory import memory_pair

            ours, theirs = memory_pair()
            ran: list[ModeResult] = []
            tg.start_soon(_run_client_side, path, choice, mode_options, theirs, on_info, ran)
            try:
                await drive(ours)
            finally:
                await ours.send_eof()
    steps, error = outcome[0] if outcome else ([], "the session did not run")
    if error and not network:
        error = _with_stderr(error, ran)
    return ScenarioResult(scenario.name, os.fspath(path), action, tuple(steps), error)


def _with_stderr(error: str, ran: list[ModeResult]) -> str:
    """A session that could not run, with what the server last said on its stderr (the
    line that states its error, as a failed ``record`` quotes it), when it said anything."""
    from cassette.runtime.record import stderr_excerpt

    recording = ran[0].recording if ran else None
    lines = recording.stderr_tail if recording is not None else ()
    if not any(line.strip() for line in lines):
        return error
    return f"{error}; {stderr_excerpt(lines)}"


async def reachable(url: str, seconds: float) -> None:
    """A server that cannot be reached is one error before anything is recorded, not a
    cassette per scenario holding the proxy's 502s: connecting touches nothing."""
    from urllib.parse import urlsplit

    import anyio

    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with anyio.fail_after(seconds):
            stream = await anyio.connect_tcp(parts.hostname or "", port)
    except (OSError, TimeoutError) as exc:
        raise TransportError(f"{url} cannot be reached: {exc or 'no answer'}") from exc
    await stream.aclose()


def _network(server: ServerTarget) -> bool:
    """Whether the target is reached through its transport's recording proxy."""
    if not server.is_url:
        return False
    from cassette.registry import get_transport
    from cassette.transport import CassetteFront, RecordingFront

    plugin = get_transport(server.transport_name)
    return isinstance(plugin, RecordingFront) and isinstance(plugin, CassetteFront)


def _connector(name: str) -> Any:
    from cassette.registry import get_connector

    return get_connector(name)


class _Ready:
    """The URL a network front reports once it listens."""

    def __init__(self) -> None:
        import anyio

        self._event = anyio.Event()
        self.url = ""

    def set(self, url: str) -> None:
        self.url = url
        self._event.set()

    async def wait(self) -> str:
        await self._event.wait()
        return self.url


async def _serve_until_cancelled(
    path: Path, choice: ModeChoice, options: ModeOptions, on_info: Info | None
) -> None:
    await run_mode(path, choice, attrs.evolve(options, on_info=on_info))


async def _run_client_side(
    path: Path,
    choice: ModeChoice,
    options: ModeOptions,
    stream: FrameStream,
    on_info: Info | None,
    ran: list[ModeResult],
) -> None:
    ran.append(await run_mode(path, choice, attrs.evolve(options, on_info=on_info), client=stream))


async def record_scenarios(
    file: ScenarioFile,
    names: Iterable[str] = (),
    options: ScenarioOptions = ScenarioOptions(),
) -> list[ScenarioResult]:
    """Run the named scenarios (all of them when none are named), one after the other,
    as ``options`` say; by default each is recorded afresh (mode ``all``)."""
    choice, output, environ = options.choice, options.output, options.environ
    chosen = [file.scenario(n) for n in names] or list(file.scenarios)
    server = file.server(environ)
    records = any(
        plan(choice.mode, has_recording(file.cassette_path(s.name, output))) is Action.RECORD
        for s in chosen
    )
    if server.url is not None and records:
        await reachable(server.url, file.timeout)
    results = []
    for scenario in chosen:
        result = await record_scenario(file, scenario, options)
        results.append(result)
        if options.on_result is not None:
            options.on_result(result)
    return results
