"""Built-in transport plugins; each registers through the ``cassette.transports`` group.

Two wings and what they share:

* ``stdio/``: newline-delimited JSON-RPC over a child's pipes or our own stdin/stdout
  (``transport``, the plugin), its line framing (``_lines``), the early spawn of a plain
  recording's server (``_early``, ``_adopted``) and what ends a server its recorder
  cannot (``_keeper``, ``_reaper``);
* ``http/``: streamable HTTP and the legacy HTTP+SSE transport (``streamable_http``,
  ``sse``), their recording proxies, replay apps, checks and the SSE parser, behind the
  ``http`` extra;
* here: the in-memory transport for tests (``memory``) and what both wings use to read
  and write file descriptors (``_fdio``, with its asyncio backend) and to know when a
  client has read what was sent (``_drain``).

The wings import neither each other nor the runtime, the modes, the store or the command
line (import contracts in pyproject.toml). Nothing is imported here on purpose: loading
one transport must not pay for the others.
"""
