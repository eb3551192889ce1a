"""The recording: turning observed traffic into cassette records.

Theory of operation
-------------------
The ``Recorder`` (``recorder``) is fed what the runtime observed (messages each way,
HTTP exchanges, the server's stderr) and returns the records to write: redacted through
one redaction session per recorded session, with the schemas the server declared kept
(``cassette.core.redaction``), the variant and probe marks the eras room defines, and the
recording machine's own folders written the way every machine can share them
(``local_paths``). A user's ``before_record`` hook runs on every message (``hooks``), and
what it returns is checked before anything is written.

Invariants:

* sans-IO and deterministic: the same traffic, with the same time offsets, gives the
  same records;
* never in the way: the recorder never changes a frame; forwarding is the caller's job
  and happens whatever the recorder thinks of the bytes;
* the header waits for the first successful exchange, which decides the era; once it is
  out, the era cannot change.

What it may import: every room below it (wire, words, eras, redaction) and
``cassette.errors``; never the replay room beside it nor the tape room above.
"""
