"""Deprecated: ``cassette.codec`` moved to ``cassette.core.codec`` (this path goes in 0.3)."""

from cassette._moved import moved

__getattr__ = moved(__name__, "cassette.core.codec")
