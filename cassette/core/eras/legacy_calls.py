"""A legacy client's tool call answered from a 2026-07-28 recording, where the live server
would have treated that client differently: what the replay says of it.

Theory of operation
-------------------
A server that serves both eras may answer one tool call differently by era: on a legacy
session it asks the client for input with server requests (sampling, elicitation,
roots), on a 2026-07-28 one with an ``input_required`` round, or it cannot ask at all
and refuses the call (fastmcp 4); it words a refusal for want of a capability in each
era its own way, and shapes what it asks per era (mcp 2.3.0 gives an elicitation schema
a ``title`` on legacy sessions only). A 2026-07-28 recording holds the one era's answer.
Recording the other would mean running the user's tool calls again at record time,
which a recording never does: a tool with effects would have them twice.

So the replay serves the recorded answer to the legacy client (an ``input_required``
round bridged into server requests by ``cassette.core.replay.negotiation``) and says what it
cannot know, once per tool in a warning (the log), and in every error it answers for
that tool: this tool's legacy behaviour was not recorded, and ``cassette variant TAPE
--as legacy`` records it. The same holds for a client of the recording's era that
declares other capabilities than the recording's client (roots, sampling, elicitation):
a server that checks a file against the client's roots refused the recording's client,
which declared none, and would read it for a client whose root holds it; the replay says
that the tool's behaviour for a client of these capabilities was not recorded, and that
``cassette variant TAPE --as NAME`` (or ``--capabilities``) records it, in the warning
only: the recorded answer may well be this client's too (fastmcp refuses every
2026-07-28 client alike), so it is served unchanged.

The calls it says it of are those whose recorded answer asked the client for input or
refused the call (a JSON-RPC error, or a result marked ``isError``): the answers whose
counterpart for this client the recording cannot show. A plain result is served as it
is, unannounced.

A module of its own: only a replay that meets such a call imports it.
"""

from __future__ import annotations

from typing import Any, Final

from cassette.core.eras.bridge import is_input_required
from cassette.core.wire.exchanges import Exchange
from cassette.core.wire.jsonrpc import JSONObject

__all__ = ["ANNOUNCED", "announcement", "era_dependent", "with_note"]

#: the words every announcement holds (the client matrix looks for them)
ANNOUNCED: Final = "was not recorded"


def announcement(tool: str, *, legacy: bool = True) -> str:
    """What the replay says of ``tool``, once in the log and in every error for it: to a
    legacy client of a 2026-07-28 recording (``legacy``), or to a client declaring other
    capabilities than the recording's client."""
    if legacy:
        return (
            f"tools/call {tool}: this tool's legacy behaviour {ANNOUNCED} (the cassette is a "
            "2026-07-28 session; a live server may ask a legacy client for input, or refuse "
            "it, otherwise; tool calls are never run again to record the other era): "
            "cassette variant TAPE --as legacy records it"
        )
    return (
        f"tools/call {tool}: this tool's behaviour for a client of these capabilities "
        f"{ANNOUNCED} (the recording's client declared others; a live server may ask this "
        "one for input, or refuse it, otherwise; tool calls are never run again to record "
        "it): cassette variant TAPE --as NAME (a client profile) or --capabilities LIST "
        "records it"
    )


def recorded_answer(exchange: Exchange) -> JSONObject | None:
    """The recorded response to ``exchange``'s request, if the recording holds one."""
    for item in exchange.items:
        if item.role == "response" and isinstance(item.message, dict):
            return item.message
    return None


def era_dependent(exchange: Exchange) -> bool:
    """Whether the recorded answer asked the client for input or refused the call."""
    answer = recorded_answer(exchange)
    if answer is None:
        return False
    if "error" in answer or is_input_required(answer):
        return True
    result = answer.get("result")
    return isinstance(result, dict) and result.get("isError") is True


def with_note(message: Any, note: str) -> Any:
    """``message`` (an answer to the client) carrying ``note`` when it is an error: in the
    JSON-RPC error's message, or as one more text item of a result marked ``isError``,
    where the clients that show a tool's error text show it. Anything else as it is."""
    if not isinstance(message, dict):
        return message
    said = f"cassette-mcp: {note}"
    error = message.get("error")
    if isinstance(error, dict):
        text = str(error.get("message", ""))
        return {**message, "error": {**error, "message": f"{text}; {said}" if text else said}}
    result = message.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        content = result.get("content")
        items = list(content) if isinstance(content, list) else []
        noted = [*items, {"type": "text", "text": said}]
        return {**message, "result": {**result, "content": noted}}
    return message
