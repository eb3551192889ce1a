"""The stdio wing: a server's pipes and our own stdin/stdout, newline-delimited.

``transport`` is the plugin (``StdioTransport``: ``connect`` spawns a server, ``serve``
runs the one client on our stdin and stdout); ``_lines`` frames lines, dropping an
oversized one as it arrives. A plain recording's server is spawned before the command
line is imported (``_early``) and adopted later (``_adopted``); a keeper process
(``_keeper``) and the reaper (``_reaper``) make sure no server outlives its recorder.
Each module's docstring holds its theory of operation.

Invariants: stdout carries frames only; a server never outlives its recorder by more than
its grace and kill times. It may import ``cassette.transport``, the core, the shared
modules of ``cassette.transports`` and ``cassette.errors``; never the HTTP wing.
Nothing is imported here: ``python -m cassette`` imports ``_early`` before anything else.
"""
