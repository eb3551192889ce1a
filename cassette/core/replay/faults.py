"""Fault plans: which client requests a replay answers with a fault instead, sans-IO.

Theory of operation
-------------------
A ``FaultPlan`` is a list of ``FaultRule`` values and a seed. Each rule has a *selector*
(a method, a name: the tool or prompt name, or the resource URI; the n-th call it
matches; a probability) and a *fault* (``delay``, ``timeout``, ``error``, ``malformed``,
``disconnect``, ``exit``). The runtime lays a plan over any responder (a cassette's
replay, a mock) on every front (``cassette.runtime.faults``); the cassette itself is
never touched.

``Injector`` is one client session's view of a plan: ``decide(request)`` returns the fault
for that request, or ``None``. Rules are tried in order and the first that fires wins.
Every rule counts the calls it matches (``nth`` fires on exactly one), and a rule with a
``probability`` draws from a ``random.Random`` seeded by the plan, once per matching call:
the same calls in the same order meet the same faults on every run and every machine,
and a dry run over the recording (``preview``) shows which ones.

Only requests are faulted (a notification has no answer to spoil). What each fault does
on the wire is the runtime's; the values here only say which and with what parameters.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal, get_args

import attrs

from cassette.core.wire.jsonrpc import JSONObject
from cassette.errors import UsageError

__all__ = [
    "FAULT_KINDS",
    "FaultKind",
    "FaultPlan",
    "FaultRule",
    "Injector",
    "preview",
    "subject_of",
]

FaultKind = Literal["delay", "timeout", "error", "malformed", "disconnect", "exit"]
FAULT_KINDS: Final[tuple[str, ...]] = get_args(FaultKind)
#: The error a plan's ``error`` fault sends unless it says otherwise: what a server that
#: failed inside a handler answers.
DEFAULT_ERROR_CODE: Final = -32603
DEFAULT_ERROR_MESSAGE: Final = "Internal error (injected fault)"

_KEYS: Final = frozenset(
    {"kind", "method", "name", "nth", "probability", "seconds", "code", "message", "data"}
    | {"text", "exit-code", "exit_code"}
)


def subject_of(request: JSONObject) -> str | None:
    """What a request is about, for ``name`` selectors: the tool or prompt name, or the
    resource URI."""
    params = request.get("params")
    if not isinstance(params, dict):
        return None
    for key in ("name", "uri"):
        value = params.get(key)
        if isinstance(value, str):
            return value
    return None


@attrs.frozen(kw_only=True)
class FaultRule:
    """One rule of a plan: which requests (``method``, ``name``, ``nth``,
    ``probability``) and what happens to them (``kind`` and its parameters)."""

    kind: FaultKind
    method: str | None = None
    name: str | None = None
    nth: int | None = None
    probability: float | None = None
    seconds: float = 0.0
    code: int = DEFAULT_ERROR_CODE
    message: str = DEFAULT_ERROR_MESSAGE
    data: Any = None
    text: str | None = None
    exit_code: int = 1

    def __attrs_post_init__(self) -> None:
        problem = self.problem()
        if problem is not None:
            raise UsageError(problem)

    def problem(self) -> str | None:
        """Why this rule cannot be run, or ``None``."""
        if self.kind not in FAULT_KINDS:
            from cassette.core.words.suggest import unknown_choice

            return unknown_choice("fault kind", self.kind, FAULT_KINDS)
        if self.nth is not None and (isinstance(self.nth, bool) or self.nth < 1):
            return f"nth counts matching calls from 1, not {self.nth!r}"
        if self.probability is not None and not 0 <= self.probability <= 1:
            return f"probability must be between 0 and 1, not {self.probability!r}"
        if self.kind == "delay" and not (math.isfinite(self.seconds) and self.seconds > 0):
            return f"a delay needs seconds > 0, not {self.seconds!r}"
        if self.kind == "exit" and not 0 <= self.exit_code <= 255:
            return f"exit-code must be 0 to 255, not {self.exit_code!r}"
        return None

    def selects(self, request: JSONObject) -> bool:
        """Whether ``request`` is one this rule counts (before ``nth`` and chance)."""
        if self.method is not None and request.get("method") != self.method:
            return False
        return self.name is None or subject_of(request) == self.name

    def describe(self) -> str:
        """The rule for a person: ``timeout of tools/call "search" (2nd call)``."""
        what = {
            "delay": f"delay {self.seconds:g}s",
            "error": f"error {self.code}",
            "exit": f"exit {self.exit_code}",
        }.get(self.kind, self.kind)
        target = self.method or ("any request" if self.name is None else "")
        if self.name is not None:
            target = f'{target} "{self.name}"'.lstrip()
        extra = []
        if self.nth is not None:
            extra.append(f"call {self.nth}")
        if self.probability is not None:
            extra.append(f"probability {self.probability:g}")
        return f"{what} on {target}" + (f" ({', '.join(extra)})" if extra else "")

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> FaultRule:
        """A rule from a plan file's table (``exit-code`` or ``exit_code``); unknown keys and
        wrong types are a ``UsageError`` naming them."""
        unknown = sorted(set(data) - _KEYS)
        if unknown:
            raise UsageError(
                f"unknown key(s) {', '.join(unknown)}; a fault takes {', '.join(sorted(_KEYS))}"
            )
        if "kind" not in data:
            raise UsageError(f"a fault needs a kind: one of {', '.join(FAULT_KINDS)}")
        values = dict(data)
        if "exit-code" in values:
            values["exit_code"] = values.pop("exit-code")
        _check_types(values)
        return cls(**values)


_TYPES: Final[Mapping[str, tuple[type, ...]]] = {
    "kind": (str,),
    "method": (str,),
    "name": (str,),
    "nth": (int,),
    "probability": (int, float),
    "seconds": (int, float),
    "code": (int,),
    "message": (str,),
    "text": (str,),
    "exit_code": (int,),
}


def _check_types(values: Mapping[str, Any]) -> None:
    for key, value in values.items():
        types = _TYPES.get(key)
        if types is not None and (isinstance(value, bool) or not isinstance(value, types)):
            wanted = " or ".join(t.__name__ for t in types)
            shown = key.replace("_", "-") if key == "exit_code" else key
            raise UsageError(f"{shown} must be a {wanted}, not {value!r}")


@attrs.frozen
class FaultPlan:
    """Rules tried in order, first firing wins; ``seed`` makes probabilities repeatable."""

    rules: tuple[FaultRule, ...]
    seed: int = 0

    @classmethod
    def of(cls, rules: Iterable[FaultRule | Mapping[str, Any]], seed: int = 0) -> FaultPlan:
        """A plan from rules or their tables (as in a plan file)."""
        made: list[FaultRule] = []
        for number, rule in enumerate(rules, 1):
            try:
                made.append(rule if isinstance(rule, FaultRule) else FaultRule.from_data(rule))
            except UsageError as exc:
                raise UsageError(f"fault {number}: {exc}") from None
        return cls(tuple(made), seed)

    @classmethod
    def from_data(cls, data: Any) -> FaultPlan:
        """A plan from a decoded file: ``{"seed": 7, "fault": [ {...}, ... ]}`` (``faults``
        is accepted for ``fault``)."""
        if not isinstance(data, Mapping):
            raise UsageError("a fault plan is a table with [[fault]] entries")
        unknown = sorted(set(data) - {"seed", "fault", "faults"})
        if unknown:
            raise UsageError(f"unknown key(s) {', '.join(unknown)}; a plan takes seed and fault")
        seed = data.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise UsageError(f"seed must be a whole number, not {seed!r}")
        rules = data.get("fault", data.get("faults", []))
        if not isinstance(rules, list) or not all(isinstance(r, Mapping) for r in rules):
            raise UsageError("fault must be a list of tables ([[fault]] in TOML)")
        return cls.of(rules, seed)

    def injector(self) -> Injector:
        """A fresh session's view of the plan."""
        return Injector(self)


