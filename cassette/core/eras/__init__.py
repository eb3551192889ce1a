"""Eras and variants: which client a recording serves, and how.

Theory of operation
-------------------
A cassette is recorded in one era of the protocol (legacy ``initialize`` or the 2026-07-28
``server/discover``) and may hold variant sessions for clients a live server treats
differently (``variants``). ``bridge`` says what a client of the other era is served from
what the recording proves, and no further; ``rounds`` bridges an ``input_required`` round
into server requests for a legacy client, ``legacy_calls`` and ``listen`` answer what the
recording does not hold as the recorded server would. The recorder's probes capture the
surface any client may list (``surface``, ``listings``). ``profiles`` names the clients we
know, ``fits`` gives each a verdict and ``first_screen`` turns the verdicts into the
replay's first line; ``variant_plan`` says what a recording shows about its client so a
variant can be recorded again.

Invariants:

* a rule here is a function of values (a header, a recording, a client's message); the
  replay's state is the replay room's (its era machine, ``cassette.core.replay
  .negotiation``, asks these rules at two points of each request);
* nothing is answered that the recording does not prove.

What it may import: the wire and the words rooms and ``cassette.errors``; never redaction
(beside it) nor the replay, the recording or the tape rooms (above it).
"""
