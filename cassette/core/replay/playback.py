"""Playing one exchange back: what to send, in what order, and where to stop and wait.

Theory of operation
-------------------
An exchange's items are played in recorded order with four rewrites, all about making a
recording of someone else's session fit the live one:

* the response takes the live request's id;
* progress notifications take the live request's ``progressToken`` (and are left out when
  the live request asked for no progress);
* a request the server sent to the client takes the next id of *this* session's server
  sequence (server ids are their own sequence, counted from 0, independent of the client's);
* a 2026-07-28 ``subscriptions/listen`` never gets its recorded end: the stream stays
  open until the live client closes it; notifications tagged with its recorded id as their
  ``subscriptionId`` carry the live listen request's id instead;
* ``notifications/message`` (logging) is sent only at or above the live log level: the one
  set with ``logging/setLevel`` (legacy) or, in the 2026-07-28 era, the one the live
  request's ``_meta`` asked for (no level asked, no log messages);
* a server request for a capability the live client did not declare (``roots/list``,
  ``sampling/createMessage``, ``elicitation/create``) is not sent, as a live server would
  not send it; the wait for its answer is skipped too, and ``Played.skipped`` names it.

The recorded client *answer* to a server request is a wait point: playing stops there and
returns a ``Paused`` continuation, resumed when the live client answers that request. So
what the server said after the answer in the recording reaches the client after its own
answer, never before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from cassette.core.wire.exchanges import Exchange, Item, progress_token
from cassette.core.wire.ids import id_key
from cassette.core.wire.jsonrpc import JSONObject
from cassette.core.wire.mcp import LOG_LEVEL_META, SUBSCRIPTION_ID_META

if TYPE_CHECKING:
    from cassette.core.replay.paused import Paused

__all__ = ["LOG_LEVELS", "Playback", "Played"]

#: RFC 5424 severities in ascending order, as MCP logging names them.
LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


@attrs.define(eq=False)  # compared by identity: no __eq__ to build at import
class Played:
    """What playing (part of) an exchange produced."""

    messages: list[Any] = attrs.field(factory=list)
    metas: list[Any] = attrs.field(factory=list)
    times: list[float] = attrs.field(factory=list)
    paused: Paused | None = None
    responded: bool = False
    skipped: list[str] = attrs.field(factory=list)  # server requests not sent (capabilities)

    def add(self, message: Any, item: Item) -> None:
        self.messages.append(message)
        self.metas.append(item.meta)
        self.times.append(item.t)


#: The client capability each server request needs.
_NEEDS: Final = {
    "roots/list": "roots",
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
}


def _response(message: JSONObject, live: JSONObject) -> JSONObject | None:
    """The recorded response under the live request's id (none for a listen stream)."""
    if live.get("method") == "subscriptions/listen":
        # A listen stream ends when its client closes it; what the recording shows ending
        # it is that session's own closing, not part of the conversation.
        return None
    return {**message, "id": live.get("id")}


def _severity(level: object) -> int:
    return LOG_LEVELS.index(level) if level in LOG_LEVELS else 0


def _meta_level(message: JSONObject) -> object:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(LOG_LEVEL_META) if isinstance(meta, dict) else None


