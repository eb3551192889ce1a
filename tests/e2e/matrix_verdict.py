"""How a cell of the cross-client matrix is judged (tests/e2e/test_client_matrix.py), from
its outcome alone: so that a result saved by an older run is judged again by the rules
of today (tests/e2e/matrix_table.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cassette.core.eras.legacy_calls import ANNOUNCED

SESSION_SPEC = json.loads(
    (Path(__file__).resolve().parents[1] / "clients" / "session.json").read_text("utf-8")
)

#: the steps of the scripted session (tests/clients/README.md)
STEPS = ("tools", "resources", "prompts", "echo", "progress", "prompt", "prompt_args", "read")


def failed_step(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"error"}


def cassette_cannot_serve(tape: Path, live_protocol: Any) -> bool:
    """True when the recording cannot show that the server would serve the replaying client
    in the era it negotiated live, so that issue 14 asks for a clear refusal naming --era
    (or, for a dual-era client of a legacy cassette, the legacy session the recording
    proves): a legacy session and a client that negotiated 2026-07-28; a 2026-07-28 session
    with no recorded ``server/discover`` (a modern-only client recorded it: the recording
    says nothing of the handshake); one whose recorded discovery lists no legacy revision,
    and a legacy client (mcp 2.3.0's and fastmcp 4's default discovery list only
    2026-07-28, although both servers accept ``initialize``: dual_era_server.py lists all)."""
    lines = [json.loads(line) for line in tape.read_text("utf-8").splitlines() if line]
    era = lines[0].get("era") or "legacy"
    if era == "legacy":
        return live_protocol == MODERN
    probed = any((e.get("meta") or {}).get("variant") == "legacy-probe" for e in lines[1:])
    if probed and live_protocol != MODERN:
        return False  # the recorder's probe shows the server's answer to a legacy client
    listed = None
    for event in lines[1:]:
        result = (event.get("message") or {}).get("result")
        if isinstance(result, dict) and "supportedVersions" in result:
            listed = result["supportedVersions"]
            break
    if listed is None:
        return True
    # (the Inspector CLI reports no version: a legacy client, the TypeScript SDK 1.x inside)
    return live_protocol != MODERN and all(v == MODERN for v in listed)


MODERN = "2026-07-28"


#: What the replay's refusal says on how to record the cassette for the refused client
#: (cassette.core.eras.bridge): the era to record in, or to record with that client.
RECORD_HINTS = ("--era", "record it with this client")


def verdict(outcome: dict[str, Any]) -> tuple[str, str]:
    """A cell's status ("pass", "refused", "legacy", "announced" or "fail") from its
    outcome, and why it failed.

    - The live server refused the client: the replay must refuse it too, with the same
      errors or with a line on how to record for it.
    - The recording cannot tell whether the server would have served the client in the era
      it negotiated live (``cassette_cannot_serve``): serving it as live passes, and so does
      a refusal whose reported miss says how to record for it (issue 14's -32022 line), and
      for a dual-era client of a legacy cassette, the legacy session it falls back to
      ("legacy", ``_fell_back``).
    - A legacy client of a 2026-07-28 recording may see other tool results than live where
      the replay announced those tools (``_announced``): "announced".
    - Otherwise the client must observe on replay exactly what it observed live, and the
      replay must report no miss.
    """
    refusal = _refusal(outcome)
    if refusal is not None:
        return refusal
    if outcome["cannot_tell"] and _fell_back(outcome):
        return "legacy", ""
    if (outcome["diff"] or outcome["misses"]) and _announced(outcome):
        return "announced", ""
    if outcome["diff"]:
        return "fail", "the client saw on replay what it did not see live"
    if outcome["misses"]:
        return "fail", f"the replay reported misses: {outcome['misses']}"
    return "pass", ""


#: the steps of the scripted session that call a tool (session.json names it per server)
TOOL_STEPS = ("echo", "progress", "sampling", "elicitation", "roots", "gated")


def _announced(outcome: dict[str, Any]) -> bool:
    """A client whose every difference from live is a tool call the replay announced: it
    said, in its log and in any error it answered for the tool, that the tool's behaviour
    for this client was not recorded and how to record it (``cassette.core.eras.legacy_calls``:
    a legacy client of a 2026-07-28 recording, or a client of other capabilities than the
    recording's, which the live server asks for input, or refuses, otherwise). The
    callbacks those calls fire may differ, and the misses must be such calls' own."""
    told = set(outcome.get("announced") or ())
    if not told:
        return False
    spec = SESSION_SPEC["servers"][outcome["server"]]
    for step in set(outcome["diff"]) - {"callbacks"}:
        if step not in TOOL_STEPS or spec[step]["name"] not in told:
            return False
    return all(ANNOUNCED in miss for miss in outcome["misses"])


def _fell_back(outcome: dict[str, Any]) -> bool:
    """A dual-era client of a legacy cassette, served the legacy session the recording
    proves (its probe got -32601, as from a legacy server, and it fell back to
    ``initialize``): no miss, and every step that succeeded live succeeded on replay. What
    it saw differs from its 2026-07-28 live run only as the eras differ."""
    live, replayed = outcome["live"], outcome["replay"]
    if outcome["misses"] or replayed.get("protocol") in (None, MODERN):
        return False
    if live.get("protocol") != MODERN:
        return False
    return all(failed_step(live.get(s)) or not failed_step(replayed.get(s)) for s in STEPS)


def _refusal(outcome: dict[str, Any]) -> tuple[str, str] | None:
    """The verdict of a cell where a refusal is the right answer (``None`` elsewhere)."""
    replay_refused = outcome["replay_refused"]
    clearly = replay_refused and any(h in m for m in outcome["misses"] for h in RECORD_HINTS)
    if outcome["live_refused"]:
        if not replay_refused:
            return "fail", "the live server refused the client; the replay served it"
        if outcome["diff"] and not clearly:
            return "fail", "refused on replay not as live, and not a word of how to record"
        return "refused", ""
    if outcome["cannot_tell"] and replay_refused:
        if not clearly:
            return "fail", "refused on replay without a miss saying how to record for it"
        return "refused", ""
    return None
