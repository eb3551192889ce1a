"""Small pure helpers of a replay: the parts of a message it compares, and the lines it
writes for a person (labels, misses with their closest recording). Sans-IO."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from cassette.core.replay.matching import one_line, quoted_diffs
from cassette.core.replay.reply import Reply, _reply
from cassette.core.replay.wildcards import mask_like
from cassette.core.wire.exchanges import Exchange, Item
from cassette.core.wire.jsonrpc import (
    INVALID_REQUEST,
    JSONObject,
    Kind,
    classify_value,
    error_response,
)

if TYPE_CHECKING:
    from cassette.core.eras.listings import Group, Surface
    from cassette.core.replay.misses import MissReport
    from cassette.core.replay.playback import Playback
    from cassette.core.words.jsondiff import Difference

__all__ = [
    "INPUTS",
    "answer_batch",
    "answer_part",
    "asked_at_end",
    "env_values",
    "input_responses_differ",
    "joined",
    "label",
    "miss_line",
    "needs_answer",
    "params",
    "played",
    "played_raw",
    "summary_lines",
    "where",
]

#: the member a 2026-07-28 retry carries the client's answers in
INPUTS: Final = "inputResponses"


def needs_answer(exchange: Exchange, live: JSONObject) -> bool:
    """A request whose recording holds no answer (a listen stream never has one: it stays
    open until the client closes it)."""
    return (
        "id" in live
        and exchange.raw is None
        and not exchange.answered
        and live.get("method") != "subscriptions/listen"
    )


def label(request: JSONObject) -> str:
    """A request as a person names it: its method, and a tool call's tool (one line)."""
    method = one_line(request.get("method"))
    if method == "tools/call":
        return f'{method} "{one_line(params(request).get("name"))}"'
    return method


def played(items: Sequence[Item]) -> Reply:
    """Recorded server messages, sent as they were (a preamble)."""
    return Reply(tuple(i.message for i in items), None, tuple(i.meta for i in items))


def played_raw(exchange: Exchange) -> Reply:
    """A raw exchange's recorded answer, sent as it was (what the server said to the same
    frame, if anything)."""
    items = exchange.items
    return Reply(
        tuple(i.message for i in items),
        None,
        tuple(i.meta for i in items),
        exchange,
        times=tuple(i.t for i in items),
        responded=exchange.answered,
        since=exchange.t,
    )


def miss_line(report: MissReport, source: str | None) -> str:
    """A miss in one line, with where its closest recording is (a ``Said`` when the
    summary is one: ``cassette.core.words.said``)."""
    line = report.closest_line
    if line is None:
        return report.summary
    where = f"{source}:{line}" if source else f"line {line}"
    from cassette.core.words.said import prose, said

    return said(prose(report.summary), f" (closest recording: {where})")


def params(message: JSONObject) -> dict[str, Any]:
    """A message's params when they are an object, else an empty one."""
    found = message.get("params")
    return found if isinstance(found, dict) else {}


def answer_part(message: JSONObject) -> Any:
    """What a client answer says, without the parts that may vary between runs."""
    if "error" in message:
        return {"error": message["error"]}
    result = message.get("result")
    if isinstance(result, dict):
        return {k: v for k, v in result.items() if k != "_meta"}
    return result


def where(diffs: Sequence[Difference]) -> str:
    """Where two values differ, for a person (a ``Said``: the paths and values quoted)."""
    return quoted_diffs(diffs)


def input_responses_differ(recorded: JSONObject, live: JSONObject) -> tuple[str, ...]:
    """A 2026-07-28 retry carries the client's ``inputResponses``; say if they changed."""
    mine, theirs = params(recorded).get(INPUTS), params(live).get(INPUTS)
    if mine is None and theirs is None:
        return ()
    from cassette.core.words.jsondiff import differences

    diffs = differences(mine, mask_like(mine, theirs), limit=3)
    if not diffs:
        return ()
    from cassette.core.words.said import NAME, Quote, said

    method = Quote(live.get("method"), NAME)
    return (said(method, ": inputResponses differ from the recording at ", where(diffs)),)


def env_values(info: Mapping[str, Any], environ: Mapping[str, str] | None) -> list[str]:
    """Values of the environment variables the recording named as secret, if set here."""
    names = info.get("env") or ()
    return [v for n in names if isinstance(n, str) and (v := (environ or {}).get(n))]


def summary_lines(misses: Sequence[MissReport], repeats: int, source: str | None) -> str:
    """A session's end account: the answers repeated on request (``allow_repeats``), then
    one line per miss with where its closest recording is ("" when neither)."""
    from cassette.core.words.said import prose, said

    lines: list[str] = []
    if repeats:
        lines.append(
            f"{repeats} request(s) answered again with their last recording (allow_repeats)"
        )
    if misses:
        lines.append(f"{len(misses)} request(s) had no recording:")
        lines += [said("  - ", prose(miss_line(m, source))) for m in misses]
    return joined(lines, ours=True)


def joined(lines: Sequence[str], separator: str = "\n", *, ours: bool = False) -> str:
    """Lines joined as ``str.join`` does, keeping what each quotes (``cassette.core.words.said``):
    a line that is no ``Said`` is redacted whole when read, unless it is ``ours``."""
    from cassette.core.words.said import prose, said

    pieces: list[str] = []
    for index, line in enumerate(lines):
        pieces += [separator] * bool(index) + [line if ours else prose(line)]
    return said(*pieces) if pieces else ""


def answer_batch(batch: list[Any], dispatch: Callable[[Kind, Any], Reply]) -> Reply:
    """A JSON-RPC batch answered element by element (``dispatch``), as one reply: what
    the server said on its own first, then the batch of answers; a nested batch is an
    Invalid Request, as the spec has it."""
    before: list[Any] = []
    answers: list[Any] = []
    misses: list[MissReport] = []
    for element in batch:
        kind = classify_value(element)
        if kind is Kind.BATCH:
            answers.append(error_response(None, INVALID_REQUEST, "Invalid Request"))
            continue
        reply = dispatch(kind, element)
        if reply.miss is not None:
            misses.append(reply.miss)
        for msg in reply.messages:
            is_answer = isinstance(msg, dict) and "method" not in msg
            if is_answer and (kind is not Kind.REQUEST or msg.get("id") == element.get("id")):
                answers.append(msg)
            else:
                before.append(msg)
    out = (*before, answers) if answers else tuple(before)
    return Reply(out, misses[0] if misses else None, (None,) * len(out))


def asked_at_end(surface: Surface | None, playback: Playback, group: Group) -> Reply:
    """What the server asked the recorder's probe of the client's listing key of its own
    accord (``cassette.core.eras.listings.Surface.at_end``), for a legacy session whose
    client's input ended: each request the client's capabilities allow and its session
    was not sent, under the session's next server ids. Nothing awaits their answers: a
    client that closed its output gives none."""
    if surface is None or playback.capabilities is None:
        return Reply()
    asks = surface.at_end(playback.capabilities, group)
    sent = [
        playback.own_request(ask)
        for ask in asks
        if ask.get("method") not in playback.asked and playback.may_ask(ask)
    ]
    return _reply(sent)
