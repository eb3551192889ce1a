"""Pausing the cyclic garbage collector while a cassette is built into objects.

Loading a cassette allocates several objects per line and frees almost none, which is
exactly what makes CPython's generational collector run full collections again and again,
each over everything loaded so far: a large cassette spent a third of its load time
there. Nothing built while loading forms a cycle worth collecting, so the collector is
paused for the duration and restored afterwards (left off if the caller had turned it off).
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
            gc.enable()
