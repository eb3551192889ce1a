"""A mock is bounded on every input: no NaN reaches an answer, no template explodes.

``nan`` and ``inf`` are TOML (and Python's JSON reader takes ``NaN``), but no JSON answer
can carry them: a manifest holding one is refused when read, naming where, so ``--validate``
and serving agree. Filling in ``{{arguments.NAME}}`` is bounded by the size limit: an
answer that would grow past it is refused with an error to that request alone, and the
mock goes on.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cassette.core.wire.limits import DEFAULT_MAX_BYTES, set_max_message_bytes
from cassette.errors import ManifestError
from cassette.mock.manifest import load_manifest
from cassette.mock.server import MockServer
from cassette.mock.template import TemplateTooLarge, render


@pytest.fixture
def one_mib() -> Iterator[None]:
    set_max_message_bytes(1 << 20)
    try:
        yield
    finally:
        set_max_message_bytes(DEFAULT_MAX_BYTES)


TOML = """manifest = 1
[[tools]]
name = "t"
inputSchema = {{ type = "object" }}
[[tools.calls]]
result = {{ content = [], score = {value} }}
"""


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_toml_manifest_with_a_non_finite_number_is_refused_where_it_is(
    tmp_path: Path, value: str
) -> None:
    path = tmp_path / "m.toml"
    path.write_text(TOML.format(value=value))
    with pytest.raises(ManifestError) as caught:
        load_manifest(path)
    assert str(caught.value).startswith(f"{path}: /tools/0/calls/0/result/score: ")
    assert "is not a JSON number (JSON has no NaN or Infinity)" in str(caught.value)


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_a_json_manifest_with_a_non_finite_number_is_refused(tmp_path: Path, value: str) -> None:
    path = tmp_path / "m.json"
    path.write_text(
        '{"manifest": 1, "tools": [{"name": "t", "score": VALUE}]}'.replace("VALUE", value)
    )
    with pytest.raises(ManifestError) as caught:
        load_manifest(path)
    assert str(caught.value) == (
        f"{path}: {value} is not a JSON number (JSON has no NaN or Infinity)"
    )


def _mock(text: str) -> MockServer:
    result = {"content": [{"type": "text", "text": text}]}
    tool = {"name": "big", "inputSchema": {"type": "object"}, "calls": [{"result": result}]}
    return MockServer({"manifest": 1, "tools": [tool]})


def _call(server: MockServer, argument: str) -> Any:
    params = {"name": "big", "arguments": {"m": argument}}
    return server.receive({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})


def test_a_template_that_would_grow_past_the_limit_is_refused(one_mib: None) -> None:
    reply = _call(_mock("{{arguments.m}}" * 100), "x" * 100_000)  # 10 MB once filled in
    (message,) = reply.messages
    assert message["error"]["code"] == -32602
    assert "would be larger than 1048576 bytes once filled in" in message["error"]["message"]
    assert reply.warnings == (message["error"]["message"].removeprefix("Invalid params: "),)


def test_a_template_within_the_limit_is_filled_in(one_mib: None) -> None:
    reply = _call(_mock("{{arguments.m}}" * 5), "x" * 100_000)
    (message,) = reply.messages
    assert message["result"]["content"][0]["text"] == "x" * 500_000


def test_a_whole_value_placeholder_counts_too() -> None:
    value = [{"a": "{{arguments.m}}"}] * 20
    with pytest.raises(TemplateTooLarge):
        render(value, {"m": {"blob": "y" * 1000}}, limit=10_000)
    assert render(value[:5], {"m": {"blob": "y"}}, limit=10_000) == [{"a": {"blob": "y"}}] * 5
