"""Calling a user's ``before_record`` hook, the one piece of the user's code that runs on
every message written: a failure in it is one line naming the hook, and what it returns
is checked before anything is written, so a mistake there never leaves half a message
(or a value ``json.dumps`` cannot write) in a cassette that must stay readable.
"""

from __future__ import annotations

import copy
import types
from collections.abc import Callable
from typing import Any

from cassette.core.wire.jsonrpc import JSONObject, dumps
from cassette.core.wire.model import Direction
from cassette.errors import UsageError

__all__ = ["HookError", "call_hook", "hook_name"]


class HookError(UsageError):
    """A ``before_record`` hook raised, or returned something that is not a JSON object."""


def hook_name(hook: Callable[..., Any]) -> str:
    """How a person would name ``hook`` (``module.function``)."""
    if isinstance(hook, types.FunctionType | types.MethodType | types.BuiltinFunctionType):
        module = hook.__module__
        if module.startswith("_cassette_hook_"):  # loaded from a file (store.config.load_hook)
            return f"{module.removeprefix('_cassette_hook_')}.py:{hook.__qualname__}"
        return f"{module}:{hook.__qualname__}"
    return type(hook).__qualname__


def call_hook(
    hook: Callable[[JSONObject, Direction], JSONObject | None],
    message: JSONObject,
    direction: Direction,
    shown: Callable[[str], str] = str,
) -> JSONObject | None:
    """What ``hook`` keeps of ``message`` (a copy is what it sees); ``shown`` redacts the
    hook's own error text, which may quote the message, before a person reads it."""
    try:
        kept = hook(copy.deepcopy(message), direction)
    except Exception as exc:  # the user's code: any failure is theirs to read in one line
        text = " ".join(shown(str(exc)).split())
        raise HookError(
            f"before_record hook {hook_name(hook)} failed on a {direction} message: "
            f"{type(exc).__name__}: {text}"[:500]
        ) from None
    if kept is None:
        return None
    if not isinstance(kept, dict):
        raise HookError(
            f"before_record hook {hook_name(hook)} returned {type(kept).__name__}: "
            "it must return the message (a dict) or None to drop it"
        )
    try:
        dumps(kept)  # numbers as the peer sent them (``JSONNumber``) included
    except (TypeError, ValueError, RecursionError) as exc:
        raise HookError(
            f"before_record hook {hook_name(hook)} returned a message that is not JSON: {exc}"
        ) from None
    return kept
