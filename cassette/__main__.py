"""``python -m cassette``."""

import gc
import sys

_collecting = gc.isenabled()
gc.disable()  # until start-up is over: see cassette.cli.process

from cassette.transports.stdio import _early  # noqa: E402

_early.spawn(sys.argv[1:])  # a plain recording's server boots while we import the rest

from cassette.cli.process import run  # noqa: E402

run(paused_gc=_collecting)
