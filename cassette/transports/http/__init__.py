"""The HTTP wing: streamable HTTP and the legacy HTTP+SSE transport (the ``http`` extra).

``streamable_http`` and ``sse`` are the plugins; each offers a recording proxy
(``_http_record``, ``_sse_record``), a replay front (``_http_replay`` with its sessions,
``_http_session``; ``_sse_replay``) and an upstream connector. ``_http`` holds what every
HTTP app and proxy shares (the one ``Guard``: the DNS-rebinding check and CORS; binding),
``_http_auth`` the protected-resource answers, ``_http_checks`` and ``_http_recorded`` what
the recorded server's era refuses, read once from the recording, and ``sse_parser`` the
one SSE parser. Each module's docstring holds its theory of operation.

Invariants: a request's body is decoded once; what the recorded server's era refuses is
refused before a session sees the request. It may import ``cassette.transport``, the
core, the shared modules of ``cassette.transports`` and ``cassette.errors``; never the
stdio wing.
"""
