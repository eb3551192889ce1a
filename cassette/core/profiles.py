"""The clients cassette knows by name: one table for ``variant --as`` and for ``show``.

``cassette variant TAPE --as NAME`` records a session as one of these clients
(``cassette.client.variants.Profile`` is built from each entry), and ``cassette show`` and
the replay's banner say which of them each session of a cassette fits
(``cassette.core.fits``). A member left out is the recorded client's own: its era
(``era``), capabilities, answers to the server's questions, ``clientInfo`` and the legacy
revision it asks for (``legacy_version``).

What the MCP Inspector's CLI (2.12), Claude Code (2.1.328) and Gemini CLI (0.61.0)
declare is taken from recordings of them (tests/clients/agent_cli.py drives both agents):
Claude Code is dual-era (it probes with ``server/discover``, so it keeps the recording's
era) and asks 2025-11-25 of a legacy server, declaring roots and form and URL elicitation;
Gemini CLI is legacy, asks 2025-06-18 and declares roots. Both answer ``roots/list`` with
their working folder, played here as ``file:///workspace`` (a cassette should not hold the
recording machine's folders); Claude Code run headless cancels an elicitation. ``bare``
declares nothing, as the official SDKs' clients do by default (no callbacks given).

Plain dictionaries, not classes: every replay's banner reads this table, and a class
built at import costs start-up instructions (docs/performance.md).
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["CLIENTS", "FITTED"]

#: each client: ``name``, ``summary``, and what it does differently from the recorded one
CLIENTS: Final[tuple[dict[str, Any], ...]] = (
    {
        "name": "legacy",
        "summary": "the recorded client, in the legacy era (initialize)",
        "era": "legacy",
    },
    {"name": "modern", "summary": "the recorded client, in the 2026-07-28 era", "era": "modern"},
    {
        "name": "bare",
        "summary": "a client that declares no capabilities, in the recording's era (the SDKs' "
        "default clients)",
        "capabilities": {},
        "answers": {},
    },
    {
        "name": "inspector",
        "summary": "the MCP Inspector's CLI: legacy, the roots capability with no roots",
        "era": "legacy",
        "capabilities": {
            "roots": {"listChanged": True},
            "extensions": {
                "io.modelcontextprotocol/tasks": {},
                "io.modelcontextprotocol/skills": {},
            },
        },
        "answers": {
            "roots/list": {"result": {"roots": []}},
            "elicitation/create": {"result": {"action": "cancel"}},
            "sampling/createMessage": {"error": {"code": -32603, "message": "Internal error"}},
        },
        "client_info": {"name": "inspector-cli", "version": "2.12.0"},
        "legacy_version": "2025-11-25",
    },
    {
        "name": "claude-code",
        "summary": "Claude Code 2.1: both eras (legacy 2025-11-25), declaring roots and form "
        "and URL elicitation",
        "capabilities": {"roots": {"listChanged": True}, "elicitation": {"form": {}, "url": {}}},
        "answers": {
            "roots/list": {"result": {"roots": [{"uri": "file:///workspace"}]}},
            "elicitation/create": {"result": {"action": "cancel"}},
        },
        "client_info": {"name": "claude-code", "title": "Claude Code", "version": "2.1.328"},
        "legacy_version": "2025-11-25",
    },
    {
        "name": "gemini-cli",
        "summary": "Gemini CLI 0.61: legacy 2025-06-18, declaring roots",
        "era": "legacy",
        "capabilities": {"roots": {"listChanged": True}},
        "answers": {"roots/list": {"result": {"roots": [{"uri": "file:///workspace"}]}}},
        "client_info": {"name": "gemini-cli-mcp-client", "version": "0.61.0"},
        "legacy_version": "2025-06-18",
    },
)

#: the clients a session is said to fit: those that declare capabilities of their own
#: (``legacy`` and ``modern`` are the recorded client itself, in an era)
FITTED: Final = tuple(c for c in CLIENTS if "capabilities" in c)
