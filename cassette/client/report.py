"""What ``verify`` found, as values a test or a CI script can use, and as the report text.

A ``Verdict`` per recorded request (and one per server request the cassette could not
answer as recorded); a ``VerifyReport`` holds them with what an update did. The text is
the same whether it is printed by ``cassette verify`` or shown by a failing pytest test,
so a person learns one format.
"""

from __future__ import annotations

import json
from typing import Any, Final

import attrs

from cassette.core.replay.matching import show_value
from cassette.core.words.colour import Rule
from cassette.core.words.jsondiff import MISSING

__all__ = ["COLOURS", "DRIFT", "Verdict", "VerifyReport", "render"]

#: Every status but ``MATCH``: each one is drift.
DRIFT: Final = frozenset(
    {"CHANGED", "ERROR-SHAPE-CHANGED", "MISSING", "SERVER-REQUEST-CHANGED", "UNANSWERED"}
)


_DRIFTED: Final = "|".join(sorted(DRIFT, key=len, reverse=True))

#: how the report's text is painted on a terminal (``cassette.core.words.colour``): each
#: verdict's status, the counts, what an update did
COLOURS: Final = (
    Rule.of(rf"^({_DRIFTED}) ", "red"),
    Rule.of(r"^(MATCH) ", "green"),
    Rule.of(rf"(?<=: |, )(\d+ (?:{_DRIFTED}))(?=,|$)", "red"),
    Rule.of(r"(?<=: |, )(\d+ MATCH)(?=,|$)", "green"),
    Rule.of(r": (updated: \d+ change\(s\) written)$", "green"),
    Rule.of(r": (not updated:)", "yellow"),
)


def _plain(value: Any) -> Any:
    return None if value is MISSING else value


@attrs.frozen
class Verdict:
    """How one recorded exchange fared against the live server, at its line in the cassette.

    ``paths`` lists each differing JSON Pointer with the recorded and the live value
    (``MISSING`` for a side where the path does not exist)."""

    line: int
    request: str
    status: str  # MATCH, or one of DRIFT
    paths: tuple[tuple[str, Any, Any], ...] = ()
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "MATCH"

    def as_data(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "request": self.request,
            "status": self.status,
            "paths": [
                {"path": p, "recorded": _plain(a), "live": _plain(b)} for p, a, b in self.paths
            ],
            "detail": self.detail,
        }


def _lines(source: str, verdicts: tuple[Verdict, ...] | list[Verdict]) -> list[str]:
    lines = []
    for v in verdicts:
        lines.append(f"{v.status:<19} {v.request}  ({source}:{v.line})")
        if v.detail:
            lines.append(f"    {v.detail}")
        for path, old, new in v.paths:
            lines.append(f"    {path}: {show_value(old)} -> {show_value(new)}")
    return lines


def _summary(verdicts: tuple[Verdict, ...] | list[Verdict]) -> str:
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.status] = counts.get(v.status, 0) + 1
    return ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no requests"


def render(source: str, verdicts: tuple[Verdict, ...] | list[Verdict]) -> str:
    """The report text: a line per verdict (with its paths), then the counts."""
    return "\n".join([*_lines(source, verdicts), f"{source}: {_summary(verdicts)}"])


@attrs.frozen
class VerifyReport:
    """Everything one verify run found.

    ``updated``: the cassette was rewritten with the live answers (``--update``);
    ``kept`` says, one line each, what drifted but could not be written (no live answer,
    a server request the cassette cannot answer). ``recorded``: there was no cassette to
    verify, so it was recorded instead (the pytest fixture, from a scenario), and
    ``problems`` are the steps that failed while recording it.
    """

    cassette: str
    verdicts: tuple[Verdict, ...] = ()
    updated: bool = False
    kept: tuple[str, ...] = ()
    recorded: bool = False
    problems: tuple[str, ...] = ()
    note: str = ""

    @property
    def drift(self) -> tuple[Verdict, ...]:
        """The verdicts that are not ``MATCH``."""
        return tuple(v for v in self.verdicts if not v.ok)

    @property
    def failures(self) -> tuple[Verdict, ...]:
        """What makes the run fail: the drift, unless an update accepted all of it."""
        if self.updated and not self.kept:
            return ()
        return self.drift

    @property
    def ok(self) -> bool:
        """No drift, or every bit of it written into the cassette by an update."""
        return not self.failures and not self.kept and not self.problems

    def text(self) -> str:
        lines = [render(self.cassette, self.verdicts)] if self.verdicts else []
        if self.updated:
            written = len(self.drift) - len(self.kept)
            lines.append(f"{self.cassette}: updated: {written} change(s) written")
        lines += [f"{self.cassette}: not updated: {k}" for k in self.kept]
        lines += list(self.problems)
        if self.note:
            lines.append(f"{self.cassette}: {self.note}")
        return "\n".join(lines)

    def as_data(self) -> dict[str, Any]:
        return {
            "cassette": self.cassette,
            "requests": [v.as_data() for v in self.verdicts],
            "updated": self.updated,
            "kept": list(self.kept),
            "recorded": self.recorded,
            "problems": list(self.problems),
            "ok": self.ok,
        }

    def json(self) -> str:
        return json.dumps(self.as_data(), indent=2)

    def assert_ok(self) -> None:
        """Fail (``AssertionError``) with the report when the server drifted: how a pytest
        test states "my server still answers as recorded"."""
        __tracebackhide__ = True
        if not self.ok:
            heading = "recording the cassette failed" if self.recorded else "the server drifted"
            raise AssertionError(f"{heading}:\n{self.text()}")

    def __str__(self) -> str:
        return self.text()
