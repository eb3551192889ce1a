"""The third-party plugin example (examples/cassette-tcp, installed by scripts/test.sh) from
the command line: `cassette record --transport tcp --upstream tcp://...` with the client on
stdio, then the cassette replayed over stdio and over the plugin's own TCP front."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette
from tests.helpers.support import OFFLINE_ENV, PY, Background, LineClient

pytest.importorskip("cassette_tcp", reason="pip install -e examples/cassette-tcp")
pytestmark = pytest.mark.e2e


def session(client: Any) -> list[dict[str, Any]]:
    answers = [client.initialize()]
    answers.append(client.request("tools/list"))
    answers.append(client.request("tools/call", {"name": "echo", "arguments": {"text": "é tcp"}}))
    return answers


class SocketClient:
    """Enough of LineClient's interface over a TCP socket."""

    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("tcp://").rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=20)
        self.lines = self.sock.makefile("rb")
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        self.sock.sendall(json.dumps(message).encode() + b"\n")

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            reply = json.loads(self.lines.readline())
            if reply.get("id") == self.next_id and "method" not in reply:
                return reply

    def initialize(self) -> dict[str, Any]:
        reply = self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def close(self) -> None:
        self.lines.close()
        self.sock.close()


def test_a_session_recorded_through_the_tcp_plugin_replays_on_stdio_and_tcp(
    tmp_path: Path,
) -> None:
    tape = tmp_path / "tcp.jsonl"
    with Background([PY, "-m", "cassette_tcp.peer"]) as peer:
        url = peer.wait_for(r"listening on (tcp://\S+)").group(1)
        argv = [PY, "-m", "cassette", "record", "-o", str(tape), "--transport", "tcp"]
        recorder = LineClient([*argv, "--upstream", url])
        live = session(recorder)
        code, err = recorder.finish()
    assert code == 0, err
    assert live[2]["result"]["content"][0]["text"] == "é tcp"
    cassette = Cassette.load(tape)
    assert (cassette.header.transport, cassette.header.target) == ("tcp", {"url": url})
    assert cassette.header.era == "legacy"

    over_stdio = LineClient([PY, "-m", "cassette", "replay", str(tape), "-q"], env=OFFLINE_ENV)
    assert session(over_stdio) == live
    assert over_stdio.finish()[0] == 0

    with Background([PY, "-m", "cassette", "replay", str(tape), "-q", "--front", "tcp"]) as front:
        # the plugin reports its address through ServeOptions.on_ready; the CLI prints it
        address = front.wait_for(r"cassette: serving on (tcp://\S+)").group(1)
        client = SocketClient(address)
        try:
            assert session(client) == live
        finally:
            client.close()


def test_the_tcp_plugin_works_with_every_option_set(tmp_path: Path) -> None:
    """A third-party plugin written to the Protocols: every option of ``record`` and of
    ``replay`` reaches it as one value, none breaks it (``--max-message-bytes`` used to
    crash a front written exactly to the Protocol), and new_episodes reaches its server
    through it."""
    tape = tmp_path / "tcp.jsonl"
    with Background([PY, "-m", "cassette_tcp.peer"]) as peer:
        url = peer.wait_for(r"listening on (tcp://\S+)").group(1)
        argv = [PY, "-m", "cassette", "record", "-o", str(tape), "--transport", "tcp"]
        argv += ["--upstream", url, "--upstream-timeout", "5", "--max-message-bytes", "1MiB"]
        argv += ["--max-depth", "64", "--fsync", "--strategy", "default", "--redact-env", "HOME"]
        recorder = LineClient(argv)
        live = session(recorder)
        code, err = recorder.finish()
        assert code == 0, err

        # new_episodes through the plugin: what the cassette lacks reaches the peer over TCP
        argv = [PY, "-m", "cassette", "record", "-o", str(tape), "--transport", "tcp"]
        extending = LineClient([*argv, "--upstream", url, "--mode", "new_episodes"])
        assert session(extending) == live
        extra = extending.request("tools/call", {"name": "echo", "arguments": {"text": "more"}})
        code, err = extending.finish()
        assert code == 0, err
        assert extra["result"]["content"][0]["text"] == "more"
        assert "appended 1 new episode(s)" in err

    argv = [PY, "-m", "cassette", "replay", str(tape), "-q", "--front", "tcp", "--host"]
    argv += ["127.0.0.1", "--port", "0", "--max-message-bytes", "2KiB", "--max-depth", "64"]
    argv += ["--pace", "recorded", "--pace-scale", "0.1", "--pace-cap", "0.2"]
    argv += ["--answer-timeout", "5", "--strategy", "default"]
    with Background(argv, env=OFFLINE_ENV) as front:
        address = front.wait_for(r"cassette: serving on (tcp://\S+)").group(1)
        client = SocketClient(address)
        try:
            assert session(client) == live
            again = client.request("tools/call", {"name": "echo", "arguments": {"text": "more"}})
            assert again == extra  # appended, replayed offline
            client.send({"jsonrpc": "2.0", "id": 77, "method": "ping", "params": {"p": "x" * 4096}})
            refused = json.loads(client.lines.readline())
        finally:
            client.close()
    assert refused["error"]["code"] == -32600  # over --max-message-bytes, the session goes on
    assert "Traceback" not in front.output()


def test_a_listening_plugin_front_stopped_before_any_client_exits_0(tmp_path: Path) -> None:
    """Stopping is a listener's normal end (stdio's is its client leaving): exit 0, not the
    128+N of an interrupted session."""
    import signal

    tape = Path(__file__).resolve().parents[2] / "examples" / "everything.jsonl"
    argv = [PY, "-m", "cassette", "replay", str(tape), "-q", "--front", "tcp"]
    with Background(argv, env=OFFLINE_ENV) as front:
        front.wait_for(r"cassette: serving on (tcp://\S+)")
        assert front.stop(signal.SIGINT) == 0, front.output()
