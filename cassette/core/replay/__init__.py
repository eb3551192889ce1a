"""The replay: answering a live client from a recording, one client message in, messages
out.

Theory of operation
-------------------
A cassette is prepared once (``prepared``: its groups, their indexes, the surface), and
a session pool (``sessions``) serves every session a front opens from it; a cassette of
several server starts binds a session's responder when first used (``start_responder``,
``starts``), and a session answered from the cassette's opening alone waits to build the
rest (``opening``). Each client message goes through the ``Replayer`` in four steps:
*before* (the era machine, ``negotiation`` with its rules in ``era_answers``, decides
handshake facts, variant and cross-era answers), *match* (``matching`` under a strategy,
``strategies``; redacted positions are wildcards, ``wildcards``; a miss says why,
``misses`` and ``replay_parts``), *play* (``playback`` of the recorded exchange, stopping
where the server waited, ``paused``, with ``waits`` for what the client owes) and *after*
(what the client is sent, ``reply``). ``groups`` chooses the group a session answers from,
``shown`` redacts what a replay tells a person, ``faults`` and ``pacing`` are the plans
a person adds: faults instead of answers, recorded delays reproduced.

Invariants:

* sans-IO and deterministic: the same messages in give the same messages out; time is
  passed in (``cassette.core.wire.deadlines``);
* a prepared cassette is read-only and shared by every session; a session keeps only its
  own consumption state;
* a request with no recording gets a JSON-RPC error naming the miss, never a hang.

What it may import: every room below it (wire, words, eras, redaction) and
``cassette.errors``; never the recording room beside it nor the tape room above.
"""
