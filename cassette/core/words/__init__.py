"""Words: how a value is put before a person, and how two values are told apart.

Theory of operation
-------------------
What a server sent is shown only through ``text``, which makes it safe for a terminal
(control characters and escapes never act on the reader's screen); ``said`` keeps what we
say about a message apart from what it quotes of it. ``suggest`` is the one "did you
mean" for every value the project refuses, ``colour`` decides when a report is painted.
``jsondiff`` names the differences between two JSON values as RFC 6901 paths, and
``volatile`` is the one rule of which differences in an answer do not count (``verify``,
``diff`` and a quiet re-recording share it).

Invariants:

* recorded text reaches a person only through ``text``;
* pure: values in, strings and paths out.

What it may import: the wire (``cassette.core.wire``) and ``cassette.errors``.
"""
