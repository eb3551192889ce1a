"""Pausing the cyclic garbage collector while a cassette is built into objects.

Loading a cassette allocates several objects per line and frees almost none, which is
exactly what makes CPython's generational collector run full collections again and again,
each over everything loaded so far, where a large cassette spent a good part of its load
time (docs/architecture.md, "Speed exceptions", has the figure). Nothing built while
loading forms a cycle worth collecting, so the collector is paused for the duration and
restored afterwards (left off if the caller had turned it off).

On the way out, what was allocated meanwhile is promoted to the oldest generation
(``gc.freeze()`` then ``gc.unfreeze()``: two list splices, whatever the size) before the
collector is turned back on. Otherwise the first allocation after it is would collect the
youngest generation holding every object just loaded, a traversal of all of them that
served nothing (about 0.1 s per 100,000 events). Nothing is frozen for good: the objects
stay collectable by the full collections of the oldest generation, and a process that
froze objects itself (a pre-forking server does) is left as it was.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:  # never unfreeze what the caller froze
                gc.freeze()
                gc.unfreeze()
            gc.enable()
