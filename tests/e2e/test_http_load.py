"""Concurrent replay sessions over HTTP: zero errors and no answer leaking between them.
(The throughput figure is measured by benchmarks/http_load.py, never asserted here.)"""

from __future__ import annotations

import pytest

from benchmarks.http_load import run

pytestmark = pytest.mark.e2e


def test_concurrent_sessions_get_their_own_answers_and_no_errors() -> None:
    result = run(sessions=20, requests=25)
    assert result["requests"] == 500
    assert result["error_count"] == 0, result["errors"]
