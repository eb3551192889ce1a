"""The secrets a recording has met, found again in any text in time that does not grow
with how many there are.

Theory of operation
-------------------
Every secret a session meets is remembered in the forms it may be written in
(``cassette.core.redaction._forms``), each mapped to its placeholder. Finding them in a
text must stay cheap when there are thousands (one answer listing 1,000 presigned URLs,
a long session where every call carries a fresh token): one regular expression of all
known forms, rebuilt for each new secret, made a recording quadratic in their number.

So a text is searched in one of two ways, whichever is cheaper:

* with few forms (``_DIRECT``), each is looked for with ``str.find`` (C speed, a few
  passes over the text), anywhere in it;
* with many, each form is indexed by an *anchor*, its longest run of letters and digits
  that sits between two other characters of the form (or the whole form, when it is one
  run; failing that, its longest run at either end). The text's runs are collected once
  (``re.findall``, a set) and each looked up among the anchors (never the other way
  round: the anchors are many, a text's runs few). When few forms can be in the text
  they are looked for with ``str.find``; when many (one answer holding a thousand
  secrets), the text's runs are walked once and each anchored form checked where its
  anchor stands. The cost is a pass or two over the text and the
  forms that are in it: linear in the text, flat in the number of secrets. The price: a
  form whose anchor is glued to other letters or digits in the text (``xyzSECRET``) is
  not seen this way.

Forms shorter than ``SHORT`` characters match only as whole words (``1234`` is not
redacted inside ``12345``). Memory is the forms themselves: no compiled expression, no
cache that grows with each secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Final

__all__ = ["SHORT", "KnownValues"]

SHORT: Final = 8  # known forms shorter than this match only as whole words
_DIRECT: Final = 32  # at most this many forms: each is simply searched for
_ANCHOR: Final = 4  # the shortest run worth indexing by (rare enough as a word)
_RUNS: Final = re.compile(r"[A-Za-z0-9]+")


def _anchor(form: str) -> tuple[str, int] | None:
    """The run of letters and digits a text must hold wherever it holds ``form``, and
    where in the form it starts."""
    if form.isascii() and form.isalnum():  # most forms: one run, the whole form
        return (form, 0) if len(form) >= _ANCHOR else None
    runs = [(m.group(0), m.start()) for m in _RUNS.finditer(form)]
    if not runs:
        return None
    inner = [(run, at) for run, at in runs if at > 0 and at + len(run) < len(form)]
    best = max(inner, key=lambda r: len(r[0]), default=("", 0))
    if len(best[0]) < _ANCHOR:  # at an end of the form instead (it may be glued in a text)
        best = max(runs, key=lambda r: len(r[0]))
    return best if len(best[0]) >= _ANCHOR else None


class KnownValues:
    """Written forms of known secrets, each with its placeholder (a dict underneath)."""

    def __init__(self) -> None:
        self.holders: dict[str, str] = {}
        self._anchored: dict[str, list[tuple[str, int]]] = {}  # run -> (form, run's offset)
        self._loose: list[str] = []  # forms without an anchor: always searched for

    def __len__(self) -> int:
        return len(self.holders)

    def __contains__(self, form: str) -> bool:
        return form in self.holders

    def get(self, form: str) -> str | None:
        return self.holders.get(form)

    def add(self, form: str, holder: str) -> None:
        """Remember ``form`` (the first placeholder given for it stays)."""
        if not form or form in self.holders:
            return
        self.holders[form] = holder
        anchor = _anchor(form)
        if anchor is None:
            self._loose.append(form)
        else:
            self._anchored.setdefault(anchor[0], []).append((form, anchor[1]))

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Where a known form occurs in ``text`` (overlaps possible; the caller merges)."""
        if not self.holders:
            return
        if len(self.holders) <= _DIRECT:
            yield from _found(text, self.holders)
            return
        anchored = self._anchored  # looked up run by run: the text's runs are the fewer
        present = [run for run in set(_RUNS.findall(text)) if run in anchored]
        if len(present) <= _DIRECT:
            forms = [form for run in present for form, _ in self._anchored[run]]
            yield from _found(text, forms)
        else:  # many known values in this one text: follow its runs, once
            for match in _RUNS.finditer(text):
                for form, offset in self._anchored.get(match.group(0), ()):
                    start = match.start() - offset
                    size = len(form)
                    if (
                        start >= 0
                        and text.startswith(form, start)
                        and (size >= SHORT or _whole_word(text, start, size))
                    ):
                        yield start, start + size
        yield from _found(text, self._loose)

    def found_in(self, text: str) -> bool:
        """Whether any known form occurs in ``text``."""
        return next(self.spans(text), None) is not None


def _found(text: str, forms: Iterable[str]) -> Iterator[tuple[int, int]]:
    for form in forms:
        size = len(form)
        pos = text.find(form)
        while pos != -1:
            if size >= SHORT or _whole_word(text, pos, size):
                yield pos, pos + size
            pos = text.find(form, pos + size)


def _whole_word(text: str, pos: int, size: int) -> bool:
    before = text[pos - 1] if pos else " "
    after = text[pos + size] if pos + size < len(text) else " "
    return not (before.isascii() and before.isalnum()) and not (after.isascii() and after.isalnum())
