"""The clients cassette knows by name: one table for ``variant --as`` and for ``show``.

``cassette variant TAPE --as NAME`` records a session as one of these clients
(``cassette.client.variants.Profile`` is built from each entry), and ``cassette show`` and
the replay's banner say which of them each session of a cassette fits
(``cassette.core.eras.fits``). A member left out is the recorded client's own: its era
(``era``), capabilities, answers to the server's questions, ``clientInfo`` and the legacy
revision it asks for (``legacy_version``). ``era`` is ``legacy`` for a client that only
speaks the legacy era (it opens with ``initialize``), so that its variant is recorded in
the era it will replay in, whatever the cassette's; a dual-era client (it probes with
``server/discover``) has none, and keeps the recording's era.

Each profile of a real client names the client and the version it was read from
(``taken_from``): tests/e2e/test_profiles.py records that pinned client itself, through
``cassette record``, against a server that asks it everything a server may ask
(tests/servers/asking_server.py), and fails when the entry differs from what the client
declared and answered. What they showed: Claude Code 2.1.328 probes with
``server/discover`` (dual-era), asks 2025-11-25 of a legacy server and declares roots and
form and URL elicitation; Gemini CLI 0.61.0 and the Inspector CLI 2.12.0 open with
``initialize`` (legacy only), asking 2025-06-18 and 2025-11-25. The agents answer
``roots/list`` with their working folder, played here as ``file:///workspace`` (a cassette
should not hold the recording machine's folders); Claude Code run headless cancels an
elicitation. ``bare`` is the Python SDK 2 ``Client`` given no callbacks: it declares
nothing and refuses each question with ``-32600``.

The SDK clients an application gives its handlers declare what those handlers can do:
given sampling, elicitation and roots callbacks, the Python SDK 2 ``Client`` and fastmcp
4's ``Client`` (built on it) declare the same object in both eras (``sdk-handlers``), the
Python SDK 1.x ``ClientSession`` the same object in the legacy era only (``py-sdk1``);
the TypeScript SDK 1.x ``Client`` declares what its application passes, and ours passes
``roots`` without ``listChanged`` (``ts-sdk1``); the AI SDK's MCP client handles
elicitation alone (``ai-sdk``). What such a client answers is its application's, so
these profiles leave ``answers`` and ``clientInfo`` to the recorded client (and to
``cassette variant --answers``).

Plain dictionaries, not classes: every replay's banner reads this table, and a class
built at import costs start-up instructions (docs/performance.md).
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["CLIENTS", "FITTED"]

#: what an SDK client given sampling, elicitation and roots handlers declares
_EVERY_HANDLER: Final = {
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
}

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
        "taken_from": "the Python SDK's Client, mcp 2.3.0, given no callbacks",
        "capabilities": {},
        "answers": {
            "roots/list": {"error": {"code": -32600, "message": "List roots not supported"}},
            "elicitation/create": {
                "error": {"code": -32600, "message": "Elicitation not supported"}
            },
            "sampling/createMessage": {
                "error": {"code": -32600, "message": "Sampling not supported"}
            },
        },
    },
    {
        "name": "inspector",
        "summary": "the MCP Inspector's CLI: legacy, the roots capability with no roots",
        "taken_from": "the MCP Inspector's CLI 2.12.0 (@modelcontextprotocol/inspector)",
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
        "taken_from": "Claude Code 2.1.328 (@anthropic-ai/claude-code)",
        "capabilities": {"roots": {"listChanged": True}, "elicitation": {"form": {}, "url": {}}},
        "answers": {
            "roots/list": {"result": {"roots": [{"uri": "file:///workspace"}]}},
            "elicitation/create": {"result": {"action": "cancel"}},
        },
        "client_info": {
            "name": "claude-code",
            "title": "Claude Code",
            "version": "2.1.328",
            "description": "Anthropic's agentic coding tool",
            "websiteUrl": "https://claude.com/claude-code",
        },
        "legacy_version": "2025-11-25",
    },
    {
        "name": "gemini-cli",
        "summary": "Gemini CLI 0.61: legacy 2025-06-18, declaring roots",
        "taken_from": "Gemini CLI 0.61.0 (@google/gemini-cli)",
        "era": "legacy",
        "capabilities": {"roots": {"listChanged": True}},
        "answers": {
            "roots/list": {"result": {"roots": [{"uri": "file:///workspace", "name": "workspace"}]}}
        },
        "client_info": {"name": "gemini-cli-mcp-client", "version": "0.61.0"},
        "legacy_version": "2025-06-18",
    },
    {
        "name": "sdk-handlers",
        "summary": "an SDK client given sampling, elicitation and roots handlers (the Python "
        "SDK 2 Client, fastmcp's Client): both eras (legacy 2025-11-25)",
        "taken_from": "the Python SDK's Client, mcp 2.3.0, and fastmcp 4.2.3's Client, each "
        "given sampling, elicitation and roots handlers",
        "capabilities": _EVERY_HANDLER,
        "legacy_version": "2025-11-25",
    },
    {
        "name": "py-sdk1",
        "summary": "the Python SDK 1.x ClientSession given sampling, elicitation and roots "
        "callbacks: legacy 2025-11-25",
        "taken_from": "the Python SDK's ClientSession, mcp 1.30.0, given sampling, elicitation "
        "and roots callbacks",
        "era": "legacy",
        "capabilities": _EVERY_HANDLER,
        "legacy_version": "2025-11-25",
    },
    {
        "name": "ts-sdk1",
        "summary": "the TypeScript SDK 1.x Client declaring sampling, form and URL "
        "elicitation and roots: legacy 2025-11-25",
        "taken_from": "the TypeScript SDK's Client 1.32.2 (@modelcontextprotocol/sdk), given "
        "sampling, elicitation and roots handlers",
        "era": "legacy",
        "capabilities": {"sampling": {}, "elicitation": {"form": {}, "url": {}}, "roots": {}},
        "legacy_version": "2025-11-25",
    },
    {
        "name": "ai-sdk",
        "summary": "the AI SDK's MCP client with an elicitation handler: both eras (legacy "
        "2025-11-25), declaring elicitation alone",
        "taken_from": "the AI SDK's MCP client 2.0.99 (@ai-sdk/mcp), given an elicitation handler",
        "capabilities": {"elicitation": {}},
        "legacy_version": "2025-11-25",
    },
)

#: the clients a session is said to fit: those that declare capabilities of their own
#: (``legacy`` and ``modern`` are the recorded client itself, in an era)
FITTED: Final = tuple(c for c in CLIENTS if "capabilities" in c)
