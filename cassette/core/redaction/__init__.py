"""Redaction: keeping secrets and personal data out of what a recording writes.

Theory of operation
-------------------
A ``Redactor`` (``redactor``) is a frozen policy; each recorded session redacts through its
own ``RedactionSession``, which remembers every secret it has met (``known``) and finds
it again wherever it travels. What a secret is comes from three tables a reviewer reads
alone: names (``secret_names``), shapes in text (``secret_table``, found fast by
``secret_rules``) and places in JSON (``secret_places``), with the contexts they are
known by (``secret_contexts``), personal data (``personal``, opt-in) and the user's
literal patterns (``literal_patterns``). A secret becomes a placeholder (``redacted``),
or, where a string would break the schema the server declared (``schemas``), a typed
sentinel that schema allows (``sentinels``). Headers a person asks to send upstream
(``headers``) are expanded here because their values are secrets the redactor must know.

Invariants:

* pure: values in, values out; nothing here reads the environment, a file or a clock;
* a secret's value is never part of an error message or a log line;
* nothing is compiled on import: a replay imports ``redacted`` alone (placeholders and
  the header's ``redaction`` field) and builds a redactor only when it must show a
  live message.

What it may import: the wire (``cassette.core.wire``) and ``cassette.errors``; never the
eras, the replay, the recording or the tape rooms, which stand above it (the ``layers``
contract inside ``cassette.core`` in pyproject.toml).
"""
