"""The tape: a cassette as a file, and what the commands read of it as a whole.

Theory of operation
-------------------
``codec`` is the on-disk shape: JSONL in and out. Reading checks, once, every free-form
member a reader relies on (``fields``: the stored strategy, the header's ``redaction``
record, an event's ``meta``), with the rules of the rooms that read them (the replay's
strategies, the redaction room's ``check_header``), so a cassette that loads is safe to
hand to any of them; that is why this room stands above them rather than beside the wire.
``calls`` reads each recorded request as a call (where time went, what failed) and
``prune`` says which lines go when recordings are pruned.

Invariants:

* a malformed line is a ``CassetteFormatError`` naming ``file:line`` and the fault (the
  member at fault, for a free-form one), never a traceback; a newer format is refused
  with an upgrade message, an unknown event kind skipped with a warning;
* pure: bytes or text in, values out (``cassette.store`` owns the files).

What it may import: every room of the core.
"""
