"""Small helpers more than one part of the check-suite uses.

Digging the cause out of an exception group, shortening a value for a failure message,
and waiting for a front to say where it listens: the runner, the connection, the
properties and the round trips all need them, so they live below all of those.
"""

from __future__ import annotations

import anyio


class _Ready:
    """An ``on_ready`` to hand a front, and the wait for the address it reports."""

    def __init__(self) -> None:
        self.addresses: list[str] = []
        self._event = anyio.Event()

    def __call__(self, address: str) -> None:
        self.addresses.append(address)
        self._event.set()

    async def wait(self) -> str:
        """The first address reported, once it is."""
        await self._event.wait()
        return self.addresses[0]


def _leaves(group: BaseException) -> list[BaseException]:
    if isinstance(group, BaseExceptionGroup):
        return [leaf for e in group.exceptions for leaf in _leaves(e)]
    return [group]


def _short(value: object, limit: int = 160) -> str:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
