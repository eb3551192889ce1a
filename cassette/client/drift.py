"""Re-fire a cassette's requests at a live server and say what drifted; optionally accept it.

Theory of operation
-------------------
The cassette is a session as its client saw it. Verify plays that client against the live
server (a command over stdio, or a URL over streamable HTTP or legacy SSE), in the era the
header names:

* **legacy**: the recorded ``initialize`` (the first; its answer must be a result) and
  ``notifications/initialized`` open the session, then every other request follows in
  recorded order (a dual-era client's ``server/discover`` probe before the handshake is
  sent before it, so a legacy server answers it as it did then);
* **modern** (2026-07-28): no handshake; each request already carries its envelope in
  ``params._meta`` and is sent as recorded.

A request the recording shows unanswered (a cancelled call, a ``subscriptions/listen``
stream) is not sent: there is nothing to compare with, and its effects would be real.
Each live answer is first redacted as the cassette is (``_Secrets``: the one gate's policy,
``cassette.store.gate``, with the project's rules, ``VerifyOptions.redact`` and the
cassette's header; a redacted position of the recording matches any live value), so a secret
neither shows in the report nor counts as drift, then classified by
``cassette.client.compare.classify``.

**The server's own questions.** While a request is in flight the live server may ask
(``sampling/createMessage``, ``elicitation/create``, ``roots/list``). Each is answered
with the client's answer recorded for it, found the way a replay finds a client request
(fingerprints, first unconsumed wins, under the ``default`` strategy; a redacted position
of the recording matches any live value). A question the recording does not hold is
drift, and never
a hang: when the recording asked the same method, the closest such recording answers it
(``SERVER-REQUEST-CHANGED``, with the paths that differ) so the call can finish; when it
never did, the server gets an error (``UNANSWERED``).

**Update.** With ``update``, each answer that drifted is written over the recorded one
(the recorded id kept, redacted as above, its placeholders kept where the recording had
them), each server request that changed gets the live params, and the header names the
program that wrote
the file; ``cassette.client.rewrite`` does it atomically under the cassette's lock, and
only those lines change. What cannot be written (no live answer in time, a question the
cassette cannot answer, and the answer to a call during which such a question was
refused, since that answer is the refusal's artefact) is listed in
``VerifyReport.kept``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from cassette.client.compare import Ignores, classify, differing_paths, label
from cassette.client.connection import McpClient
from cassette.client.launch import StderrTail, explained
from cassette.client.report import Verdict, VerifyReport
from cassette.client.rewrite import Snapshot, rewrite_lines
from cassette.client.target import ServerTarget
from cassette.core.eras.variants import split
from cassette.core.redaction.redactor import RedactionSession
from cassette.core.replay.matching import Candidate, FingerprintMatcher
from cassette.core.replay.wildcards import mask_like
from cassette.core.wire.jsonrpc import JSONObject
from cassette.core.wire.model import Event, Header, MessageEvent, RecorderInfo
from cassette.core.wire.pairing import Exchange, exchanges
from cassette.errors import ReplayMiss, TransportError, sole_exception
from cassette.store.gate import RedactOptions, for_target, joined, policy
from cassette.store.storage import Cassette
from cassette.transport import ConnectOptions

__all__ = ["Progress", "VerifyOptions", "plan", "verify"]

_HANDSHAKE: Final = frozenset({"initialize"})
#: The error a server gets for a question the cassette cannot answer (a replay's miss code).
NO_RECORDING: Final = -32099

#: ``progress(done, total)``, called after each compared request
Progress = Callable[[int, int], None]


@attrs.frozen(kw_only=True)
class VerifyOptions:
    """How ``verify`` compares: what it leaves out (``ignores``), the seconds each
    request may take (``time_limit``), whether the drift is written into the cassette
    (``update``), and who hears how far it is (``progress``)."""

    ignores: Ignores = Ignores()
    time_limit: float = 30.0
    update: bool = False
    progress: Progress | None = None
    #: the redaction rules added to the project's, as ``record`` takes them
    redact: RedactOptions = attrs.field(factory=RedactOptions)


def plan(cassette: Cassette) -> tuple[list[Exchange], Exchange | None, int]:
    """The client's requests in recorded order, the one handshake to redo (legacy: the
    first ``initialize``), and how many answers will be compared."""
    # the main recording: variant sessions are other clients, re-made by cassette variant
    pairs = [p for p in exchanges(split(cassette.events)[0])[0] if p.request.dir == "c2s"]
    handshake = None
    if cassette.era != "modern":
        handshake = next((p for p in pairs if p.method in _HANDSHAKE), None)
    compared = sum(p.response is not None and p.method not in _HANDSHAKE for p in pairs)
    return pairs, handshake, compared


class _Secrets:
    """Live messages as the cassette would hold them: redacted with its rules (its paths
    and named variables, their values taken from here) and the built-in ones, through one
    session so a secret keeps one placeholder for the whole run, and with every position
    the recording redacted (a placeholder, a typed sentinel) taken from the recording,
    since those match any live value. A cassette recorded without redaction is compared,
    and updated, as it is."""

    def __init__(
        self,
        header: Header,
        options: RedactOptions | None = None,
        headers: Mapping[str, str] | None = None,
        events: Iterable[Any] = (),
    ) -> None:
        # the one gate: the project's and the command's rules, the header's paths and
        # variables; a pattern the cassette was redacted with must be given again; and
        # the credentials sent upstream (``--header``), never written back. Numbered on
        # after the cassette's placeholders (``events``), as what --update writes joins it.
        redactor = joined(
            policy(options or RedactOptions()), header.redaction, events=(header, *events)
        )
        redactor = for_target(redactor, None, headers)
        self.session: RedactionSession | None = None if redactor is None else redactor.session()

    def redacted(self, live: JSONObject) -> tuple[JSONObject, tuple[str, ...]]:
        if self.session is None:
            return live, ()
        return self.session.message(live)

    def like(self, recorded: MessageEvent, live: JSONObject) -> tuple[JSONObject, tuple[str, ...]]:
        """``live`` redacted, the recording's redacted positions taken from it, and the
        pointers of the typed sentinels it now holds."""
        out, pointers = self.redacted(live)
        if self.session is None:
            return out, pointers
        masked: JSONObject = mask_like(recorded.message, out, recorded.redacted or ())
        return masked, tuple(dict.fromkeys((*(recorded.redacted or ()), *pointers)))


def _body(message: JSONObject) -> JSONObject:
    if "error" in message:
        return {"error": message["error"]}
    return {"result": message.get("result")}


class _ServerAnswers:
    """Answers the live server's requests from the recording (see the module docstring),
    and keeps what it had to say about them for the report and the update."""

    def __init__(self, cassette: Cassette, secrets: _Secrets) -> None:
        self.pairs = [
            p
            for p in exchanges(split(cassette.events)[0])[0]
            if p.request.dir == "s2c" and p.response is not None
        ]
        candidates = [
            Candidate(i, p.request.message, p.request.seq, p.request.redacted or ())
            for i, p in enumerate(self.pairs)
        ]
        self.matcher = FingerprintMatcher(candidates, "default")
        self.secrets = secrets
        self.line = 1  # the line of the client request in flight
        self.found: list[Verdict] = []
        self.kept: list[str] = []
        self.changed: dict[int, Event] = {}  # seq of a recorded server request: as it is now
        self._borrowed: set[int] = set()

    def take(self) -> list[Verdict]:
        found, self.found = self.found, []
        return found

    async def __call__(self, request: JSONObject) -> JSONObject:
        try:  # the recording's redacted positions match any live value
            return _body(self._answer(self.matcher.match(request)))
        except ReplayMiss as miss:
            if request.get("method") == "ping":
                return {"result": {}}
            return self._closest(request, str(miss))

    def _answer(self, key: int) -> JSONObject:
        response = self.pairs[key].response
        assert response is not None
        return response.message

    def _closest(self, live: JSONObject, why: str) -> JSONObject:
        method = live.get("method")
        taken = {c.key for c in self.matcher.unconsumed()} - self._borrowed
        spare = [i for i in sorted(taken) if self.pairs[i].request.message.get("method") == method]
        if not spare:
            shown = f"{label(self.secrets.redacted(live)[0])} (asked by the server)"
            self.found.append(Verdict(self.line, shown, "UNANSWERED", (), why))
            self.kept.append(
                f"line {self.line}: the server asks {method}, which it never asked in this "
                "recording: record the cassette again"
            )
            refusal = f"cassette: no recorded answer to {method}"
            return {"error": {"code": NO_RECORDING, "message": refusal}}
        key = spare[0]
        self._borrowed.add(key)
        recorded = self.pairs[key].request
        now, pointers = self.secrets.like(recorded, live)
        paths = differing_paths(recorded.message.get("params"), now.get("params"), prefix="/params")
        detail = "answered with the closest recording of this request"
        shown = f"{label(now)} (asked by the server)"
        self.found.append(Verdict(recorded.seq + 1, shown, "SERVER-REQUEST-CHANGED", paths, detail))
        asked: JSONObject = {**recorded.message, "params": now.get("params")}
        self.changed[recorded.seq] = _as_recorded(recorded, asked, pointers)
        return _body(self._answer(key))


async def _handshake(client: McpClient, pair: Exchange, time_limit: float) -> None:
    import anyio

    live: dict[str, Any] | None = None
    with anyio.move_on_after(time_limit) as scope:
        live = await client.request("initialize", pair.request.message.get("params"))
        if "error" not in live:
            await client.notify("notifications/initialized")
    if scope.cancelled_caught:
        raise TransportError(f"the live server did not finish the handshake in {time_limit:g}s")
    if live is None or "error" in live:
        import json

        raise TransportError(f"the live server refused initialize: {json.dumps(live)}")


@attrs.define
class _Run:
    """One verify session's state: verdicts so far and the lines an update would write."""

    cassette: Cassette
    ignores: Ignores
    update: bool
    secrets: _Secrets
    verdicts: list[Verdict] = attrs.Factory(list)
    events: dict[int, Event] = attrs.Factory(dict)
    kept: list[str] = attrs.Factory(list)
    compared: int = 0
    #: the live ``requestState`` of the last ``input_required`` answer, per request subject
    states: dict[tuple[str, str], str] = attrs.Factory(dict)

    def remember(self, request: JSONObject, live: JSONObject | None) -> None:
        """Keep the state a live ``input_required`` answer hands out for the retry."""
        result = live.get("result") if live is not None else None
        if isinstance(result, dict) and isinstance(result.get("requestState"), str):
            self.states[_subject(request)] = result["requestState"]

    def resumed(self, request: JSONObject) -> Any:
        """A recorded 2026-07-28 retry carries the state the server sealed in *its* run;
        the live server gets back the state it handed out in this one, with the client's
        recorded answers (``inputResponses``), as a client would retry."""
        params = request.get("params")
        state = self.states.get(_subject(request))
        if not isinstance(params, dict) or "requestState" not in params or state is None:
            return params
        return {**params, "requestState": state}

    def judge(
        self, pair: Exchange, live: JSONObject | None, time_limit: float, *, refused: bool = False
    ) -> None:
        """Classify the live answer; under update, keep it for the rewrite unless it is
        an artefact of this run (``refused``: the server was refused a question the
        cassette cannot answer, so its answer is not what a real client would get)."""
        assert pair.response is not None
        recorded = pair.response
        now, pointers = (None, ()) if live is None else self.secrets.like(recorded, live)
        status, paths, detail = classify(recorded.message, now, self.ignores)
        line = pair.request.seq + 1
        self.compared += 1
        self.verdicts.append(Verdict(line, label(pair.request.message), status, paths, detail))
        if not self.update or status == "MATCH":
            return
        if now is None:
            self.kept.append(
                f"line {line}: no live answer within {time_limit:g}s; kept as recorded"
            )
            return
        if refused:
            self.kept.append(
                f"line {line}: answered after a question the cassette cannot answer; kept "
                "as recorded"
            )
            return
        answer = {"jsonrpc": "2.0", "id": recorded.message.get("id"), **_body(now)}
        self.events[recorded.seq] = _as_recorded(recorded, answer, pointers)


