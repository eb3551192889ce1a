"""The plugin's own hook: a conftest decides how a test's requests are matched.

vcrpy users register a matcher once, in a conftest, and every test of that folder uses
it; ``pytest_mcp_cassette_matching`` is that place here. It is called once for each test
that uses the ``mcp_cassette`` fixture, after the marker, the ``mcp_cassette_config``
fixture and the project's settings are read, with a ``Matching`` holding what they
decided; an implementation changes it in place. A replay runs in another process (the
command ``server_command`` returns), so what can be changed is what that process is
told: the strategy, the params never matched on, and whether a used-up request is
answered again. What the hooks leave is checked as the marker's values are.
"""

from __future__ import annotations

import attrs
import pytest

__all__ = ["Matching", "pytest_mcp_cassette_matching"]


@attrs.define(kw_only=True)
class Matching:
    """How one test's requests are matched: changed in place by the hook.

    ``strategy``: ``strict``, ``default`` or ``loose`` (``None``: the cassette's own, else
    ``default``); ``ignore``: JSON Pointers into a request whose values never cause a miss
    (``/params/arguments/requestId``); ``allow_repeats``: a request whose recordings are
    all played gets its last answer again."""

    strategy: str | None
    ignore: list[str] = attrs.field(factory=list)
    allow_repeats: bool = False


@pytest.hookspec
def pytest_mcp_cassette_matching(item: pytest.Item, matching: Matching) -> None:
    """Change how ``item``'s requests are matched, in ``matching`` (a conftest's
    implementation applies to the tests under its folder). Every implementation is
    called, each seeing what the ones before it left, so add to ``matching.ignore``
    rather than replace it. cassette-mcp (docs/pytest.md)."""
