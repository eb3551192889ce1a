"""What we say about a message keeps what it quotes apart from our words, so redaction
takes the quoted values and names and leaves the sentence (``cassette.core.words.said``):
plain values, and the policy a person's lines pass (``cassette.store.gate.shown``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cassette.core.redaction.redactor import Redactor
from cassette.core.replay.matching import quoted_diffs
from cassette.core.replay.misses import MissReport
from cassette.core.words.jsondiff import MISSING, Difference
from cassette.core.words.said import NAME, Prose, Quote, Said, prose, said, tell
from cassette.store.gate import shown

TOKEN = "ghp_Zq8vKx2LmN4pRt6wYb1cDf3gHj5kMn7sQv9X"


def redact() -> tuple[Callable[[Any], Any], Callable[[str], str]]:
    session = Redactor().session()
    return session.value, session.text


def test_a_said_reads_as_its_text_and_keeps_its_parts() -> None:
    sentence = said(Quote("tools/call", NAME), " not recorded: ", Quote({"a": 1}))
    assert sentence == 'tools/call not recorded: {"a":1}'
    assert isinstance(sentence, str)
    assert len(sentence.parts) == 3
    longer = said(sentence, " (closest recording: t.jsonl:3)")
    assert isinstance(longer, Said)
    assert longer.endswith("t.jsonl:3)")
    assert len(longer.parts) == 4


def test_telling_redacts_the_quoted_values_and_never_our_words() -> None:
    diffs = [Difference("/token", "abc-recorded", MISSING)]
    sentence = said('tools/call "echo" not recorded: arguments differ at ', quoted_diffs(diffs))
    value, text = redact()
    told = tell(sentence, value, text)
    assert told.startswith('tools/call "echo" not recorded: arguments differ at /token: recorded "')
    assert told.endswith('", received (absent)')
    assert "abc-recorded" not in told
    assert "[REDACTED:key:1]" in told
    again = tell(told, value, text)
    assert again == told  # a placeholder is never redacted again


def test_a_value_is_redacted_whole_before_it_is_shortened() -> None:
    long = "x" * 70 + TOKEN
    value, text = redact()
    told = tell(said("got ", Quote(long)), value, text)
    assert TOKEN[:12] not in told
    assert told.startswith('got "')


def test_text_that_is_no_said_and_prose_are_redacted_whole() -> None:
    value, text = redact()
    assert TOKEN not in tell(f"plain {TOKEN}", value, text)
    mixed = said("ours: ", prose(f"theirs {TOKEN}"))
    assert isinstance(mixed.parts[1], Prose)
    told = tell(mixed, value, text)
    assert told.startswith("ours: theirs [REDACTED:")


def test_a_report_is_told_with_its_diffs_and_the_gate_shows_it_so() -> None:
    diffs = (Difference("/token", "abc-recorded", "def-received"),)
    summary = said('tools/call "echo" not recorded: arguments differ at ', quoted_diffs(diffs))
    report = MissReport("not-recorded", "tools/call", summary, 4, diffs)
    value, text = redact()
    told = report.told(value, text)
    assert "abc-recorded" not in told.summary
    assert "def-received" not in str(told.as_data())
    assert "/token: recorded " in told.summary
    assert ", received " in told.summary
    assert "/token: recorded " in shown(summary)
    assert "abc-recorded" not in shown(summary)
    assert shown(f"/token: recorded {TOKEN}") != f"/token: recorded {TOKEN}"  # plain text