def _as_recorded(event: MessageEvent, message: JSONObject, pointers: tuple[str, ...]) -> Event:
    """``event`` (its line, time and transport facts) now carrying ``message``."""
    return attrs.evolve(event, message=message, redacted=pointers or None)


def _subject(request: JSONObject) -> tuple[str, str]:
    params = request.get("params")
    params = params if isinstance(params, dict) else {}
    subject = params.get("name") or params.get("uri")
    return str(request.get("method")), str(subject)


async def verify(
    tape: Cassette | str | os.PathLike[str],
    server: ServerTarget | Sequence[str] | str,
    options: VerifyOptions = VerifyOptions(),
) -> VerifyReport:
    """Re-fire the recorded client requests at ``server`` (a ``ServerTarget``, a command
    line, or a streamable-HTTP URL) in the recorded era, classify every answer, and with
    ``options.update`` write the drift into the cassette (see the module docstring)."""

    from cassette.registry import get_connector

    if not isinstance(server, ServerTarget):
        server = ServerTarget.of(server)
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    source = cassette.source or "<cassette>"
    snapshot = Snapshot.of(source) if options.update else None
    pairs, handshake, total = plan(cassette)
    secrets = _Secrets(cassette.header, options.redact, server.headers, cassette.events)
    run = _Run(cassette, options.ignores, options.update, secrets)
    answers = _ServerAnswers(cassette, secrets)
    connector = get_connector(server.transport_name)
    tail = StderrTail()  # what a server that fails said, to quote (``cassette.client.launch``)
    # standalone: where a server may ask, unprompted
    listening = ConnectOptions(standalone_stream=True, on_side_event=tail)
    try:
        async with connector.connect(server.target(), listening) as stream:
            client = McpClient(stream, answers)
            await _session(client, run, answers, (pairs, handshake, total), options)
    except Exception as raised:
        exc = sole_exception(raised)
        said = explained(exc, tail, "the server closed the connection")
        if said is exc:
            raise
        raise said from exc
    return await _finish(run, answers, source, snapshot)


