"""The wire: what travels between a client and a server and what a cassette is made of.

Theory of operation
-------------------
A frame from outside is classified once (``jsonrpc.classify``, with ``kinds`` and
``classified``), within the size and depth limits (``limits``) that keep a hostile peer or
file from exhausting memory or the stack. JSON-RPC ids become keys by one rule (``ids``).
The MCP specification's constants (``mcp``) and what a tool definition must be
(``definitions``) are facts of the protocol. A cassette is a header and its events
(``model``), cut into exchanges (``exchanges``: a client message and what it caused) and
paired requests and answers (``pairing``); building one pauses the cyclic garbage collector
(``_gc``). How long a wait may last (``deadlines``) and the URLs a person gives for an HTTP
server (``urls``) are values here too, checked once.

Invariants:

* nothing from outside is trusted: a frame too large or too deep is refused before it is
  decoded, and a classification never raises on bad input, it says what the frame is;
* values only: no clock, file or socket; time is passed in.

What it may import: nothing of the core above it (it is the ground floor) and
``cassette.errors``.
"""
