"""A value given as a redaction pattern (``--redact-pattern "$API_KEY"``) is refused where
it enters, and never written or shown: the rule (``cassette.core.redaction.literal_patterns``) on
plain values, and the gate that applies it."""

from __future__ import annotations

import re

import pytest

from cassette.core.redaction.literal_patterns import is_literal, only_text, without_literals
from cassette.core.redaction.redacted import pattern_digest
from cassette.core.redaction.redactor import Redactor
from cassette.errors import UsageError
from cassette.store.gate import RedactOptions, check_rules, joined, policy, scan_policy

KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (KEY, KEY),
        (re.escape("p@ss.w(rd)*"), "p@ss.w(rd)*"),  # what re.escape makes of any value
        (r"sk\-live\-abc", "sk-live-abc"),
        ("^sk-live-abc$", "sk-live-abc"),  # anchors match no text
        (r"\bword\b", "word"),
        ("(sk)-live", "sk-live"),
        (r"(ab)\1", "abab"),
        ("a{3}", "aaa"),
        ("[a]bc", "abc"),
        ("abc(?=d)", "abc"),
        (r"\x41B", "AB"),
        ("(?i)1234", "1234"),  # no letter: one text whatever the case
        ("same|same", "same"),
    ],
)
def test_a_pattern_whose_language_is_one_text_is_a_literal(pattern: str, text: str) -> None:
    assert only_text(pattern) == text
    assert is_literal(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        "acct-[0-9]{6}",
        "tok.n",
        "(?i)token",
        "(?i:AB)c",
        "a|b",
        "x+",
        "a{2,3}",
        r"\d{4}",
        "[ab]",
        "",  # matches only the empty text: nothing to redact, nothing to keep
        "^$",
        "ab(c",  # not a regular expression at all
    ],
)
def test_a_pattern_that_matches_several_texts_is_not(pattern: str) -> None:
    assert not is_literal(pattern)


def test_a_literal_from_the_command_line_is_refused_without_being_shown() -> None:
    with pytest.raises(UsageError) as refused:
        policy(RedactOptions(patterns=("acct-[0-9]{6}", KEY)), settings={}, environ={})
    line = str(refused.value)
    assert line.startswith("--redact-pattern number 2: matches only one text")
    assert "--redact-env NAME" in line
    assert KEY not in line
    assert pattern_digest(KEY) not in line


def test_a_literal_in_the_project_is_refused_naming_where() -> None:
    settings = {"redact": {"patterns": [re.escape(KEY)]}}
    with pytest.raises(UsageError) as refused:
        policy(settings=settings, environ={})
    line = str(refused.value)
    assert "[tool.cassette.redact] pattern number 1: matches only one text" in line
    assert 'env = ["NAME"]' in line
    assert KEY not in line


def test_a_pattern_that_does_not_compile_is_refused_without_being_shown() -> None:
    with pytest.raises(UsageError) as refused:
        check_rules(["pa(ss"], [], [], where="the command line")
    assert "not a regular expression: missing )" in str(refused.value)
    assert "pa(ss" not in str(refused.value)


def test_a_policy_made_by_hand_never_writes_a_literal_or_its_digest() -> None:
    described = Redactor(patterns=("acct-[0-9]{6}", KEY)).describe()
    assert described["patterns"] == ["acct-[0-9]{6}"]
    assert described["digests"] == [pattern_digest("acct-[0-9]{6}")]
    assert "patterns" not in Redactor(patterns=(KEY,)).describe()


def older_header() -> dict[str, object]:
    """A header an older version wrote for ``--redact-pattern acct-... --redact-pattern KEY``."""
    patterns = ["acct-[0-9]{6}", KEY]
    return {
        "placeholders": "numbered",
        "patterns": patterns,
        "digests": [pattern_digest(p) for p in patterns],
    }


def test_an_older_headers_literal_is_dropped_and_its_value_given_back() -> None:
    kept, values = without_literals(older_header())
    assert kept["patterns"] == ["acct-[0-9]{6}"]
    assert kept["digests"] == [pattern_digest("acct-[0-9]{6}")]
    assert values == [KEY]
    alone, values = without_literals({"patterns": [KEY], "digests": [pattern_digest(KEY)]})
    assert alone == {}
    assert values == [KEY]


def test_joining_an_older_header_redacts_its_literal_as_a_value_and_requires_it_not() -> None:
    base = policy(RedactOptions(patterns=("acct-[0-9]{6}",)), settings={}, environ={})
    widened = joined(base, older_header(), environ={})
    assert widened is not None
    assert KEY not in widened.session().text(f"the key {KEY} again")
    assert KEY not in str(widened.describe())
    assert scan_policy(older_header()).session().text(f"key {KEY}") != f"key {KEY}"
