"""Variant sessions end to end (issue 14): a cassette recorded by one client serves a client
the live server answers differently, once ``cassette variant`` has recorded that client.

Real counterparts: the official Python SDK 2.x client against the dual-era server written
with the Python SDK (tests/servers/dual_era_server.py), over stdio. The ``greet`` tool asks
the client for a name (elicitation): a client that declares elicitation and answers gets a
greeting, one that declares nothing gets what the live server gives it. Each client's
replay is compared with its own live run.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette
from tests.helpers.support import (
    OFFLINE_ENV,
    PY,
    ROOT,
    dump,
    record_command,
    replay_command,
    run,
    scaled,
)
from tests.helpers.support import stdio_params as params

pytestmark = pytest.mark.e2e

DUAL = [PY, str(ROOT / "tests" / "servers" / "dual_era_server.py")]


async def greet(command: list[str], *, answers: bool, env: dict[str, str] | None = None) -> Any:
    """What the SDK 2 default client sees calling ``greet``: with an elicitation callback
    that answers a name (``answers``), or with no callback at all (no capabilities)."""
    from mcp import Client
    from mcp import types as t

    async def on_elicitation(_ctx: Any, _params: Any) -> Any:
        return t.ElicitResult(action="accept", content={"name": "Ada"})

    extra = {"elicitation_callback": on_elicitation} if answers else {}
    async with Client(params(command, env), cache=None, **extra) as client:
        try:
            return dump(await client.call_tool("greet", {}))
        except Exception as exc:  # the live server's refusal is what the client saw
            return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}"}


def misses(report: Path) -> list[str]:
    if not report.exists():
        return []
    facts = [json.loads(line) for line in report.read_text("utf-8").splitlines()]
    return [str(f.get("text")) for f in facts if f.get("event") == "miss"]


def replayed(tape: Path, report: Path, *, answers: bool) -> Any:
    command = replay_command(tape, "--report", str(report))
    return run(lambda: greet(command, answers=answers, env=OFFLINE_ENV))


def variant(tape: Path, *names: str, extra: tuple[str, ...] = ()) -> Any:
    argv = [PY, "-m", "cassette", "variant", str(tape), *extra]
    for name in names:
        argv += ["--as", name]
    return subprocess.run(argv, capture_output=True, text=True, timeout=scaled(120), check=False)


def test_a_variant_serves_the_client_the_recording_did_not_hold(tmp_path: Path) -> None:
    tape = tmp_path / "dual.jsonl"
    rich_live = run(lambda: greet(record_command(tape, DUAL), answers=True))
    assert "Ada" in json.dumps(rich_live)
    bare_live = run(lambda: greet(DUAL, answers=False))
    assert bare_live != rich_live

    # Without a variant, the bare client is answered from the rich client's recording.
    before = replayed(tape, tmp_path / "before.jsonl", answers=False)
    assert before != bare_live

    done = variant(tape, "bare")
    assert done.returncode == 0, done.stderr
    # the call and the SDK's tools/list after it; greet refused for want of elicitation
    assert "variant bare: sent 2 request(s) again (1 answered with an error)" in done.stderr
    again = variant(tape, "bare")
    assert again.returncode == 0, again.stderr
    assert "skipped: the cassette already holds a variant named bare" in again.stderr
    lines = tape.read_text("utf-8").count('"variant":"bare"')
    replaced = variant(tape, "bare", extra=("--replace",))
    assert replaced.returncode == 0, replaced.stderr
    assert tape.read_text("utf-8").count('"variant":"bare"') == lines  # in place, not twice
    events = Cassette.load(tape).events
    names = {(getattr(e, "meta", None) or {}).get("variant") for e in events}
    assert names >= {None, "bare"}
    # the probes are the main recording's: a variant's session brings none of its own
    metas = [getattr(e, "meta", None) or {} for e in events]
    assert any("probe" in m for m in metas)
    assert not [m for m in metas if "probe" in m and "variant" in m]

    report = tmp_path / "bare.jsonl"
    assert replayed(tape, report, answers=False) == bare_live
    assert misses(report) == []
    report = tmp_path / "rich.jsonl"
    assert replayed(tape, report, answers=True) == rich_live
    assert misses(report) == []


def test_show_and_the_banner_name_the_variants(tmp_path: Path) -> None:
    tape = tmp_path / "dual.jsonl"
    run(lambda: greet(record_command(tape, DUAL), answers=True))
    done = variant(tape, "legacy")
    assert done.returncode == 0, done.stderr
    shown = subprocess.run(
        [PY, "-m", "cassette", "show", str(tape)], capture_output=True, text=True, check=True
    )
    # one line per session: what it serves, its client's capabilities, the clients it fits
    assert shown.stdout.splitlines()[2].startswith("  session legacy: serves legacy ")
    assert "recorded with elicitation" in shown.stdout.splitlines()[2]
    banner = subprocess.run(
        [PY, "-m", "cassette", "replay", str(tape), "-v"],
        input="",
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )
    said = [line.removeprefix("cassette: ").strip() for line in banner.stderr.splitlines()]
    assert said[0].startswith(f"replaying {tape}: serves any MCP client")
    for line in shown.stdout.splitlines()[1:3]:  # the banner's details say the same
        assert line.strip() in said
    lint = subprocess.run(
        [PY, "-m", "cassette", "lint", str(tape)], capture_output=True, text=True, check=False
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr


FASTMCP = [PY, str(ROOT / "tests" / "servers" / "fastmcp_server.py")]


async def greet_as(command: list[str], mode: str, env: dict[str, str] | None = None) -> Any:
    """``greet`` from the SDK 2 client in ``mode``, answering the name as Ada."""
    from mcp import Client
    from mcp import types as t

    async def on_elicitation(_ctx: Any, _params: Any) -> Any:
        return t.ElicitResult(action="accept", content={"name": "Ada"})

    async with Client(
        params(command, env), mode=mode, cache=None, elicitation_callback=on_elicitation
    ) as client:
        await client.list_tools()  # the SDK lists tools after a call that succeeds, too
        result = dump(await client.call_tool("greet", {}))
    return {"text": result["content"][0]["text"], "isError": result["isError"]}


def test_answers_the_recording_never_held_are_given_with_answers(tmp_path: Path) -> None:
    """fastmcp cannot ask a 2026-07-28 client anything, so a recording made in that era
    holds no answer to elicitation: a legacy variant says so, and --answers supplies it."""
    tape = tmp_path / "fastmcp.jsonl"
    modern = run(lambda: greet_as(record_command(tape, FASTMCP), "auto"))
    assert modern["isError"]  # elicitation is unavailable on 2026-07-28 connections
    legacy_live = run(lambda: greet_as(FASTMCP, "legacy"))
    assert legacy_live == {"text": "Hello, Ada!", "isError": False}

    first = variant(tape, "legacy")
    assert first.returncode == 0, first.stderr
    assert "the server asked elicitation/create, which the recording never answered" in (
        first.stderr
    )
    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps({"elicitation/create": {"action": "accept", "content": {"name": "Ada"}}})
    )
    again = variant(tape, "legacy", extra=("--replace", "--answers", str(answers)))
    assert again.returncode == 0, again.stderr
    assert "never answered" not in again.stderr

    command = replay_command(tape)
    assert run(lambda: greet_as(command, "legacy", OFFLINE_ENV)) == legacy_live
    assert run(lambda: greet_as(command, "auto", OFFLINE_ENV)) == modern
