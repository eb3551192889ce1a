"""A 2026-07-28 ``subscriptions/listen`` that the recording does not hold, answered as the
recorded server would answer it.

A dual-era client such as Claude Code opens a listen stream as soon as its session is up,
to hear of changed tool, prompt and resource lists; the Python SDK's client opens none, so
a cassette it recorded has no listen to replay. A 2026-07-28 server answers every listen
the same way: it acknowledges the notifications it will send
(``notifications/subscriptions/acknowledged``, tagged with the listen request's id), then
keeps the stream open until the client closes it, sending a notification only when a list
changes. Which lists can change the recorded handshake says: those whose capability has
``listChanged``. So the replay acknowledges what the client asked of those and keeps the
stream open, with no miss; nothing changes in a replay, so nothing more is sent. A
recording whose handshake shows no capabilities cannot tell, and the listen is a miss as
before. Other kinds of subscription (a resource's updates) are not acknowledged: the
recording shows nothing of what the server would do with them.
"""

from __future__ import annotations

from typing import Final

from cassette.core.wire.exchanges import Exchange, Item
from cassette.core.wire.jsonrpc import JSONObject
from cassette.core.wire.mcp import SUBSCRIPTION_ID_META

__all__ = ["unrecorded_listen"]

#: each list-changed notification a listen asks for, and the capability that offers it
_LISTS: Final = {
    "toolsListChanged": "tools",
    "promptsListChanged": "prompts",
    "resourcesListChanged": "resources",
}
_ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"


def unrecorded_listen(message: JSONObject, handshake: JSONObject | None) -> Exchange | None:
    """The exchange a live server's answer to the listen request ``message`` makes: its
    acknowledgement and no response (the stream stays open); ``None`` when ``message`` is
    no listen request or the recorded ``handshake`` shows no capabilities."""
    if message.get("method") != "subscriptions/listen" or "id" not in message:
        return None
    capabilities = handshake.get("capabilities") if handshake else None
    if not isinstance(capabilities, dict):
        return None
    params = message.get("params")
    asked = params.get("notifications") if isinstance(params, dict) else None
    granted = {
        name: True
        for name, wanted in (asked.items() if isinstance(asked, dict) else ())
        if wanted is True and _changes(capabilities, _LISTS.get(name))
    }
    ack: JSONObject = {
        "jsonrpc": "2.0",
        "method": _ACKNOWLEDGED,
        "params": {"_meta": {SUBSCRIPTION_ID_META: message["id"]}, "notifications": granted},
    }
    return Exchange(key=-1, message=message, seq=-1, items=[Item("other", ack)])


def _changes(capabilities: dict[str, object], name: str | None) -> bool:
    offered = capabilities.get(name) if name is not None else None
    return isinstance(offered, dict) and offered.get("listChanged") is True
