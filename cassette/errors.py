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
    ├── FaultExit                             a fault plan made the server exit (its .code)
    ├── TransportError (OSError)              a transport failed to reach or serve a peer
    │   └── TransportClosedError              the peer went away
    └── PluginError (LookupError)
        ├── UnknownTransportError             no plugin registered under that name
        ├── PluginLoadError (ImportError)     the plugin is there but could not be imported
        └── DuplicateTransportError           two installed plugins claim one name

Each subclass also derives from the stdlib type a caller would naturally catch, so
``except FileNotFoundError`` keeps working for code that has never heard of us. Foreign
exceptions are converted where they cross into our code, with ``raise ... from exc``, so
the cause is never lost: ``map_exceptions`` is that boundary, written once. Task groups
wrap what fails in them in exception groups; ``sole_exception`` takes a lone error out
again, for a message a person can read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType

__all__ = [
    "AlreadyPlayedError",
    "CassetteError",
    "CassetteExistsError",
    "CassetteFormatError",
    "CassetteNotFoundError",
    "CassetteVersionError",
    "DuplicateTransportError",
    "EraError",
    "FaultExit",
    "ManifestError",
    "NotRecordedError",
    "NotWritableError",
    "PluginError",
    "PluginLoadError",
    "ReplayMiss",
    "ScenarioError",
    "TransportClosedError",
    "TransportError",
    "UnknownTransportError",
    "UsageError",
    "anticipated_exception",
    "map_exceptions",
    "sole_exception",
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


class NotWritableError(CassetteError, PermissionError):
    """A cassette must be written (or its lock file made) where the system refuses writes:
    a read-only folder, checkout or file system. A replay that writes nothing never
    raises it."""


class EraError(CassetteError, ValueError):
    """Someone tried to change the era after the header reached the file."""


class UsageError(CassetteError, ValueError):
    """An option has a value we do not accept; the message lists the valid ones."""


class ManifestError(CassetteError, ValueError):
    """A mock manifest cannot be read (the message names ``file:line`` where it can) or has
    errors that keep it from being served."""


class ScenarioError(CassetteError, ValueError):
    """A scenarios file cannot be read or is wrong; the message names ``file:line``."""


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


class FaultExit(CassetteError):
    """A fault plan made the served server exit with ``code`` (an ``exit`` fault): the
    serving stopped, as the server would have; the command line exits with ``code``."""

    def __init__(self, code: int) -> None:
        super().__init__(f"the fault plan made the server exit with code {code}")
        self.code = code


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


class map_exceptions:
    """Convert a foreign exception to ours where it crosses into our code.

    ``mapping`` takes each foreign type (say ``httpx.TransportError``) to a function that
    makes our exception from it (``lambda exc: TransportClosedError(f"{url}: {exc}")``);
    the first matching entry wins, the original is kept as ``__cause__``, and anything
    not listed passes through untouched. The idea is httpcore's ``map_exceptions``.

    One value can guard many calls (``with self._errors:`` in a stream's ``send``): it
    holds no state between them, so a transport builds it once, not once per frame.
    """

    __slots__ = ("_mapping",)

    def __init__(
        self, mapping: Mapping[type[BaseException], Callable[[BaseException], CassetteError]]
    ) -> None:
        self._mapping = tuple(mapping.items())

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc is None or not isinstance(exc, Exception):
            return  # nothing raised, or a cancellation / exit: never converted
        for foreign, make in self._mapping:
            if isinstance(exc, foreign):
                raise make(exc) from exc


def sole_exception(exc: BaseException) -> BaseException:
    """The one error inside nested exception groups (else ``exc`` itself): what a task
    group raised, as a person needs to see it. Errors that say the same thing count as
    one: tasks that overlap one failure (two writes to a full disk) each raise it, and
    that is still one failure with one documented exit code."""
    while isinstance(exc, BaseExceptionGroup):
        leaves = _leaves(exc)
        first = leaves[0] if leaves else exc
        if not all(type(leaf) is type(first) and str(leaf) == str(first) for leaf in leaves):
            return exc
        exc = first
    return exc


def anticipated_exception(exc: BaseException) -> BaseException:
    """``sole_exception``, and for a group of different errors that are all ours (a full
    disk on one task, a closed transport on another), the first of them: every one has a
    documented exit code, so the group is no bug, and the first is what started it."""
    exc = sole_exception(exc)
    if isinstance(exc, BaseExceptionGroup):
        leaves = _leaves(exc)
        if leaves and all(isinstance(leaf, CassetteError) for leaf in leaves):
            return leaves[0]
    return exc


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """Every error in ``group`` that is not itself a group, nested groups flattened."""
    found: list[BaseException] = []
    for inner in group.exceptions:
        found += _leaves(inner) if isinstance(inner, BaseExceptionGroup) else [inner]
    return found
