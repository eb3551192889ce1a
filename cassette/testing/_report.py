"""What the check-suite reports: each property's outcome, and the error a failure raises.

``_Failure`` is how any part of the suite says a property does not hold; the public report
types are re-exported by ``cassette.testing``. They sit at the bottom of the suite's
modules so every part can fail a property without importing the runner.
"""

from __future__ import annotations

from typing import Literal

import attrs


class _Failure(Exception):
    """A property does not hold; the message says how."""


@attrs.frozen
class CheckResult:
    """One property's outcome."""

    property: str
    outcome: Literal["passed", "failed", "skipped"]
    detail: str = ""


@attrs.frozen
class CheckReport:
    """Every property's outcome for one transport."""

    transport: str
    results: tuple[CheckResult, ...]

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if r.outcome == "failed")

    @property
    def passed(self) -> tuple[str, ...]:
        return tuple(r.property for r in self.results if r.outcome == "passed")

    @property
    def skipped(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if r.outcome == "skipped")

    @property
    def ok(self) -> bool:
        return not self.failed

    def __str__(self) -> str:
        marks = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}
        lines = [f"transport {self.transport!r}:"]
        for r in self.results:
            lines.append(
                f"  {marks[r.outcome]} {r.property}" + (f": {r.detail}" if r.detail else "")
            )
        return "\n".join(lines)


class TransportCheckError(AssertionError):
    """At least one property failed; ``report`` has them all."""

    def __init__(self, report: CheckReport) -> None:
        names = ", ".join(r.property for r in report.failed)
        super().__init__(f"transport {report.transport!r} fails: {names}\n{report}")
        self.report = report
