"""Every form of the secret corpus is redacted, and every rule finds the same secrets in a
short text and in one past the long-text limit (where a different, faster path runs)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cassette.core.redaction.redactor import Redactor
from cassette.core.redaction.secret_rules import LONG_TEXT, find_spans
from cassette.core.redaction.secret_table import _rules
from tests.helpers.secret_corpus import CORPUS, FORMS, echoes, forms_structured, forms_text

#: Hand-written examples for the rules whose match is not a token shape.
_WORDY: dict[str, list[str]] = {
    "url-credentials": [
        "postgres://admin:Pg7hQ2xLm9Rw@db:5432/app",
        "redis://:feyZPqAtaoI8Y0if@cache:6379",
        "postgres:\\/\\/admin:Pg7hQ2xLm9Rw@db:5432\\/app",
        "redis://admin:pa/ss9QwErTy@cache:6379/0",
    ],
    "bearer": ["Authorization: Bearer Zq8Lm2Xr7Tt5Vv1Bb9Nn"],
    "basic-auth": ["Authorization: Basic c3ZjLXVzZXI6aHVudGVyMjAyNA=="],
    "assignment": [
        "password=Tr0ub4dor3x",
        "token: >-\n  Zq8Lm2Xr7Tt5Vv1B\n",
        "<password>Zq8Lm2Xr7Tt5</password>",
        '<add key="PaymentApiKey" value="Zq8Lm2Xr7Tt5Vv1"/>',
        "api_key: 'Zq8Lm2Xr7Tt5'",
        "cb%3Ftoken%3DZq8Lm2Xr7T%26x",
    ],
    "argument": ["--api-key Zq8Lm2Xr7Tt5Vv1", "--passphrase=horse-Zq8Lm2Xr"],
    "private-key": ["-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"],
    "cookie": ["Cookie: theme=dark; session=Zq8Lm2Xr7Tt5Vv1B; csrf=Aa9Bb8Cc7Dd6"],
    "password": [
        "machine x login bob password n3tRc-Zq8Lm2Xr",
        "CREATE USER bob WITH PASSWORD 'Zq8Lm2Xr7Tt5';",
        "GRANT ALL ON db.* TO bob IDENTIFIED BY 'Zq8Lm2Xr7Tt5';",
    ],
    "authorization": [
        "Authorization: Bot MTk4NjIyNDgzNDcxOTI1.Cl2FMQ.ZnCjm1XVW7vRze4b7",
        "proxy-authorization: DeepL-Auth-Key 279a2e9d-83b3-c416:fx",
    ],
    "digest": ['Digest username="bob", nonce="x", response="6629fae49393a05397450978507c4ef1"'],
    "signature": ["https://a.blob.core.windows.net/c?sv=2021&sig=Zq8Lm2Xr7Tt5Vv1B%3D&se=1"],
    "command-line": [
        "curl -u admin:Zq8Lm2Xr7Tt5 https://x",
        "mysql -u root -pZq8Lm2Xr7Tt5 app",
        "docker login -u bob -p Zq8Lm2Xr7Tt5 registry.example.com",
        "sshpass -p Zq8Lm2Xr7Tt5 ssh host",
        "redis-cli -h cache -a Zq8Lm2Xr7Tt5 ping",
    ],
    "terraform": ["Zq8Lm2Xr7Tt5Vv.atlasv1." + "Zq8Lm2Xr7Tt5Vv1Bb9Nn" * 4],
    "jwk": ['{"kty": "RSA", "d": "Zq8Lm2Xr7Tt5Vv1Bb9Nn_Aa-Bb"}'],
    "base64": ["ewogICJwYXNzd29yZCI6ICJacThMbTJYcjdUdDUiCn0="],
}


def _secrets(text: str) -> list[str]:
    return [text[s.start : s.end] for s in find_spans(text)]


def _examples() -> list[tuple[str, str]]:
    out = [(name, text) for name, texts in _WORDY.items() for text in texts]
    seen = set(_WORDY)
    for rule in _rules():
        if rule.name in seen or not rule.name:
            continue
        out.append((rule.name, ""))  # drawn by hypothesis from its own expression
    return out


_FILLER = st.text(alphabet=st.sampled_from(list("lorem ipsum dolor sit amet. ,\n")), max_size=40)


@pytest.mark.parametrize(("name", "example"), _examples())
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), before=_FILLER, after=_FILLER)
def test_each_rule_finds_the_same_secrets_in_a_short_and_a_long_text(
    name: str, example: str, data: Any, before: str, after: str
) -> None:
    if not example:
        sources = [r.source for r in _rules() if r.name == name]
        source = data.draw(st.sampled_from(sources))
        example = data.draw(st.from_regex(re.compile(source), fullmatch=True).filter(str.isascii))
    short = f"{before} {example} {after}"
    found = _secrets(short)
    padding = " lorem" * (LONG_TEXT // 6 + 1)
    long = padding + " " + short + " " + padding
    assert len(long) > LONG_TEXT
    assert _secrets(long) == found


@pytest.mark.parametrize("name", FORMS)
def test_every_form_is_redacted_where_it_is_planted(name: str) -> None:
    session = Redactor().session()
    argv = session.argv(["server", "--passphrase", CORPUS["cli_passphrase_spaced"]])
    request = {"params": {"name": "forms", "arguments": {"password": CORPUS["echoed"]}}}
    sent, _ = session.message({"jsonrpc": "2.0", "id": 1, "method": "tools/call", **request})
    text = forms_text() + "\n" + "\n".join(echoes(CORPUS["echoed"]).values())
    structured = forms_structured()
    answer = {
        "content": [
            {"type": "text", "text": json.dumps(structured)},
            {"type": "text", "text": text},
        ]
    }
    answer["structuredContent"] = structured
    got, _ = session.message({"jsonrpc": "2.0", "id": 1, "result": answer})
    written = json.dumps([argv, sent, got])
    value = CORPUS[name]
    pieces = [value, json.dumps(value)[1:-1]]
    if name == "echoed":
        pieces += list(echoes(value).values())
    assert [p for p in pieces if p in written] == []


@pytest.mark.parametrize(
    "text",
    [
        "password reset link sent",
        "Password Reset",
        "enter your password below",
        "https://example.com:8080/a@b",
        "https://registry.npmjs.org/@scope/pkg",
        "inputTokens: 1200",
    ],
)
def test_plain_words_are_not_secrets(text: str) -> None:
    assert find_spans(text) == []


def test_counts_of_model_tokens_are_not_secrets() -> None:
    out = Redactor().session().value({"usage": {"inputTokens": 1200, "total_tokens": 1500}})
    assert out == {"usage": {"inputTokens": 1200, "total_tokens": 1500}}


# -- replays stay valid -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "check"),
    [
        ({"type": "string", "pattern": "^ak_[0-9a-f]{16}$"}, r"ak_[0-9a-f]{16}"),
        ({"type": "string", "pattern": "^[A-Z]{2}-\\d{4}$"}, r"[A-Z]{2}-\d{4}"),
        ({"type": "string", "pattern": "^[a-z]+$", "minLength": 12}, r"[a-z]{12,}"),
        ({"type": "string", "pattern": "^(sk|pk)_[A-Za-z0-9]{8,}$"}, r"(sk|pk)_[A-Za-z0-9]{8,}"),
        ({"type": "string", "format": "ipv4"}, r"192\.0\.2\.0"),
        ({"type": "string", "enum": ["a1", "b2"]}, r"a1"),
        ({"type": "string", "maxLength": 4}, r".{1,4}"),
    ],
)
def test_a_typed_sentinel_satisfies_the_schema(schema: dict[str, Any], check: str) -> None:
    session = Redactor().session()
    out = session.value({"apiKey": "Zq8Lm2Xr7Tt5Vv1Bb9Nn"}, {("apiKey",): schema})
    assert re.fullmatch(check, out["apiKey"]), out
    assert "Zq8Lm2Xr7Tt5Vv1Bb9Nn" not in json.dumps(out)


def test_a_pattern_the_placeholder_matches_keeps_the_placeholder() -> None:
    out = Redactor().session().value({"apiKey": "Zq8Lm2Xr7Tt5"}, {("apiKey",): {"pattern": "."}})
    assert out["apiKey"].startswith("[REDACTED:")


def test_a_numeric_secret_inside_json_text_keeps_the_text_json() -> None:
    session = Redactor().session()
    message = {
        "result": {
            "structuredContent": {"pin": 48213},
            "content": [{"type": "text", "text": '{"pin": 48213, "list": [48213]}'}],
        }
    }
    out, _ = session.message(message)
    parsed = json.loads(out["result"]["content"][0]["text"])
    assert str(parsed["pin"]).startswith("[REDACTED:")
    assert "48213" not in json.dumps(out)


@pytest.mark.parametrize("dummy", ["test", "postgres", "include", "admin", "secret123"])
def test_dummy_values_are_redacted_where_found_and_not_hunted_elsewhere(dummy: str) -> None:
    redactor = Redactor.configured(environ={"OPENAI_API_KEY": dummy})
    session = redactor.session()
    out, _ = session.message({"params": {"arguments": {"credentials": dummy}}})
    assert out["params"]["arguments"]["credentials"] != dummy
    text = f"connect to postgresql://db/{dummy}?mode={dummy} for the {dummy} run"
    assert session.text(text) == text


def test_a_short_numeric_pin_is_still_followed() -> None:
    session = Redactor().session()
    session.message({"params": {"arguments": {"pin": "4821"}}})
    assert "4821" not in session.text("login with pin 4821 ok")