async def _session(
    client: McpClient,
    run: _Run,
    answers: _ServerAnswers,
    planned: tuple[list[Exchange], Exchange | None, int],
    options: VerifyOptions,
) -> None:
    """Each recorded request again, in order, each answer judged (``plan`` made
    ``planned``)."""
    import anyio

    pairs, handshake, total = planned
    time_limit, progress = options.time_limit, options.progress
    for pair in pairs:
        answers.line = pair.request.seq + 1
        if pair is handshake:
            await _handshake(client, pair, time_limit)
            run.verdicts += answers.take()
            continue
        if pair.response is None or pair.method in _HANDSHAKE:
            continue  # nothing to compare with; later handshakes are other sessions'
        live: JSONObject | None = None
        params = run.resumed(pair.request.message)
        with anyio.move_on_after(time_limit):
            live = await client.request(pair.method, params)
        run.remember(pair.request.message, live)
        asked = answers.take()
        run.verdicts += asked
        refused = any(v.status == "UNANSWERED" for v in asked)
        run.judge(pair, live, time_limit, refused=refused)
        if progress is not None:
            progress(run.compared, total)


async def _finish(
    run: _Run, answers: _ServerAnswers, source: str, snapshot: Snapshot | None
) -> VerifyReport:
    kept = (*run.kept, *answers.kept) if run.update else ()
    if not run.update:
        return VerifyReport(source, tuple(run.verdicts))
    run.events.update(answers.changed)
    if not run.events:
        return VerifyReport(source, tuple(run.verdicts), kept=kept)
    assert snapshot is not None
    from cassette._version import __version__

    header = attrs.evolve(run.cassette.header, recorder=RecorderInfo("cassette-mcp", __version__))
    await rewrite_lines(source, snapshot, header, run.events)
    return VerifyReport(source, tuple(run.verdicts), updated=True, kept=kept)
