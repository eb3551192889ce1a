"""The replay's first line: whether anything is wrong, in plain words.

A replay prints one line when it starts, and most people read no further. It must say,
without the protocol's vocabulary, whether the clients people run would be answered as
the live server answered them. The verdicts of ``cassette.core.eras.fits`` decide it (one per
known client, by the rule the replay's own warnings follow); this module only words them:

* ``serves any MCP client``, unless a known client would be refused (a legacy-only
  client of a 2026-07-28 recording), which is said with the command that fixes it;
* each caveat, the clients grouped by what differs: ``Claude Code would be answered from
  a session without its elicitation and roots; Gemini CLI from one without its roots``;
* else ``nothing to warn of``, and which clients get the listings the recorder's probes
  took for their capabilities (the live server's, not the session's).

The agents people run (Claude Code, Gemini CLI, the MCP Inspector) are named; the other
known clients (the SDKs' profiles) are counted, so the line stays one line: ``2 other known
clients from a session recorded with other capabilities``; ``-v`` names them.

The details (eras, revisions, sessions, profiles' names) are ``replay -v``'s and
``show``'s. Sans-IO: verdicts in, words out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from cassette.core.eras.fits import Verdict

__all__ = ["client_names", "first_line"]

#: how the line names a known client, and whether the name is plural, by profile name;
#: a profile not listed is named by its ``client_info.title``, else its name
_NAMES: Final = {
    "claude-code": ("Claude Code", False),
    "gemini-cli": ("Gemini CLI", False),
    "inspector": ("the MCP Inspector", False),
    "bare": ("the SDKs' default clients", True),
    "sdk-handlers": ("the SDK clients given handlers", True),
    "py-sdk1": ("the Python SDK 1.x", False),
    "ts-sdk1": ("the TypeScript SDK 1.x", False),
    "ai-sdk": ("the AI SDK", False),
}
#: the order the line names clients in: the ones people run first
_ORDER: Final = ("claude-code", "gemini-cli", "inspector")


def _name(client: Mapping[str, Any]) -> tuple[str, bool]:
    name = str(client["name"])
    if name in _NAMES:
        return _NAMES[name]
    info = client.get("client_info")
    title = info.get("title") if isinstance(info, Mapping) else None
    return (title if isinstance(title, str) else name), False


def client_names(verdicts: Sequence[Verdict]) -> str:
    """``Claude Code, Gemini CLI and the MCP Inspector``: the clients of ``verdicts``."""
    return _joined([_name(v.client)[0] for v in verdicts])


def _joined(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _ordered(verdicts: Sequence[Verdict]) -> list[Verdict]:
    rank = {name: index for index, name in enumerate(_ORDER)}
    return sorted(verdicts, key=lambda v: rank.get(v.name, len(_ORDER)))


def first_line(verdicts: Sequence[Verdict]) -> str:
    """Whether anything is wrong for the known clients, in plain words (see the module
    docstring): ``serves any MCP client; nothing to warn of``, or what is wrong."""
    ordered = _ordered(verdicts)
    named = [v for v in ordered if v.name in _ORDER or v.name == "bare"]
    others = [v for v in ordered if v not in named]
    refused = [v for v in named if v.how == "refused"]
    parts = [_refused(refused, others) if refused else "serves any MCP client"]
    groups: dict[tuple[bool, tuple[str, ...], tuple[str, ...]], list[Verdict]] = {}
    for verdict in named:
        if verdict.caveat and verdict.how != "refused":
            key = (verdict.how == "untold", verdict.plus, verdict.minus)
            groups.setdefault(key, []).append(verdict)
    parts += [_caveat(group, index == 0) for index, group in enumerate(groups.values())]
    told = [v for v in others if v.caveat and v.how != "refused"]
    if told:
        lead = " would be answered" if not groups else ""
        parts.append(f"{_others(len(told))}{lead} from a session recorded with other capabilities")
    if not refused and not groups and not told:
        probed = [v for v in named if v.how == "probed"]
        extra = sum(1 for v in others if v.how == "probed")
        parts.append("nothing to warn of" + _probed(probed, extra))
    return "; ".join(parts)


def _others(count: int) -> str:
    return f"{count} other known client" + ("" if count == 1 else "s")


def _plural(verdicts: Sequence[Verdict]) -> bool:
    return len(verdicts) > 1 or _name(verdicts[0].client)[1]


def _probed(probed: Sequence[Verdict], others: int) -> str:
    """Who gets the listings the recorder's probes took for its capabilities: the named
    clients, and how many others."""
    names = [_name(v.client)[0] for v in probed] + ([_others(others)] if others else [])
    if not names:
        return ""
    plural = len(names) > 1 or (probed and _name(probed[0].client)[1]) or others > 1
    return (
        f": {_joined(names)} {'get' if plural else 'gets'} the listings the live "
        f"server gave {'them' if plural else 'it'}"
    )


def _refused(refused: Sequence[Verdict], others: Sequence[Verdict]) -> str:
    also = sum(1 for v in others if v.how == "refused")
    names = _joined([_name(v.client)[0] for v in refused] + ([_others(also)] if also else []))
    return (
        f"{names} would be refused: the recording speaks only MCP 2026-07-28 "
        "(cassette variant TAPE --as legacy records a session for them)"
    )


def _caveat(group: Sequence[Verdict], first: bool) -> str:
    """``Claude Code would be answered from a session without its roots``; after the
    first caveat, ``Gemini CLI from one without its roots``."""
    plural = _plural(group)
    whose = "their" if plural else "its"
    said = client_names(group) + (" would be answered from a session " if first else " from one ")
    verdict = group[0]
    if verdict.how == "untold":
        return said + "that does not say what its client declared"
    lacking = f"without {whose} {_joined(verdict.plus)}" if verdict.plus else ""
    extra = ""
    if verdict.minus:
        declare = "they do not declare" if plural else "it does not declare"
        extra = f"with {_joined(verdict.minus)}, which {declare}"
    if lacking and extra:
        return said + f"{extra}, and {lacking}"
    return said + (lacking or extra)
