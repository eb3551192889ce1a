"""Recording variant sessions: the same session again, as another client would hold it.

``cassette variant TAPE --as NAME`` re-sends the requests TAPE's client sent to the live
server, as the client profile ``NAME`` (``PROFILES``) would: in its era, declaring its
capabilities, answering the server's questions its way. The session is recorded as any
scenario is (``cassette.client.record``: through the recording proxy, redacted) into a
scratch folder, then appended to TAPE with each message and raw event marked
``meta.variant = NAME``, under the cassette's lock, in one write. Its stderr, exit and
HTTP status lines are not kept: they belong to the main recording's reading of a file.
A replay then answers each client from the group its handshake fits
(``cassette.core.eras.variants``).

A variant sends every answered request of the recording again, for real: a tool with
effects (a file written, a message sent) has them once more. That is why variants are
recorded on request, never by default.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from cassette.client.record import RecordTuning, ScenarioOptions, reachable, record_scenario
from cassette.client.scenarios import Answers, Scenario, ScenarioFile, Step
from cassette.client.target import ServerTarget
from cassette.core.eras.profiles import CLIENTS
from cassette.core.eras.variant_plan import RecordedClient, recorded_client
from cassette.core.eras.variants import compared, split, variant_of
from cassette.core.wire.jsonrpc import METHOD_NOT_FOUND
from cassette.core.wire.mcp import LATEST_LEGACY
from cassette.core.wire.meta import VARIANT
from cassette.core.wire.model import Era, MessageEvent, RawEvent
from cassette.core.wire.pairing import exchanges
from cassette.errors import UsageError
from cassette.modes.policy import ModeChoice
from cassette.store.files import write_atomic
from cassette.store.lock import FileLock
from cassette.store.storage import Cassette, append_events, timed_after

__all__ = [
    "PROFILES",
    "Profile",
    "VariantOptions",
    "VariantResult",
    "custom_profile",
    "record_variant",
]

Info = Callable[[str], None]


@attrs.frozen
class Profile:
    """A client as a variant plays it. ``None`` members are the recorded client's own:
    its era, capabilities, answers and ``clientInfo``."""

    name: str
    summary: str
    era: Era | None = None
    capabilities: Mapping[str, Any] | None = None
    #: method -> ``{"result": ...}`` or ``{"error": ...}``: how it answers the server
    answers: Mapping[str, dict[str, Any]] | None = None
    client_info: Mapping[str, Any] | None = None
    legacy_version: str | None = None
    #: the client and version the profile was read from (``None``: the recorded client)
    taken_from: str | None = None


#: The profiles ``--as`` takes: the table of known clients (``cassette.core.eras.profiles``).
PROFILES: Final[Mapping[str, Profile]] = {c["name"]: Profile(**c) for c in CLIENTS}

#: What ``--capabilities NAME,...`` declares for each name (any other name: ``{}``).
_DECLARED: Final[Mapping[str, Mapping[str, Any]]] = {"roots": {"listChanged": True}}


def custom_profile(name: str, capabilities: Sequence[str], roots: Sequence[str] = ()) -> Profile:
    """The client ``name`` (a profile of ``PROFILES``, else the recorded client) declaring
    exactly ``capabilities`` (``roots``, ``sampling``, ``elicitation``, ...), its
    ``roots/list`` answered with ``roots`` (URIs): ``--capabilities`` and ``--roots``."""
    base = PROFILES.get(name, Profile(name, f"the recorded client declaring {capabilities}"))
    declared = {c: dict(_DECLARED.get(c, {})) for c in capabilities if c}
    answers = dict(base.answers or {})
    if "roots" in declared:
        listed = [{"uri": uri} for uri in roots]
        answers["roots/list"] = {"result": {"roots": listed}}
    elif roots:
        raise UsageError("--roots needs the roots capability (--capabilities roots,...)")
    return attrs.evolve(base, capabilities=declared, answers=answers or base.answers)


@attrs.frozen
class VariantResult:
    """What one ``--as NAME`` did: ``appended`` lines, or why nothing was (``skipped``:
    the recording already is that client; ``error``: the server refused the session)."""

    name: str
    appended: int = 0
    requests: int = 0
    skipped: str = ""
    error: str = ""
    failed_steps: tuple[str, ...] = ()
    #: questions the server asked that neither the recording nor ``answers`` answered
    unanswered: tuple[str, ...] = ()


def _profile(name: str | Profile) -> Profile:
    if isinstance(name, Profile):
        return name
    found = PROFILES.get(name)
    if found is None:
        from cassette.core.words.suggest import unknown_choice

        raise UsageError(unknown_choice("variant", name, PROFILES))
    return found


def _capabilities(client: RecordedClient, chosen: Profile) -> Mapping[str, Any]:
    """What the variant's client declares: the profile's, else the recorded client's."""
    return client.capabilities if chosen.capabilities is None else chosen.capabilities


