"""distill and mock end to end: record the pinned server-everything once, distill the
cassette to JSON and to TOML, serve each with `cassette mock` over stdio and over
streamable HTTP to the official Python SDK client, and require the recorded answers."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cassette.core.wire.model import MessageEvent
from cassette.mock import load_manifest, write_manifest
from tests.helpers.support import (
    OFFLINE_ENV,
    PY,
    Background,
    LineClient,
    dump,
    everything_command,
    record_command,
    run,
    scaled,
    session_events,
    stdio_params,
)

pytestmark = pytest.mark.e2e
URL = r"serving on (http://127\.0\.0\.1:\d+/mcp)"
LISTED = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "cassette", *args],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )


def mock_command(manifest: Path, *extra: str) -> list[str]:
    return [PY, "-m", "cassette", "mock", str(manifest), "-q", *extra]


async def session(target: Any, *, live: bool) -> dict[str, Any]:
    """What a client sees; against a mock, also a templated call and one with no answer."""
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    async with Client(target) as client:
        out: dict[str, Any] = {"protocol": client.protocol_version}
        out["server"] = dump(client.server_info)
        out["tools"] = dump(await client.list_tools())["tools"]
        out["resources"] = dump(await client.list_resources())["resources"]
        out["templates"] = dump(await client.list_resource_templates())["resourceTemplates"]
        out["prompts"] = dump(await client.list_prompts())["prompts"]
        out["echo"] = dump(await client.call_tool("echo", {"message": "hello"}))
        out["echo_again"] = dump(await client.call_tool("echo", {"message": "hello"}))
        out["sum"] = dump(await client.call_tool("get-sum", {"a": 2, "b": 40}))
        out["image"] = dump(await client.call_tool("get-tiny-image", {}))
        uri = out["resources"][0]["uri"]
        out["read"] = dump(await client.read_resource(uri))
        out["prompt"] = dump(await client.get_prompt("args-prompt", {"city": "Oslo"}))
        if not live:
            out["templated"] = dump(await client.call_tool("echo", {"message": "from a template"}))
            with pytest.raises(MCPError) as info:
                await client.call_tool("get-sum", {"a": 1, "b": 1})
            out["unanswered"] = (info.value.error.code, info.value.error.message)
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One recording of server-everything, what the client saw, and its manifests: the
    distilled one with a templated catch-all call added to echo, as JSON and as TOML."""
    base = tmp_path_factory.mktemp("mock")
    tape = base / "everything.jsonl"
    live = run(lambda: session(stdio_params(record_command(tape, everything_command())), live=True))
    manifests = {}
    for suffix in ("json", "toml"):
        distilled = base / f"everything.{suffix}"
        result = cli("distill", str(tape), "--as-mock", "-o", str(distilled))
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines() == [
            f"{distilled}: written from {tape}: 13 tools (3 calls), 7 resources, 2 resource "
            "templates, 4 prompts (1 calls)",
            "note: 1 repeated request(s) collapsed into the entry of their first recording",
        ]
        manifest = load_manifest(distilled)
        echo = next(t for t in manifest["tools"] if t["name"] == "echo")
        text = {"type": "text", "text": "Echo: {{arguments.message}}"}
        echo["calls"].append({"result": {"content": [text]}})
        manifests[suffix] = base / f"templated.{suffix}"
        write_manifest(manifest, manifests[suffix])
    return {"tape": tape, "live": live, "manifests": manifests}


def check_answers(recorded: dict[str, Any], mocked: dict[str, Any]) -> None:
    live = recorded["live"]
    assert {k: v for k, v in mocked.items() if k in live} == live
    assert mocked["templated"]["content"][0]["text"] == "Echo: from a template"
    code, message = mocked["unanswered"]
    assert code == -32099
    assert message.startswith('cassette-mcp: tools/call "get-sum" with arguments {"a":1,"b":1}')


@pytest.mark.parametrize("suffix", ["json", "toml"])
def test_mock_over_stdio_answers_as_the_server_did(recorded: dict[str, Any], suffix: str) -> None:
    manifest = recorded["manifests"][suffix]
    params = stdio_params(mock_command(manifest), env=OFFLINE_ENV)
    check_answers(recorded, run(lambda: session(params, live=False)))


@pytest.mark.parametrize("suffix", ["json", "toml"])
def test_mock_over_http_answers_as_the_server_did(recorded: dict[str, Any], suffix: str) -> None:
    manifest = recorded["manifests"][suffix]
    with Background(mock_command(manifest, "--front", "http"), env=OFFLINE_ENV) as front:
        url = front.wait_for(URL).group(1)
        check_answers(recorded, run(lambda: session(url, live=False)))
        run(lambda: session(url, live=False))  # a second session, answered the same
        assert front.stop(signal.SIGINT) == 1  # the requests the manifest had no answer for
    assert f'cassette: miss: {manifest}: tools/call "get-sum"' in front.output()
    assert "2 request(s) had no answer in the manifest:" in front.output()


def test_mock_over_sse_answers_as_the_server_did(recorded: dict[str, Any]) -> None:
    """One serve path: the mock is served on the legacy HTTP+SSE front like a cassette."""
    from mcp.client.sse import sse_client

    manifest = recorded["manifests"]["json"]
    with Background(mock_command(manifest, "--front", "sse"), env=OFFLINE_ENV) as front:
        url = front.wait_for(r"serving on (http://127\.0\.0\.1:\d+/sse)").group(1)
        check_answers(recorded, run(lambda: session(sse_client(url), live=False)))
        assert front.stop(signal.SIGINT) == 1  # the request the manifest had no answer for
    assert f'cassette: miss: {manifest}: tools/call "get-sum"' in front.output()


