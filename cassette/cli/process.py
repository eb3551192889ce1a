"""The process a command runs in: ``python -m cassette`` and the ``cassette`` script.

Why: a test suite spawns a replay per test, so what a process does before the replay's
first answer and after its last is paid thousands of times a day. Two things every Python
program does by default cost a replay about a tenth of its start-up and buy it nothing:

* **the cyclic garbage collector** runs again and again while modules are imported and
  the cassette is turned into objects, each time over objects that are all still alive.
  So the entry points start with it paused, before anything is imported, and it
  resumes (``cassette.cli.running.startup_over``) once a serving command is up, with
  everything made so far frozen out of later collections (``gc.freeze``): they never walk
  the modules or the cassette again. A command that serves nothing resumes it as soon as
  its options are read. (The entry points pause it themselves, first thing: importing
  this package imports the command line.)
* **interpreter teardown** finalizes every module and object one by one at exit, when the
  operating system would free the memory at once. A serving command (``replay``,
  ``record``, ``mock``) has flushed and closed all it writes (the cassette, the report,
  stdout) by the time it returns, so its process ends with ``os._exit`` once Python's own
  buffered streams are flushed. Other commands exit the usual way.

Called in-process (``cassette.cli.main``), nothing here happens: only an entry point,
which owns its process, pauses the collector.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import NoReturn

__all__ = ["run"]


def run(*, paused_gc: bool) -> NoReturn:
    """Run the command line as this process, and end the process with its exit code.
    ``paused_gc``: the entry point turned the collector off for start-up (it was on)."""
    from cassette.cli.main import execute, parse
    from cassette.cli.running import paused_at_entry, startup_over
    from cassette.transports.stdio._early import discard

    if paused_gc:
        paused_at_entry()
    try:
        args = parse()
        serves = bool(getattr(args, "serves", False))
        if not serves:
            startup_over()
        code = execute(args)
    finally:
        discard()  # a server spawned early that the command never took (it failed first)
    if serves:
        _leave(code)
    sys.exit(code)


def _leave(code: int) -> NoReturn:
    """Exit at once, past interpreter teardown: everything the command wrote is closed."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