@attrs.define(eq=False)  # compared by identity: no __eq__ to build at import
class Playback:
    """Per-session state of playback: the server's id sequence and the log level."""

    modern: bool = False
    log_level: str | None = None  # set by a live ``logging/setLevel`` (legacy)
    next_server_id: int = 0
    # recorded subscriptions/listen request id -> the live one, for subscription tags
    subscriptions: dict[object, object] = attrs.field(factory=dict)
    # what the live client declared it can do (``None``: not known, send everything)
    capabilities: Mapping[str, Any] | None = None
    # the methods of the server requests this session was sent
    asked: set[str] = attrs.field(factory=set)

    def play(
        self,
        exchange: Exchange,
        live: JSONObject,
        items: list[Item] | None = None,
        ids: dict[object, int] | None = None,
    ) -> Played:
        """Play ``items`` (default: the whole exchange) for the live message ``live``."""
        todo = exchange.items if items is None else items
        if (
            len(todo) == 1
            and todo[0].role == "response"
            and "id" in live
            and live.get("method") != "subscriptions/listen"
        ):
            # most exchanges: the answer alone, under the live id (what the loop below
            # does for it, without its calls)
            item = todo[0]
            message = {**item.message, "id": live["id"]}
            return Played([message], [item.meta], [item.t], responded=True)
        out = Played()
        ids = {} if ids is None else ids
        if exchange.message.get("method") == "subscriptions/listen" and "id" in live:
            self.subscriptions[id_key(exchange.message.get("id"))] = live["id"]
        for index, item in enumerate(todo):
            if item.role == "answer":
                paused = self._wait(exchange, live, item, todo[index + 1 :], ids)
                if paused is not None:
                    out.paused = paused
                    return out
                continue
            if item.role == "request" and not self.may_ask(item.message):
                out.skipped.append(str(item.message.get("method")))
                continue
            message = self._rewrite(item, live, ids)
            if message is not None:
                out.add(message, item)
                out.responded = out.responded or item.role == "response"
        return out

    def may_ask(self, request: JSONObject) -> bool:
        """Whether the live client declared the capability this server request needs."""
        needed = _NEEDS.get(str(request.get("method")))
        return needed is None or self.capabilities is None or needed in self.capabilities

    def _rewrite(self, item: Item, live: JSONObject, ids: dict[object, int]) -> Any:
        msg = item.message
        if item.role == "response":
            return _response(msg, live)
        if item.role == "progress":
            token = progress_token(live)
            if token is None:
                return None
            return {**msg, "params": {**msg["params"], "progressToken": token}}
        if item.role == "request":
            sent = self.own_request(msg)
            ids[id_key(msg.get("id"))] = sent["id"]
            return sent
        if msg.get("method") == "notifications/message" and not self._loggable(msg, live):
            return None
        return self._retag(msg)

    def own_request(self, message: JSONObject) -> JSONObject:
        """A recorded server request as this session sends it: under the session's next
        server id, its method noted as sent."""
        live_id = self.next_server_id
        self.next_server_id += 1
        self.asked.add(str(message.get("method")))
        return {**message, "id": live_id}

    def _retag(self, message: JSONObject) -> JSONObject:
        """A notification tagged with a recorded subscription carries the live one's id."""
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        tag = meta.get(SUBSCRIPTION_ID_META) if isinstance(meta, dict) else None
        live = self.subscriptions.get(id_key(tag)) if tag is not None else None
        if live is None or live == tag:
            return message
        assert isinstance(params, dict)
        assert isinstance(meta, dict)
        return {**message, "params": {**params, "_meta": {**meta, SUBSCRIPTION_ID_META: live}}}

    def _loggable(self, message: JSONObject, live: JSONObject) -> bool:
        params = message.get("params")
        level = params.get("level") if isinstance(params, dict) else None
        wanted = _meta_level(live) if self.modern else self.log_level
        if wanted is None:
            return not self.modern  # legacy servers log by default; modern only on request
        return _severity(level) >= _severity(wanted)

    def _wait(
        self,
        exchange: Exchange,
        live: JSONObject,
        item: Item,
        rest: list[Item],
        ids: dict[object, int],
    ) -> Paused | None:
        live_id = ids.get(id_key(item.message.get("id")))
        if live_id is None:
            return None  # the request it answers was not sent in this play: nothing to await
        request = next(
            (
                {**i.message, "id": live_id}
                for i in exchange.items
                if i.role == "request"
                and id_key(i.message.get("id")) == id_key(item.message.get("id"))
            ),
            {"id": live_id},
        )
        from cassette.core.replay.paused import (
            Paused,  # only a recording whose server asks the client
        )

        return Paused(exchange, live, list(rest), item.message, request, ids, item.t)
