"""Running a scenario's steps as a client: requests in order, the server's questions
answered from the scenarios file, and whether each step got what it expected.

A step is one request (a ``list`` step one per page, following ``nextCursor``). In a
legacy session the server asks mid-call with a request of its own, answered by
``ScenarioAnswers``; in a 2026-07-28 session it answers ``input_required`` instead, and
the step retries the request with ``inputResponses`` (and the ``requestState`` it was
given) until the server completes it, a bounded number of times.

A step fails, and the scenario goes on, when the server refuses it (a JSON-RPC error, or
a tool result with ``isError``) and it did not ``expect-error``, or the other way round,
or when no answer comes in time. When the server goes away, the remaining steps are not
run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from cassette.client.connection import METHOD_NOT_FOUND, McpClient, closed_errors
from cassette.client.opening import Opening
from cassette.client.scenarios import Answers, Step
from cassette.core.wire.jsonrpc import JSONObject

__all__ = ["ScenarioAnswers", "StepResult", "run_steps"]

_PAGES: Final = 50  # a server that paginates for ever is a failure, not a hang
_ROUNDS: Final = 10  # input_required rounds per step


@attrs.frozen
class StepResult:
    """How one step went: ``ok``, and for a person what went wrong."""

    step: Step
    ok: bool
    detail: str = ""
    run: bool = True  # False: skipped, the server had gone


class ScenarioAnswers:
    """The client's answers to the server's questions, from the scenarios file; every
    question it cannot answer is noted, so the step that caused it can say why."""

    def __init__(self, answers: Answers) -> None:
        self.answers = answers
        self.unanswered: list[str] = []

    def result(self, method: str) -> JSONObject | None:
        if method == "ping":
            return {}
        found = self.answers.results.get(method)
        if found is None:
            self.unanswered.append(method)
        return None if found is None else dict(found)

    async def __call__(self, request: JSONObject) -> JSONObject:
        error = self.answers.errors.get(str(request.get("method")))
        if error is not None:
            return {"error": dict(error)}
        result = self.result(str(request.get("method")))
        if result is None:
            return {"error": {"code": METHOD_NOT_FOUND, "message": "Method not found"}}
        return {"result": result}

    def take(self) -> str:
        """What the server asked that the file does not answer since the last call."""
        asked, self.unanswered = self.unanswered, []
        if not asked:
            return ""
        names = ", ".join(dict.fromkeys(asked))
        return f"the server asked {names}, which the scenarios file does not answer ([answers])"


def _one_line(text: str, limit: int = 200) -> str:
    """The first line of a server's message, cut to ``limit``: a report line stays one."""
    lines = text.strip().splitlines()
    first = lines[0] if lines else ""
    more = len(lines) > 1 or len(first) > limit
    return first[:limit] + (" ..." if more else "")


def _refusal(reply: JSONObject) -> str | None:
    """Why the server refused, or ``None`` when it did not."""
    error = reply.get("error")
    if error is not None:
        error = error if isinstance(error, dict) else {}
        message = _one_line(str(error.get("message", "")))
        return f"the server answered error {error.get('code')}: {message}".rstrip(": ")
    result = reply.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        content = result.get("content")
        first = content[0] if isinstance(content, list) and content else {}
        text = first.get("text", "") if isinstance(first, dict) else ""
        return f"the tool reported an error: {_one_line(str(text))}".rstrip(": ")
    return None


def _judge(step: Step, reply: JSONObject) -> StepResult:
    refused = _refusal(reply)
    expected = step.expect_error
    if expected is None:
        return StepResult(step, refused is None, refused or "")
    if refused is None:
        return StepResult(step, False, "expected an error, the server answered a result")
    if isinstance(expected, bool):
        return StepResult(step, True)
    code = reply.get("error", {}).get("code") if isinstance(reply.get("error"), dict) else None
    if code != expected:
        return StepResult(step, False, f"expected error {expected}; {refused}")
    return StepResult(step, True)


class _Runner:
    def __init__(self, client: McpClient, opening: Opening, answers: ScenarioAnswers) -> None:
        self.client = client
        self.opening = opening
        self.answers = answers

    async def send(self, method: str, params: Mapping[str, Any] | None) -> JSONObject:
        """One request, retried while a 2026-07-28 server says ``input_required``."""
        reply = await self.client.request(method, self.opening.params(params))
        for _ in range(_ROUNDS):
            result = reply.get("result")
            if not isinstance(result, dict) or result.get("resultType") != "input_required":
                return reply
            retry = dict(params or {})
            retry["inputResponses"] = self._responses(result.get("inputRequests"))
            if isinstance(result.get("requestState"), str):
                retry["requestState"] = result["requestState"]
            reply = await self.client.request(method, self.opening.params(retry))
        return {
            "error": {"code": -32000, "message": f"still input_required after {_ROUNDS} rounds"}
        }

    def _responses(self, requests: Any) -> JSONObject:
        out: JSONObject = {}
        for key, request in (requests or {}).items() if isinstance(requests, dict) else ():
            method = request.get("method") if isinstance(request, dict) else None
            answer = self.answers.result(str(method))
            out[key] = answer if answer is not None else {}
        return out

    async def step(self, step: Step) -> StepResult:
        if step.list_key is None:
            return _judge(step, await self.send(step.method, step.params))
        cursor: str | None = None
        for _ in range(_PAGES):
            reply = await self.send(step.method, {"cursor": cursor} if cursor else None)
            result = reply.get("result")
            if "error" in reply or not isinstance(result, dict):
                return _judge(step, reply)
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return _judge(step, reply)
        return StepResult(step, False, f"still paginating after {_PAGES} pages")


async def run_steps(
    client: McpClient,
    opening: Opening,
    steps: tuple[Step, ...],
    answers: ScenarioAnswers,
    step_seconds: float,
) -> list[StepResult]:
    """Run ``steps`` in order on an opened session; one result per step, each given
    ``step_seconds`` unless it names its own timeout."""
    import anyio

    runner = _Runner(client, opening, answers)
    results: list[StepResult] = []
    for position, step in enumerate(steps):
        limit = step.timeout or step_seconds
        outcome: StepResult | None = None
        try:
            with anyio.move_on_after(limit):
                outcome = await runner.step(step)
        except closed_errors():
            results.append(StepResult(step, False, "the server closed the connection"))
            results += [
                StepResult(s, False, "not run: the server had gone", False)
                for s in steps[position + 1 :]
            ]
            return results
        if outcome is None:
            outcome = StepResult(step, False, f"no answer within {limit:g}s")
        asked = answers.take()
        if asked:
            detail = f"{outcome.detail}; {asked}" if outcome.detail else asked
            outcome = attrs.evolve(outcome, detail=detail)
        results.append(outcome)
    return results
