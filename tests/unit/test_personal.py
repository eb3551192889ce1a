"""The opt-in personal-data rules: e-mail addresses and phone numbers are found in the forms
people write them, other numbers are not, and their placeholders keep a replay valid."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette
from cassette.core.recording.recorder import Recorder
from cassette.core.redaction.personal import find_pii
from cassette.core.redaction.redactor import Redactor
from cassette.core.tape.codec import encode_line
from cassette.errors import UsageError
from cassette.store.gate import policy
from cassette.tools.redact_cmd import redact_cassette, scan_cassette

ADDRESSES = [
    "ada@corp.example.com",
    "alice.smith+crm@mail.co.uk",
    "o'brien@firma.de",
    "x_y-z@sub.domain.io",
]
PHONES = [
    "+47 987 65 432",
    "+4798765432",
    "+44 (0)20 7946 0958",
    "+1 415-555-2671",
    "+1 (415) 555-2671",
    "+49 30 1234567",
    "+33 1 23 45 67 89",
    "0049 30 1234567",
    "(415) 555-2671",
    "415-555-2671",
    "415.555.2671",
    "1-800-555-0199",
    "020 7946 0958",
    "07700 900123",
    "030/1234567",
    "030/123 4567",
    "0151 23456789",
    "01 23 45 67 89",
    "06-12345678",
]
NOT_PERSONAL = [
    "1.2.3",
    "v10.0.19041.1",
    "version 2.10.3.4000",
    "1.0.0-rc.1+build.5",
    "2024-01-15",
    "01/02/2024",
    "15.01.2024",
    "01-02-2024 10:30",
    "lot 06/2024/1234",
    "2024-01-15T10:00:00+05:30",
    "+05:30",
    "12:30:45",
    "192.168.1.1",
    "10.0.0.255",
    "2001:db8::1",
    "550e8400-e29b-41d4-a716-446655440000",
    "1700000000000",
    "order 123456789",
    "total 1,234,567.89",
    "3.14159265",
    "1 + 1 = 2",
    "x+123456789",
    "port 8080-8090",
    "IBAN DE89 3704 0044 0532 0130 00",
    "card 4111 1111 1111 1111",
    "ISBN 978-3-16-148410-0",
    "SSN-like 123-45-6789",
    "icon@2x.png",
    "pkg@1.2.3",
    "@types/node@20.1.0",
    "user@localhost",
    "image@sha256:abcdef",
    "redacted-1@example.invalid",
    "redacted-key-2@example.invalid",
    "+15550100001",
]


@pytest.mark.parametrize("address", ADDRESSES)
def test_addresses_are_found_whole_in_text(address: str) -> None:
    text = f"write to <{address}>, please"
    assert [text[s.start : s.end] for s in find_pii(text)] == [address]
    assert {s.rule for s in find_pii(text)} == {"email"}


@pytest.mark.parametrize("phone", PHONES)
def test_phone_numbers_are_found_in_international_and_national_forms(phone: str) -> None:
    text = f"call {phone} today."
    assert [text[s.start : s.end] for s in find_pii(text)] == [phone]
    assert {s.rule for s in find_pii(text)} == {"phone"}


@pytest.mark.parametrize("text", NOT_PERSONAL)
def test_versions_dates_ids_and_addresses_of_machines_are_not_personal(text: str) -> None:
    assert find_pii(f"see {text} here") == []


def test_off_by_default_and_on_with_placeholders_of_the_same_shape() -> None:
    text = "Ada <ada@corp.example.com>, +47 987 65 432; Bob <bob@corp.example.com>"
    assert Redactor().session().text(text) == text
    session = Redactor(pii=True).session()
    out = session.text(text)
    assert out == (
        "Ada <redacted-1@example.invalid>, +15550100001; Bob <redacted-2@example.invalid>"
    )
    assert re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]+", "redacted-1@example.invalid")
    assert re.fullmatch(r"\+[1-9][0-9]{1,14}", "+15550100001")  # E.164
    # met once, redacted wherever it recurs, in its other written forms too
    assert session.text("mailto:ada%40corp.example.com") == "mailto:redacted-1@example.invalid"
    assert session.text(out) == out  # placeholders are left as they are


def test_a_schema_format_email_stays_satisfied() -> None:
    schema = {"type": "object", "properties": {"owner": {"type": "string", "format": "email"}}}
    message = {"jsonrpc": "2.0", "id": 3, "result": {"structuredContent": {"owner": "ada@x.io"}}}
    session = Redactor(pii=True).session()
    out, _ = session.message(
        message, {("result", "structuredContent"): schema}, json.dumps(message)
    )
    assert out["result"]["structuredContent"]["owner"] == "redacted-1@example.invalid"


def test_the_project_setting_and_its_mistakes(tmp_path: Path) -> None:
    found = policy(settings={"redact": {"pii": True}})
    assert found is not None
    assert found.pii
    off = policy(settings={"redact": {"patterns": ["x+"]}})
    assert off is not None
    assert not off.pii
    with pytest.raises(UsageError, match=r"\[tool.cassette.redact\] pii must be true or false"):
        policy(settings={"redact": {"pii": "yes"}})


def _tape(tmp_path: Path, redactor: Redactor | None, text: str) -> Path:
    rec = Recorder(transport="stdio", started_at="x", redactor=redactor)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    ok = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18"}}
    answer = {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": text}]}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "crm"}}
    records: list[Any] = []
    for direction, message in (("c2s", init), ("s2c", ok), ("c2s", call), ("s2c", answer)):
        records += rec.observe(direction, (json.dumps(message) + "\n").encode(), 0.0)  # type: ignore[arg-type]
    path = tmp_path / "crm.jsonl"
    path.write_bytes(b"".join(encode_line(r) for r in records))
    return path


def test_a_cassette_recorded_with_pii_scans_clean_and_one_without_is_flagged(
    tmp_path: Path,
) -> None:
    text = "owner ada@corp.example.com, +47 987 65 432"
    clean = Cassette.load(_tape(tmp_path, Redactor(pii=True), text))
    assert clean.header.redaction == {"placeholders": "numbered", "pii": True}
    assert scan_cassette(clean) == []  # its placeholders are not taken for addresses
    leaky = _tape(tmp_path, None, text)
    raw = leaky.read_text()
    leaky.write_text(
        raw.replace('"protocol_version"', '"redaction":{"pii":true},"protocol_version"')
    )
    findings = scan_cassette(leaky)
    assert [f.message for f in findings] == [
        "unredacted secret (email,phone) in message /result/content/0/text"
    ]
    redacted, changed = redact_cassette(leaky)
    assert changed == 1
    assert "redacted-1@example.invalid, +15550100001" in json.dumps(list(redacted.messages()))


@pytest.mark.parametrize("text", [*ADDRESSES, *PHONES, *NOT_PERSONAL, "+4 7 9 8 7 6 5 4 3 2"])
def test_the_raw_prescreen_never_skips_a_message_that_holds_personal_data(text: str) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}}
    walked = Redactor(pii=True).session().message(message)
    screened = Redactor(pii=True).session().message(message, None, json.dumps(message))
    assert screened == walked


@pytest.mark.parametrize(
    "argv",
    [
        ["record", "-o", "t.jsonl", "--redact-pii", "--", "server"],
        ["verify", "t.jsonl", "--redact-pii"],
        ["variant", "t.jsonl", "--as", "bare", "--redact-pii"],
    ],
)
def test_redact_pii_on_every_command_that_records(argv: list[str]) -> None:
    from cassette.cli.main import parse
    from cassette.store.gate import RedactOptions

    assert RedactOptions.from_args(parse(argv)).pii is True
    plain = [a for a in argv if a != "--redact-pii"]
    assert RedactOptions.from_args(parse(plain)).pii is None  # the project decides
