"""One rule for JSON-RPC ids used as keys.

An id may be a string or a number, and a JSON-RPC peer compares ids exactly: ``1`` and
``"1"`` are different requests (so are ``1`` and ``true``, which Python calls equal). Every
table keyed by id (pending requests, paused exchanges, timers, routing) goes through
``id_key`` so that the rule lives in one place.
"""

from __future__ import annotations

__all__ = ["IdKey", "id_key"]

IdKey = tuple[str, object]


def id_key(value: object) -> IdKey:
    """``value`` as a dict key that keeps ids of different JSON types apart."""
    return (type(value).__name__, value)
