"""Running a command's async work: start-up's paused collector resumed once serving,
and signals turned into a clean, coded exit."""

from __future__ import annotations

import gc
import signal
import sys
from collections.abc import Awaitable, Callable

__all__ = ["paused_at_entry", "run_async", "startup_over"]


_paused = [False]  # the entry point paused the collector, and it has not resumed yet


def paused_at_entry() -> None:
    """The entry point turned the cyclic collector off for start-up
    (``cassette.cli.process`` says why); ``startup_over`` turns it back on."""
    _paused[0] = True


def startup_over() -> None:
    """What the process serves is in memory: collect cycles again, but never through what
    start-up made (frozen). Does nothing unless the entry point paused the collector, so a
    command run in-process leaves its caller's collector alone."""
    if _paused[0]:
        _paused[0] = False
        gc.freeze()
        gc.enable()


def run_async(
    func: Callable[[], Awaitable[int]], on_signal: Callable[[], int | None] | None = None
) -> int:
    """Run ``func`` under anyio and return its exit code, turning SIGINT/SIGTERM into a
    clean, coded exit.

    A network front runs until it is stopped, so for it a signal is the normal end:
    ``on_signal`` then says the code it exits with (by what it served); without it, or
    when it says ``None``, a signal's exit is 128 plus its number.
    """
    import anyio

    caught: list[int] = []

    async def guarded() -> int:
        startup_over()  # the event loop is up; loading and preparing pause it themselves
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                if sys.platform == "win32":  # no signal receiver there; Ctrl-C still works
                    return
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for signum in signals:
                        caught.append(int(signum))
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(watch)
            code = await func()
            tg.cancel_scope.cancel()
        if caught:
            chosen = on_signal() if on_signal is not None else None
            return chosen if chosen is not None else 128 + caught[0]
        return code

    try:
        return anyio.run(guarded)
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
