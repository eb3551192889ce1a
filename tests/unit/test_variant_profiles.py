"""The clients ``cassette variant --as`` plays: the named profiles, and one built from
``--capabilities`` and ``--roots``."""

from __future__ import annotations

import pytest

from cassette.client.variants import PROFILES, custom_profile
from cassette.errors import UsageError


def test_the_agent_profiles_declare_what_those_clients_declare() -> None:
    claude = PROFILES["claude-code"]
    assert claude.era == "legacy"
    assert set(claude.capabilities or {}) == {"roots", "elicitation"}
    gemini = PROFILES["gemini-cli"]
    assert gemini.legacy_version == "2025-06-18"
    assert set(gemini.capabilities or {}) == {"roots"}


def test_capabilities_and_roots_make_a_client() -> None:
    made = custom_profile("mine", ["roots", "sampling"], ["file:///work"])
    assert made.name == "mine"
    assert made.era is None  # the recorded client's era
    assert made.capabilities == {"roots": {"listChanged": True}, "sampling": {}}
    assert made.answers == {"roots/list": {"result": {"roots": [{"uri": "file:///work"}]}}}
    over = custom_profile("claude-code", ["elicitation"])
    assert over.era == "legacy"
    assert over.capabilities == {"elicitation": {}}
    assert custom_profile("none", []).capabilities == {}


def test_roots_without_the_roots_capability_are_refused() -> None:
    with pytest.raises(UsageError, match="--roots needs the roots capability"):
        custom_profile("mine", ["sampling"], ["file:///work"])
