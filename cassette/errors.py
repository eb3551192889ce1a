"""One exception tree for everything cassette-mcp raises on purpose.

    CassetteError
    ├── CassetteFormatError (ValueError)      a cassette line is malformed: names file:line
    │   └── CassetteVersionError              written by a newer cassette-mcp: upgrade
    ├── CassetteNotFoundError (FileNotFoundError)
    ├── CassetteExistsError (FileExistsError) record refuses to overwrite a non-empty cassette
    ├── EraError (ValueError)                 the era was already written and cannot change
    ├── UsageError (ValueError)               a bad option value (unknown strategy, ...)
    ├── ManifestError (ValueError)            a mock manifest cannot be read or served
    ├── ReplayMiss (LookupError)              a live request has no recording to answer it
    │   ├── NotRecordedError                  nothing like it was recorded
    │   └── AlreadyPlayedError                it was recorded, and every recording is used up
    ├── TransportError (OSError)              a transport failed to reach or serve a peer
    │   └── TransportClosedError              the peer went away
    └── PluginError (LookupError)
        ├── UnknownTransportError             no plugin registered under that name
        ├── PluginLoadError (ImportError)     the plugin is there but could not be imported
        └── DuplicateTransportError           two installed plugins claim one name

Each subclass also derives from the stdlib type a caller would naturally catch, so
``except FileNotFoundError`` keeps working for code that has never heard of us. Foreign
exceptions are converted where they cross into our code, with ``raise ... from exc``, so
the cause is never lost.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "AlreadyPlayedError",
    "CassetteError",
    "CassetteExistsError",
    "CassetteFormatError",
    "CassetteNotFoundError",
    "CassetteVersionError",
    "DuplicateTransportError",
    "EraError",
    "ManifestError",
    "NotRecordedError",
    "PluginError",
    "PluginLoadError",
    "ReplayMiss",
    "TransportClosedError",
    "TransportError",
    "UnknownTransportError",
    "UsageError",
]


class CassetteError(Exception):
    """Base of every error cassette-mcp raises deliberately."""


class CassetteFormatError(CassetteError, ValueError):
    """A cassette cannot be read; the message always starts with ``file:line:``."""

    def __init__(self, source: str | Path, line: int, reason: str) -> None:
        self.source = str(source)
        self.line = line
        self.reason = reason
        super().__init__(f"{self.source}:{line}: {reason}")


class CassetteVersionError(CassetteFormatError):
    """The cassette was written in a newer format than this reader knows."""


class CassetteNotFoundError(CassetteError, FileNotFoundError):
    """The cassette file does not exist."""


class CassetteExistsError(CassetteError, FileExistsError):
    """Recording would overwrite a cassette that already holds a session."""


class EraError(CassetteError, ValueError):
    """Someone tried to change the era after the header reached the file."""


class UsageError(CassetteError, ValueError):
    """An option has a value we do not accept; the message lists the valid ones."""


class ManifestError(CassetteError, ValueError):
    """A mock manifest cannot be read (the message names ``file:line`` where it can) or has
    errors that keep it from being served."""


class ReplayMiss(CassetteError, LookupError):
    """A live request could not be answered from the cassette.

    ``report`` is the matcher's ``MissReport`` (closest recording, differing paths); it is
    typed loosely here because this module sits below the one that defines it.
    """

    def __init__(self, message: str, report: object | None = None) -> None:
        super().__init__(message)
        self.report = report


class NotRecordedError(ReplayMiss):
    """No recording has this request's fingerprint."""


class AlreadyPlayedError(ReplayMiss):
    """The request was recorded, but every recording of it has been played already."""


class TransportError(CassetteError, OSError):
    """A transport could not reach, start or serve its peer."""


class TransportClosedError(TransportError):
    """The other side closed the connection."""


class PluginError(CassetteError, LookupError):
    """A transport plugin could not be found or used."""


class UnknownTransportError(PluginError):
    """No installed plugin is registered under the requested name."""


class PluginLoadError(PluginError, ImportError):
    """The plugin is registered but importing it failed (usually a missing extra)."""


class DuplicateTransportError(PluginError):
    """Two installed distributions register a transport under the same name."""