class Injector:
    """One client session's fault decisions (see the module docstring)."""

    def __init__(self, plan: FaultPlan) -> None:
        self.plan = plan
        self._counts = [0] * len(plan.rules)
        self._random = random.Random(plan.seed)  # noqa: S311 (repeatable on purpose)

    def decide(self, request: JSONObject) -> FaultRule | None:
        """The fault for this client request, or ``None``; counts it for every rule."""
        index = self.decide_index(request)
        return None if index is None else self.plan.rules[index]

    def decide_index(self, request: JSONObject) -> int | None:
        """``decide``, as the index of the rule in the plan."""
        chosen: int | None = None
        for index, rule in enumerate(self.plan.rules):
            if not rule.selects(request):
                continue
            self._counts[index] += 1
            if rule.nth is not None and self._counts[index] != rule.nth:
                continue
            if rule.probability is not None and self._random.random() >= rule.probability:
                continue
            if chosen is None:
                chosen = index
        return chosen


def preview(plan: FaultPlan, requests: Sequence[tuple[int, JSONObject]]) -> list[tuple[int, int]]:
    """A dry run: for recorded requests ``(line, request)`` in order, the ``(line, rule
    index)`` of each a client making the same calls would see faulted."""
    injector = plan.injector()
    hits: list[tuple[int, int]] = []
    for line, request in requests:
        index = injector.decide_index(request)
        if index is not None:
            hits.append((line, index))
    return hits
