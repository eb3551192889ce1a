"""The choice a person most likely meant: one "did you mean" for every value we refuse.

A mistyped value (a transport, a record mode, a strategy, an era, a marker's keyword) is
refused in the layer that knows its choices, far below the command line: the registry,
the record modes, the matching strategies. Each refuses it in one line that names the
closest *public* choice, so a typo costs one glance whichever door it came in by (an
option, an environment variable, a pytest marker). The choices passed in are the ones a
person may type: internal names (an in-process transport) are left out by the caller.

``difflib`` is imported only when a value is refused: a replay parses its options on
every start and never needs it.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["closest", "did_you_mean", "unknown_choice"]


def closest(word: object, candidates: Iterable[str]) -> str | None:
    """The candidate ``word`` most likely misspells, if one is close enough; a word that
    differs only in case, or in ``-`` against ``_``, is always close enough. Not a string
    (a number where a name belongs): nothing is."""
    import difflib

    if not isinstance(word, str):
        return None
    names = list(candidates)
    folded = _fold(word)
    for name in names:
        if _fold(name) == folded:
            return name
    found = difflib.get_close_matches(folded, [_fold(n) for n in names], n=1, cutoff=0.6)
    if not found:
        return None
    return next(name for name in names if _fold(name) == found[0])


def _fold(word: str) -> str:
    return word.strip().lower().replace("-", "_")


def did_you_mean(word: object, candidates: Iterable[str]) -> str:
    """`` (did you mean X?)`` for the closest candidate, or nothing."""
    guess = closest(word, candidates)
    return f" (did you mean {guess}?)" if guess is not None else ""


def unknown_choice(
    what: str,
    word: object,
    choices: Iterable[str],
    *,
    source: str | None = None,
    listed: str | None = None,
) -> str:
    """The one line refusing ``word`` as a ``what``: where it came from (``source``: an
    option, a variable), the choice most likely meant, and the choices (``listed``, when
    they read better written out than joined: synonyms, aliases)."""
    names = list(choices)
    where = f"from {source}; " if source else ""
    guess = closest(word, names)
    hint = f"did you mean {guess}?" if guess is not None else ""
    detail = f" ({where}{hint})" if hint else (f" (from {source})" if source else "")
    return f"unknown {what} {word!r}{detail}; choose one of: {listed or ', '.join(names)}"