def _already(
    cassette: Cassette, client: RecordedClient, chosen: Profile, era: Era, *, replace: bool
) -> str:
    """Why recording ``chosen`` would add nothing ("" when it would add something)."""
    _, variants = split(cassette.events)
    if chosen.name in variants and not replace:
        return (
            f"the cassette already holds a variant named {chosen.name} (--replace records it again)"
        )
    same_caps = compared(_capabilities(client, chosen)) == compared(client.capabilities)
    fresh_answers = chosen.answers is not None and dict(chosen.answers) != dict(client.answers)
    if era == client.era and same_caps and not fresh_answers:
        return f"the recording already is a {era} session with these capabilities"
    return ""


def _scenario_file(
    client: RecordedClient,
    chosen: Profile,
    era: Era,
    *,
    server: ServerTarget,
    scratch: Path,
    step_seconds: float,
) -> ScenarioFile:
    steps = tuple(
        Step(index, "request", method, params, line)
        for index, (line, method, params) in enumerate(client.requests, start=1)
    )
    given = client.answers if chosen.answers is None else chosen.answers
    answers = Answers(
        {m: a["result"] for m, a in given.items() if "result" in a},
        {m: a["error"] for m, a in given.items() if "error" in a},
    )
    scenario = Scenario(chosen.name, steps, answers, 1)
    target: dict[str, Any] = (
        {"url": server.url, "transport": server.transport_name}
        if server.url is not None
        else {"command": list(server.command)}
    )
    if server.cwd is not None:
        target["cwd"] = server.cwd  # absolute: the file's folder does not move it
    if server.env:
        target["env"] = dict(server.env)
    if server.headers:
        target["headers"] = dict(server.headers)
    legacy = chosen.legacy_version or client.legacy_version or LATEST_LEGACY
    return ScenarioFile(
        path=Path.cwd() / "cassette-variant",  # a command runs here, as record ran it
        target=target,
        era=era,
        legacy_version=legacy,
        client_info=dict(chosen.client_info or client.client_info),
        capabilities=dict(_capabilities(client, chosen)),
        answers=Answers(),
        output=scratch,
        timeout=step_seconds,
        scenarios=(scenario,),
    )


def _marked(events: Sequence[Any], name: str) -> list[Any]:
    """The variant's message and raw events, each marked as the variant's."""
    return [
        attrs.evolve(e, meta={**(e.meta or {}), VARIANT: name})
        for e in events
        if isinstance(e, MessageEvent | RawEvent)
    ]


def _replace(
    tape: str | os.PathLike[str], cassette: Cassette, name: str, events: list[Any]
) -> None:
    """``tape`` without variant ``name``'s old lines and with ``events`` at its end, written
    whole or not at all (the new events' times follow the last kept line's, as an append
    would make them)."""
    kept = [e for e in cassette.events if variant_of(e) != name]
    moved = timed_after(events, kept[-1].t if kept else None)
    write_atomic(tape, attrs.evolve(cassette, events=(*kept, *moved)).dumps())


