"""Redaction: secrets out wherever they travel, placeholders irreversible, schemas and the
protocol intact, redacted positions matched as wildcards, nothing from a cassette run."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cassette.core.recording.recorder import Recorder
from cassette.core.redaction.redactor import Redactor, check_header, is_secret_key, redact_argv
from cassette.core.redaction.secret_rules import find_spans
from cassette.core.replay.replayer import Replayer
from cassette.core.replay.wildcards import mask_like, template_matches
from cassette.core.tape.codec import encode_line
from cassette.errors import CassetteFormatError
from cassette.store.storage import Cassette
from tests.helpers.secret_corpus import BASIC_CREDENTIALS, CORPUS

PLACEHOLDER = re.compile(r"\[REDACTED:[a-z-]+:[1-9][0-9]*\]")
GITHUB = CORPUS["github_classic"]
SK = CORPUS["openai"]


@pytest.mark.parametrize(
    ("argv", "kept", "gone"),
    [
        (["srv", "--token", "abc123"], ["srv", "--token"], "abc123"),
        (["srv", "--api-key=xyz-secret"], ["srv"], "xyz-secret"),
        (["srv", "--secret-key", "k3y-value"], ["srv", "--secret-key"], "k3y-value"),
        (["srv", "--passphrase=open sesame"], ["srv"], "open sesame"),
        (["env", "GITHUB_TOKEN=hunter2", "srv"], ["env", "srv"], "hunter2"),
        (["srv", "postgres://admin:p@ss-w0rd@db/x"], ["srv"], "p@ss-w0rd"),
        (["srv", "redis://:s3cret-pw@cache:6379"], ["srv"], "s3cret-pw"),
        (["srv", SK], ["srv"], SK),
    ],
)
def test_argv_secrets_are_replaced(argv: list[str], kept: list[str], gone: str) -> None:
    out = redact_argv(argv)
    assert all(k in out for k in kept)
    assert gone not in json.dumps(out)
    assert "ss-w0rd" not in json.dumps(out)  # no part of a password with "@" in it
    assert "REDACTED" in json.dumps(out)


def test_argv_that_only_sounds_secret_is_kept() -> None:
    argv = ["srv", "--max-tokens", "100", "--port", "8080", "--tokenizer", "bpe"]
    assert redact_argv(argv) == argv


@pytest.mark.parametrize(
    "key",
    [
        "token",
        "apiKey",
        "api_key",
        "x-api-key",
        "client_secret",
        "password",
        "Authorization",
        "accessToken",
        "privateKey",
        "credentials",
        "auth",
        "pass",
        "pwd",
        "DB_PASS",
        "pin",
    ],
)
def test_secret_sounding_keys(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "maxTokens",
        "progressToken",
        "max_tokens",
        "tokenizer",
        "key",
        "keywords",
        "nextCursor",
        "monkey",
        "authorName",
        "passwordPolicy",
        "spin",
        "bypass",
    ],
)
def test_keys_that_are_not_secrets(key: str) -> None:
    assert not is_secret_key(key)


def test_schema_property_named_like_a_secret_is_not_redacted() -> None:
    tools = {
        "tools": [
            {
                "name": "sample",
                "inputSchema": {
                    "type": "object",
                    "properties": {"maxTokens": {"type": "number"}, "apiKey": {"type": "string"}},
                },
            }
        ]
    }
    assert Redactor().value(tools) == tools  # the values are schemas, not secrets


def test_a_shape_inside_tool_text_goes_and_the_text_stays() -> None:
    result = {"content": [{"type": "text", "text": f"MY_API_TOKEN={SK} and more"}]}
    text = Redactor().value(result)["content"][0]["text"]
    assert SK not in text
    assert text.startswith("MY_API_TOKEN=[REDACTED:sk-key:")
    assert text.endswith(" and more")


def test_protocol_fields_are_never_touched() -> None:
    message = {
        "jsonrpc": "2.0",
        "id": "ghp_" + "x" * 36,
        "method": "sampling/createMessage",
        "params": {"maxTokens": 5000, "_meta": {"progressToken": "tok-1"}, "cursor": "c-123456"},
    }
    redacted, pointers = Redactor().session().message(message)
    assert redacted == message
    assert pointers == ()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_every_corpus_value_is_found_in_the_context_it_is_planted_in(name: str) -> None:
    value = CORPUS[name]
    carriers = [
        {"password": value},  # a secret name
        {"text": f"password={value}"},  # key=value in free text
        {"text": json.dumps({"auth": value})},  # JSON inside a string
        {"credentials": [value, {"x": value}]},  # a list or object under a secret name
        {"text": f"value: {value}"},  # later, on its own: a shape, or a value already met
    ]
    session = Redactor().session()
    out = json.dumps([session.value(c) for c in carriers])
    assert value not in out
    assert json.dumps(value)[1:-1] not in out
    for line in value.splitlines()[1:-1]:  # a PEM body, line by line
        assert line not in out


def test_basic_credentials_and_bearer_tokens_in_headers_as_text() -> None:
    session = Redactor().session()
    out = session.text(
        f"Authorization: Basic {BASIC_CREDENTIALS}\nauthorization: bearer abcdefgh1234"
    )
    assert BASIC_CREDENTIALS not in out
    assert "abcdefgh1234" not in out
    assert session.text("a basic configuration") == "a basic configuration"


def test_a_secret_met_once_is_redacted_wherever_it_appears_later() -> None:
    session = Redactor().session()
    request, _ = session.message({"params": {"arguments": {"password": "Tr0ub4dor&3x"}}})
    assert "Tr0ub4dor" not in json.dumps(request)
    echoed = session.value({"text": json.dumps({"you sent": "Tr0ub4dor&3x"})})
    assert "Tr0ub4dor" not in json.dumps(echoed)
    assert session.text("log: login with Tr0ub4dor&3x ok") == (
        f"log: login with {request['params']['arguments']['password']} ok"
    )
    assert "Tr0ub4dor" not in session.text("url: https://x/?q=Tr0ub4dor%263x")


def test_no_string_bypasses_redaction() -> None:
    text = f"[REDACTED:key:0123456789ab] then {GITHUB} and postgres://u:pw-123456@db/x"
    out = Redactor().text(text)
    assert GITHUB not in out
    assert "pw-123456" not in out
    assert out.startswith("[REDACTED:key:0123456789ab] then ")  # an old placeholder is kept


def test_placeholders_are_numbered_stable_in_a_session_and_idempotent() -> None:
    one, other = Redactor().session(), Redactor().session()
    first = one.text(GITHUB)
    assert first == "[REDACTED:github:1]"
    assert one.text(f"again {GITHUB}") == f"again {first}"
    assert one.text("ghp_" + "Z" * 36) == "[REDACTED:github:2]"  # the next value: the next number
    # the number is the order of appearance, nothing of the value: another value met first
    # in another session gets the same placeholder
    assert other.text("ghp_" + "Y" * 36) == first
    assert one.text(first) == first


def test_numbers_and_enums_under_secret_names_keep_their_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "token": {"type": "integer", "minimum": 1000, "maximum": 9999},
            "authorization": {"type": "string", "enum": ["admin", "reader"]},
            "pin": {"type": "string", "pattern": "^[0-9]{4}$", "maxLength": 4},
            "apiKey": {"type": "string"},
        },
    }
    live = {"token": 4821, "authorization": "reader", "pin": "7391", "apiKey": "k-1234567"}
    message = {"jsonrpc": "2.0", "id": 3, "result": {"structuredContent": live}}
    session = Redactor().session()
    redacted, pointers = session.message(message, {("result", "structuredContent"): schema})
    content = redacted["result"]["structuredContent"]
    assert content["token"] == 1000  # an integer the schema allows, never the secret
    assert content["authorization"] == "admin"
    assert content["pin"] == "0001"  # the pattern's example, numbered as its placeholder (key:1)
    assert PLACEHOLDER.fullmatch(content["apiKey"])
    assert set(pointers) == {
        "/result/structuredContent/token",
        "/result/structuredContent/authorization",
        "/result/structuredContent/pin",
    }
    assert "4821" not in session.text("pin 4821 accepted")
    assert session.text("the reader role") == "the reader role"  # an enum member is public


def test_user_rules_patterns_paths_and_literals() -> None:
    redactor = Redactor(
        patterns=(r"acct-\d{6}",), paths=("/params/arguments/note",), literals=("s3cr3t-value",)
    )
    message = {
        "params": {
            "arguments": {"note": "plain", "id": "acct-123456", "x": "has s3cr3t-value inside"}
        }
    }
    out = json.dumps(redactor.value(message))
    assert "acct-123456" not in out
    assert "plain" not in out
    assert "s3cr3t-value" not in out


def _long(text: str) -> str:
    return "filler text\n" * 400 + text + "\nmore filler" * 400


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "hello ",
                "password=",
                "token: ",
                '"secret": "',
                "https://",
                "user:pw-123456@",
                "Bearer ",
                "abcdefgh12345678",
                GITHUB,
                SK,
                CORPUS["sendgrid"],
                CORPUS["aws_access_key_id"],
                "--secret-key ",
                "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
                "[REDACTED:",
                " ",
                "é",
                "&",
            ]
        ),
        max_size=12,
    ).map("".join)
)
def test_a_long_text_is_scanned_exactly_like_a_short_one(text: str) -> None:
    """The fast path for long texts changes the speed of ``find_spans``, never its finds."""
    padded = _long(text)
    shift = len("filler text\n" * 400)
    short = [(s.start + shift, s.end + shift, s.rule) for s in find_spans(text)]
    long = [(s.start, s.end, s.rule) for s in find_spans(padded)]
    assert long == short


#: Pieces of texts the case-insensitive rules match, in mixed case.
_FOLDED_PIECES = [
    "password",
    "PassWord",
    "TOKEN",
    "api_Key",
    "Credentials",
    "cookie",
    "Bearer ",
    "basic ",
    "AUTHorization",
    "pass",
    "_id",
    "-Value",
    "String",
    "%3D",
    "%3a",
    "=",
    ": ",
    '"',
    "'",
    "\\",
    " ",
    "\t",
    "&",
    "x-",
    "Q1w2E3r4T5y6",
    "dXNlcjpwdw==",
    "abc",
    "&next=1",
    ",",
    ";",
    "}",
    "%26",
    "%2F",
    "Digest ",
]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_FOLDED_PIECES), min_size=1, max_size=10).map("".join))
def test_a_folded_rule_matches_the_lower_cased_ascii_text_as_it_matches_the_text(
    text: str,
) -> None:
    """On an ASCII text a case-insensitive rule is run on the lower-cased text without its
    ignore-case flag (cheaper): both must find the same secret everywhere."""
    from cassette.core.redaction import secret_rules

    for tries in secret_rules._at_trigger_compiled().values():
        for _name, pattern, lower, group, _start, _check, _back in tries:
            if lower is None:
                continue
            for pos in range(len(text)):
                found = pattern.match(text, pos)
                folded = lower.match(text.lower(), pos)
                assert (found and found.span(group)) == (folded and folded.span(group))


_SECRET_KEYS = st.sampled_from(["password", "token", "apiKey", "pwd", "auth", "client_secret"])
_PLAIN_KEYS = st.sampled_from(["note", "items", "data", "name", "query", "settings"])
_SHAPED = st.sampled_from(
    [CORPUS[n] for n in ("github_classic", "gitlab", "stripe_live", "npm", "jwt", "groq")]
)
_OPAQUE = st.sampled_from([CORPUS[n] for n in ("json_auth", "json_pass", "env_db_pass", "otp")])


@st.composite
def planted(draw: st.DrawFn) -> tuple[Any, list[str]]:
    """A JSON value with secrets at random depths: shapes anywhere, opaque values under a
    secret name or in ``key=value`` text."""
    values: list[str] = []

    def leaf() -> Any:
        kind = draw(st.integers(0, 4))
        if kind == 0:
            value = draw(_SHAPED)
            values.append(value)
            return f"{draw(st.text(max_size=5))} {value} {draw(st.text(max_size=5))}"
        if kind == 1:
            value = draw(_OPAQUE)
            values.append(value)
            return {draw(_SECRET_KEYS): value}
        if kind == 2:
            value = draw(_OPAQUE)
            values.append(value)
            return f"{draw(_SECRET_KEYS)}={value}"
        return draw(st.text(max_size=10))

    def node(depth: int) -> Any:
        if depth == 0 or draw(st.booleans()):
            return leaf()
        if draw(st.booleans()):
            return [node(depth - 1) for _ in range(draw(st.integers(1, 3)))]
        return {draw(_PLAIN_KEYS) + str(i): node(depth - 1) for i in range(draw(st.integers(1, 3)))}

    return node(4), values


@settings(max_examples=80, deadline=None)
@given(planted())
def test_no_planted_value_survives_in_any_position(case: tuple[Any, list[str]]) -> None:
    value, values = case
    session = Redactor().session()
    out = json.dumps(session.value({"params": value}), ensure_ascii=False)
    echo = session.text(" / ".join(values))  # later, every value echoed with no context
    for secret in values:
        assert secret not in out
        assert secret not in echo


def _recorded(redactor: Redactor, call: dict[str, Any], answer: dict[str, Any]) -> bytes:
    rec = Recorder(transport="stdio", started_at="x", redactor=redactor)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    init_ok = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}}
    records: list[Any] = []
    for direction, message in (("c2s", init), ("s2c", init_ok), ("c2s", call), ("s2c", answer)):
        records += rec.observe(direction, (json.dumps(message) + "\n").encode(), 0.0)  # type: ignore[arg-type]
    records += rec.stderr(f"starting with {GITHUB}", 0.1)
    records += rec.close()
    return b"".join(encode_line(r) for r in records)


def _login(password: str, pin: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "login", "arguments": {"user": "ada", "password": password, "pin": pin}},
    }


def test_recorder_redacts_echoes_and_replay_matches_a_different_secret() -> None:
    call = _login("sunshine", 4821)
    text = json.dumps(call["params"]["arguments"]) + f" use {GITHUB}"
    answer = {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": text}]}}
    raw = _recorded(Redactor(), call, answer)
    assert b"sunshine" not in raw
    assert b"4821" not in raw
    assert GITHUB.encode() not in raw
    cassette = Cassette.loads(raw)
    assert cassette.header.redaction == {"placeholders": "numbered"}
    # The CI run's password and PIN are not the developer's: redacted positions match any.
    reply = Replayer(cassette).receive({**_login("correct horse", 1234), "id": 9})
    assert reply.miss is None
    assert "[REDACTED:github:" in json.dumps(reply.messages)
    # a difference outside the redacted positions is still a miss
    other = _login("correct horse", 1234)
    other["params"]["arguments"]["user"] = "bob"
    assert Replayer(cassette).receive({**other, "id": 9}).miss is not None


def test_brute_force_recovers_neither_a_pin_nor_a_dictionary_password() -> None:
    """Everything the file holds, tried as a key against every guess: nothing confirms."""
    call = _login("sunshine", 4821)
    answer = {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "ok"}]}}
    raw = _recorded(Redactor(), call, answer)
    cassette = Cassette.loads(raw)
    tokens = {m.group(0).rpartition(":")[2][:-1] for m in PLACEHOLDER.finditer(raw.decode())}
    assert tokens  # the password's placeholder is there
    keys = {"", json.dumps(cassette.header.redaction), *raw.decode().split('"')}
    pins = [f"{n:04d}" for n in range(10_000)]
    words = ["password", "123456", "qwerty", "letmein", "sunshine", "dragon", "monkey"]
    recovered = set()
    for guess in [*pins, *words]:
        digests = {hashlib.sha256(guess.encode()).hexdigest()[:12]}
        for key in keys if guess in ("4821", "sunshine") else ():
            digests.add(hmac.new(key.encode(), guess.encode(), hashlib.sha256).hexdigest()[:12])
        if digests & tokens:
            recovered.add(guess)
    assert recovered == set()
    pin = json.loads(raw.decode().splitlines()[3])["message"]["params"]["arguments"]["pin"]
    assert pin == 0  # a sentinel, the same for every PIN
    # and the placeholders are the same whatever the secrets were: nothing to confirm
    other = _recorded(Redactor(), _login("dragon", 1234), answer)
    assert _without_times(other) == _without_times(raw)


def _without_times(raw: bytes) -> list[Any]:
    lines = [json.loads(line) for line in raw.decode().splitlines()]
    for line in lines:
        line.pop("t", None)
        line.pop("started_at", None)
    return lines


def test_old_cassettes_with_a_salt_still_replay() -> None:
    header = {
        "kind": "header",
        "format": 1,
        "transport": "stdio",
        "recorder": {"name": "cassette-mcp", "version": "0.1.0"},
        "started_at": "x",
        "era": "legacy",
        "redaction": {"salt": "ab" * 16, "patterns": ["acct-[0-9]+"]},
    }
    call = _login("[REDACTED:key:5f0c7e21a9d3]", 1)
    call["params"]["arguments"]["pin"] = "[REDACTED:key:0a1b2c3d4e5f]"  # old: a number as text
    events = [
        {"kind": "message", "t": 0, "dir": "c2s", "message": call},
        {
            "kind": "message",
            "t": 0,
            "dir": "s2c",
            "message": {"jsonrpc": "2.0", "id": 2, "result": {}},
        },
    ]
    raw = "\n".join(json.dumps(x) for x in [header, *events]) + "\n"
    reply = Replayer(Cassette.loads(raw.encode())).receive(_login("anything", 77))
    assert reply.miss is None


def test_hostile_header_rules_are_never_run_and_malformed_ones_refused() -> None:
    def tape(redaction: Any) -> Cassette:
        header = {
            "kind": "header",
            "format": 1,
            "transport": "stdio",
            "recorder": {"name": "x", "version": "0"},
            "started_at": "x",
            "redaction": redaction,
        }
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}
        events = [
            {"kind": "message", "t": 0, "dir": "c2s", "message": call},
            {
                "kind": "message",
                "t": 0,
                "dir": "s2c",
                "message": {"jsonrpc": "2.0", "id": 1, "result": {}},
            },
        ]
        raw = "\n".join(json.dumps(x) for x in [header, *events]) + "\n"
        return Cassette.loads(raw.encode(), "hostile.jsonl")

    # Run on this input, the first would take longer than the age of the universe (the
    # suite's timeout ends it first); the last does not even compile. Neither is run.
    catastrophic = tape({"patterns": ["(a+)+$", "(x|x)*y", "(unclosed"]})
    live = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "t", "arguments": {"q": "a" * 50_000 + "!"}},
    }
    assert Replayer(catastrophic).receive(live).miss is not None  # answered: a plain miss
    for bad in ({"patterns": "(a+)+$"}, {"patterns": ["x" * 5000]}, {"env": ["A=B"]}, []):
        with pytest.raises(CassetteFormatError, match=r"^hostile\.jsonl:1: .*redaction"):
            Replayer(tape(bad))
        assert check_header(bad)
    assert check_header({"patterns": ["(a+)+$"], "salt": "ab12", "placeholders": "random"}) == []


def test_wildcards_match_any_value_where_the_recording_redacted() -> None:
    assert template_matches("use [REDACTED:key:0123456789ab] now", "use hunter2 now")
    assert not template_matches("use [REDACTED:key:0123456789ab] now", "use  now")
    assert not template_matches("use [REDACTED:key:0123456789ab] now", "use x later")
    two = "a[REDACTED:key:0123456789ab]b[REDACTED:key:ba9876543210]c"
    assert template_matches(two, "a1b2c")
    assert not template_matches(two, "abc")
    recorded = {"pin": 0, "password": "[REDACTED:key:0123456789ab]", "user": "ada"}
    live = {"pin": 4821, "password": "x", "user": "bob"}
    assert mask_like(recorded, live, ["/pin"]) == {**recorded, "user": "bob"}


def test_a_private_key_printed_line_by_line_on_stderr_loses_every_line() -> None:
    rec = Recorder(transport="stdio", started_at="x", redactor=Redactor())
    pem = CORPUS["pem_private_key"].splitlines()
    records: list[Any] = []
    for line in ["loading key:", *pem, "ready"]:
        records += rec.stderr(line, 0.0)
    records += rec.close()
    raw = b"".join(encode_line(r) for r in records)
    for line in pem[1:-1]:
        assert line.encode() not in raw
    assert b"ready" in raw
    assert b"-----BEGIN PRIVATE KEY-----" in raw  # the markers say what was there


_MEMBER = st.sampled_from(["note", "maxTokens", "progressToken", "signingKey", "DB_PASS", "x"])
_LEAF = st.one_of(
    st.text(max_size=12),
    st.integers(),
    st.sampled_from(["hello 7", "Echo: hello", "Bearer abcdefgh12", "--token x", GITHUB, "é\\\\u"]),
)
_JSON = st.recursive(
    _LEAF, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_MEMBER, inner, max_size=3)
)


@settings(max_examples=150, deadline=None)
@given(_JSON)
def test_the_raw_prescreen_never_changes_what_is_redacted(value: Any) -> None:
    """Skipping the walk of a message whose raw text holds no trigger changes the speed of
    ``message``, never its result."""
    message = {"jsonrpc": "2.0", "id": 1, "result": {"value": value}}
    for raw in (json.dumps(message), json.dumps(message, ensure_ascii=False)):
        walked, walked_at = Redactor().session().message(message)
        screened, screened_at = Redactor().session().message(message, None, raw)
        assert json.dumps(screened) == json.dumps(walked)  # placeholders numbered alike too
        assert screened_at == walked_at


def test_base64_bytes_of_images_audio_and_blobs_are_left_alone() -> None:
    data = "EAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" + "AKIA" + "B" * 16 + "=="
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "content": [
                {"type": "image", "data": data, "mimeType": "image/png"},
                {"type": "audio", "data": data, "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///x", "blob": data}},
            ]
        },
    }
    assert Redactor().session().message(message)[0] == message


def test_prepare_builds_what_the_rules_would_build_on_their_first_messages() -> None:
    # A recording prepares while its server starts; afterwards no message compiles anything.
    from cassette.core.redaction import secret_rules

    for built in (
        secret_rules._compiled,
        secret_rules._scout,
        secret_rules._word_scout,
        secret_rules._json_scout,
        secret_rules._at_trigger,
        secret_rules._single,
        secret_rules._rev_assign,
    ):
        built.cache_clear()  # as in a fresh process: each is rebuilt on demand
    Redactor.configured().prepare()
    before = secret_rules._compiled.cache_info().misses
    texts = [
        "token=ghp_" + "a1B2" * 9,
        "postgres://admin:s3cr3t@db.example/app",
        "Authorization: Bearer " + "x" * 30,
        "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----",
        "--secret-key hunter2",
    ]
    for text in texts:
        assert secret_rules.find_spans(text), text
    assert secret_rules.json_may_hold_secret('{"apiKey": "x"}')
    assert secret_rules._compiled.cache_info().misses == before


def test_the_json_scout_probes_find_every_word_the_scout_expression_finds() -> None:
    # The probes only spare the expression's search; they must never hide a word from it.
    # A rule's gate is a character every match of it holds; a rule not probed always
    # holds another rule's word (tests/unit/test_secret_contexts.py runs examples of both).
    from cassette.core.redaction import secret_rules
    from cassette.core.redaction.secret_table import _rules

    gates = {t.lower(): r.gate for r in _rules() if r.gate for t in r.triggers}
    unprobed = {t.lower() for r in _rules() if not r.probed for t in r.triggers}
    for word in sorted(secret_rules._json_words() - unprobed):
        for spelled in (word, word.upper(), word.title()):
            inner = f"a {spelled} {gates.get(word, '')}b"
            text = json.dumps({"jsonrpc": "2.0", "id": 1, "params": {"x": inner}})
            assert secret_rules.json_may_hold_secret(text), spelled
    clean = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}'
    assert not secret_rules.json_may_hold_secret(clean)
    assert secret_rules.json_may_hold_secret(clean.replace("echo", "x" * 16))  # a token shape
    assert secret_rules.json_may_hold_secret(clean.replace("echo", "\udcff" + "a" * 16))
