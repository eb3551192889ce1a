"""``python -m cassette``."""

import gc

_collecting = gc.isenabled()
gc.disable()  # until start-up is over: see cassette.cli.process

from cassette.cli.process import run  # noqa: E402

run(paused_gc=_collecting)
