"""The sans-IO core: what a recording is and how it is made, redacted and replayed, as
values in and values out. Nothing here reads a clock, a file, a socket or the environment;
the runtime, the fronts and the store do that and hand the core plain values.

Theory of operation
-------------------
The core is a house of rooms on floors; a room imports only from its own floor's rooms
below it, never from beside or above (the ``layers`` contract inside ``cassette.core`` in
pyproject.toml, and ``tests/unit/test_runtime_contract.py`` shows it fails on an upward
import)::

    tape                          the cassette as a file and what the commands read of it
    replay      | recording       answering a live client | turning traffic into records
    eras        | redaction       the protocol's eras and variants | keeping secrets out
    words                         text safe to show, what we say, "did you mean", diffs
    wire                          JSON-RPC frames, ids, limits, the model, time bounds

Rooms on one floor are independent of each other (``|``). Each room's ``__init__`` holds
its theory of operation, its invariants and what it may import; it re-exports nothing,
so importing one module of a room never loads the rest (a replay's start-up is measured).
The core imports no I/O library (a ``forbidden`` contract), and nothing outside the core
but ``cassette.errors`` and its own third-party dependencies (attrs, cattrs).
"""