def test_the_lists_are_the_recorded_ones_to_the_byte(recorded: dict[str, Any]) -> None:
    events = [e for e in session_events(recorded["tape"]) if isinstance(e, MessageEvent)]
    asked = [e.message for e in events if e.dir == "c2s" and "id" in e.message]
    sent = {m["id"]: m["method"] for m in asked}
    lists = {
        sent[m["id"]]: m["result"]
        for m in (e.message for e in events if e.dir == "s2c")
        if sent.get(m.get("id")) in LISTED
    }
    client = LineClient(mock_command(recorded["manifests"]["json"]), env=OFFLINE_ENV)
    try:
        client.initialize()
        for method in LISTED:
            assert client.request(method)["result"] == lists[method]
        code, stderr = client.finish()
    finally:
        client.kill_group()
    assert (code, stderr) == (0, "")


def test_a_stdio_session_with_a_miss_exits_1_and_says_why(recorded: dict[str, Any]) -> None:
    client = LineClient(mock_command(recorded["manifests"]["toml"]), env=OFFLINE_ENV)
    try:
        client.initialize()
        reply = client.request("prompts/get", {"name": "simple-prompt", "arguments": {"x": "y"}})
        assert reply["error"]["code"] == -32099
        code, stderr = client.finish()
    finally:
        client.kill_group()
    assert code == 1
    assert stderr.splitlines()[0].startswith("cassette: miss: ")
    assert 'prompts/get "simple-prompt" with arguments {"x":"y"}' in stderr


def test_the_mock_keeps_the_size_limit(recorded: dict[str, Any]) -> None:
    manifest = recorded["manifests"]["json"]
    big = {"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"pad": "x" * 2000}}
    small = {"jsonrpc": "2.0", "id": 8, "method": "ping"}
    result = subprocess.run(
        mock_command(manifest, "--max-message-bytes", "1KiB"),
        input=(json.dumps(big) + "\n" + json.dumps(small) + "\n").encode(),
        capture_output=True,
        timeout=scaled(60),
        check=False,
    )
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert replies[0]["error"]["code"] == -32600, result.stderr
    assert "over the size limit" in replies[0]["error"]["message"]
    assert replies[1] == {"jsonrpc": "2.0", "id": 8, "result": {}}


def test_validate_exit_codes(recorded: dict[str, Any], tmp_path: Path) -> None:
    for manifest in recorded["manifests"].values():
        result = cli("mock", "--validate", str(manifest))
        assert (result.returncode, result.stdout) == (0, f"{manifest}: manifest is valid\n")
    broken = load_manifest(recorded["manifests"]["json"])
    broken["tools"][1]["name"] = "echo"
    del broken["tools"][2]["inputSchema"]
    bad = tmp_path / "bad.json"
    write_manifest(broken, bad)
    result = cli("mock", "--validate", str(bad))
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f'{bad}#/tools/1/name: error: [duplicate] duplicate tool name "echo" (first at /tools/0)',
        f"{bad}#/tools/2/inputSchema: error: [schema] inputSchema is missing",
        f"{bad}: 2 finding(s) (2 errors, 0 warnings)",
    ]
    data = json.loads(cli("mock", "--validate", str(bad), "--format", "json").stdout)
    assert (data["valid"], data["errors"], data["findings"][0]["pointer"]) == (
        False,
        2,
        "/tools/1/name",
    )
    served = cli("mock", str(bad))
    assert served.returncode == 3  # a duplicate tool cannot be served either
    assert served.stderr.startswith(f"cassette: error: {bad}: 1 error(s) keep this manifest")


def test_bad_input_is_one_line_and_a_documented_exit_code(
    recorded: dict[str, Any], tmp_path: Path
) -> None:
    missing = cli("mock", "--validate", str(tmp_path / "nope.json"))
    assert (missing.returncode, missing.stderr) == (
        3,
        f"cassette: error: {tmp_path / 'nope.json'}: no such manifest\n",
    )
    broken = tmp_path / "broken.json"
    broken.write_text('{"manifest": 1,\n "tools": [}\n')
    result = cli("mock", str(broken))
    assert (result.returncode, result.stderr) == (
        3,
        f"cassette: error: {broken}:2: not valid JSON: Expecting value (column 12)\n",
    )
    assert cli("mock", str(tmp_path / "m.yaml")).returncode == 2
    nowhere = cli("mock", str(recorded["manifests"]["json"]), "--front", "nope")
    assert nowhere.returncode == 2
    assert nowhere.stderr.startswith("cassette: error: no transport named 'nope'; installed:")
    tape = str(recorded["tape"])
    # --as-mock names the only kind of distillation, so it may be left out
    assert cli("distill", tape, "-o", str(tmp_path / "m.json")).returncode == 0
    assert cli("distill", tape, "--as-mock", "-o", str(tmp_path / "m.yml")).returncode == 2
    again = cli("distill", tape, "--as-mock", "-o", str(recorded["manifests"]["json"]))
    assert again.returncode == 3
    assert "refusing to overwrite it (pass --overwrite" in again.stderr
    unreadable = cli("distill", str(tmp_path / "none.jsonl"), "--as-mock", "-o", str(broken))
    assert unreadable.returncode == 3
    assert "Traceback" not in missing.stderr + result.stderr + again.stderr
