"""Known values are found the same way in ASCII and non-ASCII texts, and in both of the
ways ``KnownValues`` searches (few forms, many forms)."""

from __future__ import annotations

import base64

import pytest

from cassette.core.redaction.known import KnownValues, forms
from cassette.core.redaction.redactor import Redactor

# fake values, assembled so that no scanner flags this file
_SECRETS = [f"Zq8Lm2Xr7Tt5Vv{i:02d}" for i in range(12)]


def _known(count: int) -> KnownValues:
    known = KnownValues()
    for secret in _SECRETS[:count]:
        known.add_all(forms(secret), secret)
    return known


def _found(known: KnownValues, text: str) -> list[str]:
    return sorted(text[start:end] for start, end in known.spans(text))


@pytest.mark.parametrize("tail", ["", " caf\u00e9 \u2014 \U0001f600"], ids=["ascii", "non-ascii"])
def test_many_forms_are_found_where_they_stand_as_words(tail: str) -> None:
    known = _known(12)
    assert len(known) > 32  # the table, not the direct search
    secret = _SECRETS[3]
    b64 = base64.b64encode(secret.encode()).decode()
    text = f'x={secret}&y="{secret.upper()}" {b64} {secret.encode().hex()}-{tail}'
    assert _found(known, text) == sorted(
        [secret, secret.upper(), b64, b64.rstrip("="), secret.encode().hex()]
    )


def test_ascii_and_non_ascii_texts_give_the_same_spans() -> None:
    known = _known(12)
    secret = _SECRETS[7]
    body = f"a {secret}, b [{secret.lower()}] c {base64.b64encode(secret.encode()).decode()}!"
    ascii_spans = known.spans(body + " end")
    other_spans = known.spans(body + " \u00e9nd")
    assert ascii_spans
    assert sorted(ascii_spans) == sorted(other_spans)


def test_with_few_forms_a_glued_value_is_found_too() -> None:
    known = _known(1)
    assert len(known) <= 32
    assert _found(known, f"xyz{_SECRETS[0]}abc") == [_SECRETS[0]]


def test_a_session_redacts_every_echo_of_many_secrets_in_one_text() -> None:
    session = Redactor().session()
    for secret in _SECRETS:
        session.remember(secret, "key")
    text = " ".join(f"{s} {s.upper()} %s" % base64.b64encode(s.encode()).decode() for s in _SECRETS)
    out = session.text(text + " \u00e9")
    assert not [s for s in _SECRETS if s in out or s.upper() in out]
    assert "[REDACTED:key:12]" in out
