"""Small helpers more than one part of the check-suite uses.

Digging the cause out of an exception group, and shortening a value for a failure message:
the runner, the connection, the properties and the round trips all need them, so they live
below all of those.
"""

from __future__ import annotations


def _leaves(group: BaseException) -> list[BaseException]:
    if isinstance(group, BaseExceptionGroup):
        return [leaf for e in group.exceptions for leaf in _leaves(e)]
    return [group]


def _short(value: object, limit: int = 160) -> str:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
