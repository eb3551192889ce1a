"""The clients ``cassette variant --as`` plays: the named profiles, and one built from
``--capabilities`` and ``--roots``."""

from __future__ import annotations

import pytest

from cassette.client.variants import PROFILES, custom_profile
from cassette.errors import UsageError


def test_the_agent_profiles_declare_what_those_clients_declare() -> None:
    """As recordings of Claude Code 2.1.328 and Gemini CLI 0.61.0 show them."""
    claude = PROFILES["claude-code"]
    assert claude.era is None  # dual-era: it probes with server/discover, as recorded
    assert claude.legacy_version == "2025-11-25"
    assert claude.capabilities == {
        "roots": {"listChanged": True},
        "elicitation": {"form": {}, "url": {}},
    }
    gemini = PROFILES["gemini-cli"]
    assert gemini.era == "legacy"
    assert gemini.legacy_version == "2025-06-18"
    assert gemini.capabilities == {"roots": {"listChanged": True}}


def test_capabilities_and_roots_make_a_client() -> None:
    made = custom_profile("mine", ["roots", "sampling"], ["file:///work"])
    assert made.name == "mine"
    assert made.era is None  # the recorded client's era
    assert made.capabilities == {"roots": {"listChanged": True}, "sampling": {}}
    assert made.answers == {"roots/list": {"result": {"roots": [{"uri": "file:///work"}]}}}
    over = custom_profile("gemini-cli", ["elicitation"])
    assert over.era == "legacy"
    assert over.capabilities == {"elicitation": {}}
    assert custom_profile("none", []).capabilities == {}


def test_roots_without_the_roots_capability_are_refused() -> None:
    with pytest.raises(UsageError, match="--roots needs the roots capability"):
        custom_profile("mine", ["sampling"], ["file:///work"])
