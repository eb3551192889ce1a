"""Deprecated: ``cassette.storage`` moved to ``cassette.store.storage`` (this path goes in 0.3)."""

from cassette._moved import moved

__getattr__ = moved(__name__, "cassette.store.storage")