@attrs.frozen(kw_only=True)
class VariantOptions:
    """How ``record_variant`` records: written as ``tuning`` says (no redaction by
    default: the variant is redacted as the cassette it joins), each step allowed
    ``step_seconds``, an existing variant of that name replaced only with ``replace``,
    the server's questions answered from ``answers`` (by method), and what it does told
    to ``on_info``."""

    tuning: RecordTuning = RecordTuning(redactor=None)
    step_seconds: float = 30.0
    replace: bool = False
    answers: Mapping[str, dict[str, Any]] | None = None
    on_info: Info | None = None


async def record_variant(
    tape: str | os.PathLike[str],
    name: str | Profile,
    server: ServerTarget,
    options: VariantOptions = VariantOptions(),
) -> VariantResult:
    """Record variant ``name`` of ``tape`` against ``server`` and append it (see above);
    the cassette's lock is held throughout, so no other writer changes it meanwhile."""
    tuning, step_seconds, replace = options.tuning, options.step_seconds, options.replace
    answers, on_info = options.answers, options.on_info
    chosen = _profile(name)
    lock = FileLock(tape)
    await lock.wait(on_wait=lambda: on_info and on_info(f"waiting for {tape}: being written"))
    try:
        return await _record(
            tape,
            chosen,
            server,
            tuning=tuning,
            step_seconds=step_seconds,
            replace=replace,
            answers=answers or {},
            on_info=on_info,
        )
    finally:
        lock.release()


async def _record(
    tape: str | os.PathLike[str],
    chosen: Profile,
    server: ServerTarget,
    *,
    tuning: RecordTuning,
    step_seconds: float,
    replace: bool,
    answers: Mapping[str, dict[str, Any]],
    on_info: Info | None,
) -> VariantResult:
    cassette = Cassette.load(tape)
    main, _ = split(cassette.events)
    era: Era = chosen.era or cassette.era
    client = recorded_client(cassette.era, main)
    client = attrs.evolve(client, answers={**client.answers, **answers})
    why = _already(cassette, client, chosen, era, replace=replace)
    if why:
        return VariantResult(chosen.name, skipped=why)
    if not client.requests:
        return VariantResult(chosen.name, skipped="the recording holds no answered request")
    if server.url is not None:
        await reachable(server.url, step_seconds)  # one clear error, not a refused session
    with tempfile.TemporaryDirectory(prefix="cassette-variant-") as scratch:
        file = _scenario_file(
            client, chosen, era, server=server, scratch=Path(scratch), step_seconds=step_seconds
        )
        # no probes: they are the main recording's, and marked as the variant's they
        # would be a second copy under the same probe names, for as many server starts
        unprobed = attrs.evolve(tuning, probe=False)
        options = ScenarioOptions(
            choice=ModeChoice("all", "cassette variant"), tuning=unprobed, on_info=on_info
        )
        result = await record_scenario(file, file.scenarios[0], options)
        if result.error:
            return VariantResult(chosen.name, error=result.error)
        recorded = Cassette.load(result.cassette)
    events = _marked(recorded.events, chosen.name)
    if any(variant_of(e) == chosen.name for e in cassette.events):
        _replace(tape, cassette, chosen.name, events)
    else:
        append_events(tape, events)
    failed = tuple(f"{s.step.describe()}: {s.detail}" for s in result.failed)
    return VariantResult(
        chosen.name,
        len(events),
        len(client.requests),
        failed_steps=failed,
        unanswered=_refused_questions(events),
    )


def _refused_questions(events: Sequence[Any]) -> tuple[str, ...]:
    """The server's questions the variant's client answered ``Method not found`` (it had
    no answer for them): the variant holds what the server did with that refusal, not
    what it does with the answer a real client of that kind gives."""
    refused = []
    for pair in exchanges(list(events))[0]:
        answer = pair.response.message if pair.response is not None else {}
        error = answer.get("error")
        if (
            pair.request.dir == "s2c"
            and isinstance(error, dict)
            and error.get("code") == METHOD_NOT_FOUND
        ):
            refused.append(pair.method)
    return tuple(dict.fromkeys(refused))
