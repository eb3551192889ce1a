"""What ``check`` reports, live (``cassette.tools.check``) or from a recording
(``cassette.tools.check_tape``): the lists it reads, the rules a tool definition is held
to, and the report itself, so both say a thing the same way.
"""

from __future__ import annotations

import json
from typing import Any, Final

import attrs

from cassette.core.wire.definitions import TOOL_NAME, Issue, schema_issues

__all__ = ["SURFACES", "CheckReport", "install_hint", "schema_validator", "tool_issues"]

#: what ``check`` lists: the capability that advertises it, the list method, the result's
#: key for its items, and the count it goes to
SURFACES: Final = (
    ("tools", "tools/list", "tools", "tools"),
    ("resources", "resources/list", "resources", "resources"),
    ("resources", "resources/templates/list", "resourceTemplates", "templates"),
    ("prompts", "prompts/list", "prompts", "prompts"),
)


@attrs.frozen
class CheckReport:
    """What ``check`` found; ``passed`` is true when there is no error (a ``note`` says
    what was not checked and why, and counts as neither error nor warning)."""

    server: dict[str, Any]
    protocol: str | None
    era: str
    counts: dict[str, int]
    issues: tuple[Issue, ...]
    #: the cassette whose recorded surface this is (``check TAPE``); ``None``: a live server
    cassette: str | None = None

    @property
    def errors(self) -> int:
        return sum(i.severity == "error" for i in self.issues)

    @property
    def warnings(self) -> int:
        return sum(i.severity == "warning" for i in self.issues)

    @property
    def passed(self) -> bool:
        return self.errors == 0

    def as_data(self) -> dict[str, Any]:
        recorded = {} if self.cassette is None else {"cassette": self.cassette}
        return {
            **recorded,
            "server": self.server,
            "protocol": self.protocol,
            "era": self.era,
            "counts": self.counts,
            "findings": [attrs.asdict(i) for i in self.issues],
            "result": "PASS" if self.passed else "FAIL",
            "errors": self.errors,
            "warnings": self.warnings,
        }

    def text(self) -> str:
        name = self.server.get("name", "(unnamed)")
        version = self.server.get("version", "(no version)")
        c = self.counts
        lines = [] if self.cassette is None else [f"cassette: {self.cassette} (as recorded)"]
        lines += [
            f"server: {name} {version}",
            f"protocol: {self.protocol or 'unknown'} ({self.era} era)",
            f"surface: {c['tools']} tools, {c['resources']} resources, {c['prompts']} prompts, "
            f"{c['templates']} resource templates",
        ]
        lines += [f"{i.severity}: {i.message}" for i in self.issues]
        verdict = "PASS" if self.passed else "FAIL"
        lines.append(f"result: {verdict} ({self.errors} errors, {self.warnings} warnings)")
        return "\n".join(lines)


def tool_issues(tools: list[Any], jsonschema: Any) -> list[Issue]:
    """What is wrong with a server's tool definitions (names, descriptions, schemas)."""
    out: list[Issue] = []
    seen: set[str] = set()
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            out.append(Issue("error", f"tool #{index} has no name"))
            continue
        name = tool["name"]
        label = f"tool {json.dumps(name)}"
        if name in seen:
            out.append(Issue("error", f"{label}: duplicate tool name"))
        seen.add(name)
        if not TOOL_NAME.match(name):
            out.append(Issue("error", f"{label}: name must be 1-128 of A-Z a-z 0-9 _ . -"))
        if not str(tool.get("description") or "").strip():
            out.append(Issue("warning", f"{label}: no description"))
        out += schema_issues(
            jsonschema, f"{label} inputSchema", tool.get("inputSchema"), required=True
        )
        out += schema_issues(
            jsonschema, f"{label} outputSchema", tool.get("outputSchema"), required=False
        )
    return out


def schema_validator() -> tuple[Any, list[Issue]]:
    """``jsonschema`` (``None`` without the ``tools`` extra), and the warning a report
    gives when it is missing."""
    from cassette.core.wire.definitions import schema_checker

    jsonschema = schema_checker()
    if jsonschema is not None:
        return jsonschema, []
    warning = f"schemas not validated: jsonschema is not installed ({install_hint('tools')})"
    return None, [Issue("warning", warning)]


def install_hint(extra: str) -> str:
    """The command that installs ``extra`` for the install that is running."""
    from cassette._install import install_command

    return install_command(extra)
