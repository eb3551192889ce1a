"""Record modes as pure decisions: names, precedence, the action table, the messages."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cassette.errors import UsageError
from cassette.modes.policy import (
    ENV_VAR,
    MODES,
    Action,
    ModeChoice,
    env_value,
    get_mode,
    missing_cassette_message,
    plan,
    resolve_mode,
)


def test_names_synonyms_and_spelling() -> None:
    assert [get_mode(m) for m in MODES] == list(MODES)
    assert get_mode("rewrite") == "all"
    assert get_mode(" New-Episodes ") == "new_episodes"
    assert get_mode("NONE") == "none"


def test_unknown_mode_lists_the_valid_ones_and_names_its_source() -> None:
    with pytest.raises(UsageError) as info:
        get_mode("noen", "MCP_CASSETTE_MODE")
    message = str(info.value)
    assert "'noen'" in message
    assert "(from MCP_CASSETTE_MODE; did you mean none?)" in message
    for name in (*MODES, "rewrite"):
        assert name in message


@given(st.text(max_size=20))
def test_any_text_is_a_mode_or_a_usage_error(text: str) -> None:
    valid = text.strip().lower().replace("-", "_") in (*MODES, "rewrite")
    if valid:
        assert get_mode(text) in MODES
    else:
        with pytest.raises(UsageError, match="choose one of"):
            get_mode(text)


def test_first_source_with_a_value_wins() -> None:
    marker, option, env = ("marker", "none"), ("--opt", "all"), (ENV_VAR, "new_episodes")
    assert resolve_mode(marker, option, env) == ModeChoice("none", "marker")
    assert resolve_mode(("marker", None), option, env) == ModeChoice("all", "--opt")
    assert resolve_mode(("marker", None), ("--opt", ""), env) == ModeChoice("new_episodes", ENV_VAR)
    assert resolve_mode(("marker", None)) == ModeChoice("once", "default")
    assert resolve_mode(default="none").mode == "none"


def test_a_bad_value_is_reported_even_when_overridden() -> None:
    with pytest.raises(UsageError, match="from MCP_CASSETTE_MODE"):
        resolve_mode(("--opt", "once"), (ENV_VAR, "bogus"))


def test_env_value_reads_the_variable() -> None:
    assert env_value({ENV_VAR: "none"}) == (ENV_VAR, "none")
    assert env_value({}) == (ENV_VAR, None)


@pytest.mark.parametrize(
    ("mode", "exists", "action"),
    [
        ("once", True, Action.REPLAY),
        ("once", False, Action.RECORD),
        ("none", True, Action.REPLAY),
        ("none", False, Action.MISSING),
        ("all", True, Action.RECORD),
        ("all", False, Action.RECORD),
        ("new_episodes", True, Action.EXTEND),
        ("new_episodes", False, Action.RECORD),
    ],
)
def test_the_action_table(mode: str, exists: bool, action: Action) -> None:
    assert plan(get_mode(mode), exists) is action


def test_missing_message_names_path_mode_and_source() -> None:
    text = missing_cassette_message("tapes/x.jsonl", ModeChoice("none", ENV_VAR))
    assert text.startswith("tapes/x.jsonl: no such cassette")
    assert "mode none (from MCP_CASSETTE_MODE)" in text
    assert "nothing was started" in text
