"""What a replay session waits for, and what it does when the wait ends badly.

Three waits, all answered by the runtime's deadlines (``cassette.core.wire.deadlines``), so
nothing can hang a session:

* a *server request* the replay sent (``sampling/createMessage``, ``roots/list``...)
  whose recording shows the server waiting for the client's answer: the replay is
  ``Paused`` there (``cassette.core.replay.playback``); no answer in time fails the request that
  waited on it;
* the server requests of an *input round*: a legacy client sent, as a legacy server
  sends them, what a 2026-07-28 recording's ``input_required`` asked for (the
  era-and-variant authority, ``cassette.core.replay.negotiation``, starts the round); once all
  are answered, the recorded retry is the next request (``round_answered``); an error,
  or no answer in time, fails the request that asked;
* a *client request* whose recording holds no answer (the client cancelled it while
  recording, or the recording ends first): the replay waits for the live client to cancel
  it too, and fails it at its deadline (``give_up``); when the recorded server exited
  while it was open (a crash mid-call), it fails at once and the session ends.

Every failure is a miss of the session (``misses`` is the replayer's own list) and a
JSON-RPC error to the request alone. Sans-IO.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from cassette.core.replay.playback import Played
from cassette.core.replay.replay_parts import answer_part, label, miss_line, where
from cassette.core.replay.reply import Reply
from cassette.core.replay.wildcards import mask_like
from cassette.core.wire.exchanges import Exchange
from cassette.core.wire.ids import IdKey, id_key
from cassette.core.wire.jsonrpc import REPLAY_MISS, JSONObject, error_response

if TYPE_CHECKING:
    from cassette.core.eras.rounds import InputRound
    from cassette.core.replay.misses import MissReport
    from cassette.core.replay.paused import Paused

__all__ = ["Waits"]

_CANCELLED: Final = "the client cancelled it while recording"
_ENDS: Final = "the recording ends before the server answered it"


class Waits:
    """One session's waits: server requests paused for the client's answer, by live id,
    and client requests without a recorded answer, by live id."""

    def __init__(self, misses: list[MissReport], source: str | None) -> None:
        self.misses = misses
        self.source = source
        self.paused: dict[object, Paused] = {}
        # requests whose recording has no answer, by live id: (exchange, request, why)
        self._no_answers: dict[object, tuple[Exchange, JSONObject, str]] = {}
        #: the input rounds' server requests, by live server-request id (``InputRound``)
        self.rounds: dict[IdKey, InputRound] = {}

    def pause(self, paused: Paused) -> object:
        """Wait for the client's answer to ``paused``'s server request; its live id."""
        live_id = paused.request.get("id")
        self.paused[id_key(live_id)] = paused
        return live_id

    def answered(self, server_id: object) -> Paused | None:
        """What waited for the answer to ``server_id`` (``None``: nothing did)."""
        return self.paused.pop(id_key(server_id), None)

    @property
    def waiting(self) -> tuple[object, ...]:
        """Live ids of server requests still waiting for the client's answer: paused
        exchanges', then input rounds'."""
        paused = tuple(paused.request.get("id") for paused in self.paused.values())
        return paused + tuple(key[1] for key in self.rounds)  # id_key keeps the id second

    def round_answered(self, message: JSONObject) -> Reply | JSONObject | None:
        """A client answer to an input round's server request: ``None`` when it is not
        one; the recorded retry (a request to answer as any other) once all are in; else
        what to send now (nothing yet, or the error when the client answered with one)."""
        round_ = self.rounds.pop(id_key(message.get("id")), None)
        if round_ is None:
            return None
        if "result" not in message:
            return self._round_failed(round_, "answered it with an error")
        if not round_.answer(id_key(message.get("id")), message["result"]):
            return Reply()
        return round_.retry()

    def abandon(self, server_id: object, what: str) -> Reply | None:
        """An input round's server request the client did not answer (``what`` says why):
        its request fails; ``None`` when ``server_id`` is not one."""
        round_ = self.rounds.pop(id_key(server_id), None)
        return None if round_ is None else self._round_failed(round_, what)

    def _round_failed(self, round_: InputRound, what: str) -> Reply:
        """The client did not give what the recorded retry needs: its request fails."""
        for key in [k for k, r in self.rounds.items() if r is round_]:
            del self.rounds[key]
        method = str(round_.origin.get("method"))
        summary = (
            f"{method}: the recording asks the client for input here (input_required, sent "
            f"to this legacy client as server requests) and the client {what}"
        )
        from cassette.core.replay.misses import MissReport

        report = MissReport("no-answer", method, summary)
        self.misses.append(report)
        origin = round_.origin.get("id")
        error = error_response(origin, REPLAY_MISS, f"cassette-mcp: {summary}")
        return Reply((error,), report, (None,), origin=origin, responded=True)

    def expire(self, server_id: object) -> Reply:
        """The client never answered server request ``server_id``: what waited on it fails
        (an input round's request, or a paused exchange's client request)."""
        failed = self.abandon(server_id, "did not answer it in time")
        if failed is not None:
            return failed
        paused = self.answered(server_id)
        if paused is None:
            return Reply()
        method = str(paused.request.get("method"))
        text = (
            f"the client did not answer {method} (id {server_id}) in time; the recording "
            "shows the server waiting for that answer before it went on"
        )
        from cassette.core.replay.misses import MissReport

        return self.fail(paused, MissReport("no-answer", method, text, paused.exchange.seq))

    def compared(
        self, paused: Paused, message: JSONObject, strict: bool
    ) -> tuple[str, ...] | Reply:
        """The client answered ``paused``'s server request with ``message``: the warnings
        to go on with (none when it answered as recorded, else where it differs), or under
        ``strict`` a differing answer's failure (a miss)."""
        from cassette.core.words.jsondiff import differences  # answered server requests only

        live = mask_like(paused.answer, message)
        diffs = differences(answer_part(paused.answer), answer_part(live), limit=3)
        if not diffs:
            return ()
        method = str(paused.request.get("method"))
        from cassette.core.words.said import NAME, VALUE, Quote, said

        text = said(
            "the client's answer to ",
            Quote(method, NAME),
            " (id ",
            Quote(message.get("id"), VALUE),
            ") differs from the recording at ",
            where(diffs),
        )
        if not strict:
            return (text,)
        from cassette.core.replay.misses import MissReport

        return self.fail(paused, MissReport("answer-differs", method, text, paused.exchange.seq))

    def not_asked(
        self, exchange: Exchange, skipped: list[str], warnings: tuple[str, ...], strict: bool
    ) -> tuple[tuple[str, ...], MissReport | None]:
        """Server requests left out for capabilities the client did not declare: a warning,
        and under ``strict`` a miss (the replay went on without what the recording had)."""
        text = (
            f"the recording sends {', '.join(skipped)} here, for a capability this client did "
            "not declare, so it was not sent; what the recording shows next was replayed"
        )
        if not strict:
            return (*warnings, text), None
        from cassette.core.replay.misses import MissReport

        report = MissReport("answer-differs", skipped[0], text, exchange.seq)
        self.misses.append(report)
        return warnings, report

    def no_answer(
        self,
        exchange: Exchange,
        live: JSONObject,
        played: Played,
        warnings: tuple[str, ...],
        since: float,
    ) -> Reply:
        """What the recording shows before its missing answer, then: an error at once and
        the session's end if the server exited here; otherwise a deadline."""
        times = tuple(played.times)
        if exchange.exited:
            summary = (
                f"{label(live)} was never answered: the recorded server exited while it "
                "was open, and the replay ends the session here as the server did"
            )
            from cassette.core.replay.misses import MissReport

            report = MissReport("no-answer", str(live.get("method")), summary, exchange.seq)
            failed = self.failed(live, report, exchange)
            return Reply(
                (*played.messages, *failed.messages),
                report,
                (*played.metas, None),
                exchange,
                live.get("id"),
                warnings=warnings,
                times=(*times, times[-1] if times else since),
                responded=True,
                since=since,
                closes=True,
            )
        why = _CANCELLED if exchange.cancelled else _ENDS
        self._no_answers[id_key(live.get("id"))] = (exchange, live, why)
        return Reply(
            tuple(played.messages),
            None,
            tuple(played.metas),
            exchange,
            live.get("id"),
            warnings=warnings,
            times=times,
            since=since,
            unanswered=True,
        )

    def fail(self, paused: Paused, report: MissReport) -> Reply:
        """The request that waited on ``paused``'s server request fails with ``report``."""
        self.misses.append(report)
        origin = paused.live.get("id")
        if "id" not in paused.live:
            return Reply(miss=report, origin=None)
        text = f"cassette-mcp: {report.summary}"
        error = error_response(origin, REPLAY_MISS, text, report.as_data())
        return Reply((error,), report, (None,), paused.exchange, origin, responded=True)

    def cancel(self, request_id: object) -> None:
        """The client cancelled ``request_id``: nothing waits on it now (its input round,
        if any, is over)."""
        self._no_answers.pop(id_key(request_id), None)  # cancelled: it needs no answer now
        for key, paused in list(self.paused.items()):
            if "id" in paused.live and id_key(paused.live["id"]) == id_key(request_id):
                del self.paused[key]
        for asked, round_ in list(self.rounds.items()):
            if id_key(round_.origin.get("id")) == id_key(request_id):
                del self.rounds[asked]

    def give_up(self, request_id: object) -> Reply:
        """The request ``request_id``, which the recording leaves unanswered, is still
        unanswered at its deadline: fail it with an error naming why (a miss)."""
        found = self._no_answers.pop(id_key(request_id), None)
        if found is None:  # the client cancelled it since: it is settled, with no answer
            return Reply(origin=request_id, responded=True)
        exchange, request, why = found
        summary = f"{label(request)} has no recorded answer: {why}"
        from cassette.core.replay.misses import MissReport

        report = MissReport("no-answer", str(request.get("method")), summary, exchange.seq)
        return self.failed(request, report, exchange)

    def failed(self, request: JSONObject, report: MissReport, exchange: Exchange) -> Reply:
        """``request`` answered with the error ``report`` names."""
        self.misses.append(report)
        text = f"cassette-mcp: {miss_line(report, self.source)}"
        error = error_response(request.get("id"), REPLAY_MISS, text, report.as_data())
        origin = request.get("id")
        return Reply((error,), report, (None,), exchange, origin, responded=True)
