"""Telling the person recording, in one line, that the server refused credentials.

An upstream's 401 or 403 reaches the recording proxy's ``Tap`` as an HTTP status. The
client handles it (a client running the authorization flow expects the first 401); the
person gets one line per kind of refusal naming the credential refused (the header names
given with ``--header``, or the authorization flow), never a value and never a stack of
HTTP errors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from cassette.core.redaction.headers import refusal
from cassette.runtime.sink import SinkTap
from cassette.store.gate import shown

__all__ = ["RefusalNotices"]


class RefusalNotices:
    """A ``SinkTap`` that also says, once per status, when the upstream refused credentials."""

    def __init__(
        self, tap: SinkTap, upstream: str, names: tuple[str, ...], say: Callable[[str], None]
    ) -> None:
        self._tap = tap
        self._where = shown(upstream)
        self._names = names
        self._say = say
        self._told: set[int] = set()

    def frame(self, direction: Literal["c2s", "s2c"], data: bytes, meta: Mapping[str, Any]) -> None:
        self._tap.frame(direction, data, meta)

    def http(self, method: str, stream: str, status: int, session: int | None) -> None:
        self._tap.http(method, stream, status, session)
        if status in (401, 403) and status not in self._told:
            self._told.add(status)
            self._say(refusal(status, self._where, self._names))

    def secret(self, value: str) -> None:
        self._tap.secret(value)
