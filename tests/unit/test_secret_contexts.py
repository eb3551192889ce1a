"""Every row of the context table (``cassette.core.redaction.secret_contexts``) holds: an example of
each, with its own fake values, loses every value in every encoding and is replaced by the
row's rule; docs/redaction.md shows exactly the code's table; and what only looks like a
secret (git logs, commit ids, UUIDs, file listings, base64 images, prose) is left alone."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from cassette.core.redaction.redactor import Redactor
from cassette.core.redaction.secret_contexts import CONTEXTS, markdown_table
from tests.helpers.secret_contexts import EXAMPLES, Example, leaked

ROOT = Path(__file__).resolve().parents[2]
_RULE = re.compile(r"\[REDACTED:([a-z0-9-]+):[0-9]+\]|%5BREDACTED:([a-z0-9-]+):[0-9]+%5D")


def redacted(example: Example) -> str:
    """What a recording writes of ``example`` (one session, as a recording has)."""
    if example.kind == "env":
        policy = Redactor.configured(environ=example.payload)
        values = " ".join(example.payload.values())
        return policy.session().text(f"the server printed {values}")
    session = Redactor().session()
    if example.kind == "text":
        return session.text(example.payload)
    if example.kind == "json":
        return json.dumps(session.value(example.payload))
    if example.kind == "lines":
        return "\n".join(session.line("stderr", line) for line in example.payload)
    return json.dumps(session.argv(example.payload))


def test_the_docs_show_the_codes_table() -> None:
    page = (ROOT / "docs" / "redaction.md").read_text(encoding="utf-8")
    start, end = "<!-- contexts -->\n", "\n<!-- /contexts -->"
    assert start in page
    assert end in page
    shown = page[page.index(start) + len(start) : page.index(end)]
    assert shown == markdown_table()


def test_every_row_has_examples_and_every_example_a_row() -> None:
    assert [c.name for c in CONTEXTS] == list(EXAMPLES)
    assert all(EXAMPLES[c.name] for c in CONTEXTS)


_CASES = [
    pytest.param(row, example, id=f"{row.name}-{i}")
    for row in CONTEXTS
    for i, example in enumerate(EXAMPLES[row.name])
]


@pytest.mark.parametrize(("row", "example"), _CASES)
def test_each_context_loses_its_values_to_its_rule(row: Any, example: Example) -> None:
    out = redacted(example)
    assert leaked(out, example.secrets) == [], out
    rules = {a or b for a, b in _RULE.findall(out)}
    assert rules & set(row.rules), (row.rules, out)


@pytest.mark.parametrize(
    "text",
    [
        # a git log: commit ids, authors, dates, subjects
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: Ada Lovelace "
        "<ada@example.com>\nDate:   Mon Jan 1 10:00:00 2024 +0000\n\n    Fix the token refresh",
        "a1b2c3d Merge pull request #12 from ada/password-reset\n9fceb02 Rotate the api key docs",
        # ids
        "request 3f2504e0-4f89-11d3-9a0c-0305e82c3301 done; sha256:"
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        # a file listing
        "-rw-r--r--  1 ada staff  1204 Jan  1 10:00 token_refresh.py\n"
        "drwxr-xr-x  4 ada staff   128 Jan  1 10:00 secrets/\n"
        "-rw-------  1 ada staff   411 Jan  1 10:00 .env.example",
        # prose
        "The token expired; request a password reset. Authorization is required.",
        "Your password must be 12 characters. Enter your password below.",
        "The authorization server returned an error; login with -u to pick a user.",
        "docker run -u 1000:1000 -p 8080:80 image; ssh -p 2222 host; mysql -p",
        '<input type="password" name="password"/>',
        "signature verified; design=blue&sig=1",
    ],
)
def test_what_only_looks_secret_is_left_alone(text: str) -> None:
    assert Redactor().session().text(text) == text


def test_a_base64_image_is_left_alone() -> None:
    png = base64.b64encode(bytes(range(256)) * 8).decode()
    text = f"data:image/png;base64,{png}"
    assert Redactor().session().text(text) == text
    content = {"type": "image", "mimeType": "image/png", "data": png}
    assert Redactor().session().value(content) == content


def test_a_pair_of_words_is_no_header_list() -> None:
    value = {"required": ["password", "email"], "fields": [["name", "text"]]}
    assert Redactor().session().value(value) == value
