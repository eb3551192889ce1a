"""The secrets a recording has met, found again in any text in time that does not grow
with how many there are.

Theory of operation
-------------------
Every secret a session meets is remembered in the forms it may be written in
(``forms``), each mapped back to the secret it writes. Finding them in a
text must stay cheap when there are thousands (one answer listing 1,000 presigned URLs,
a long session where every call carries a fresh token): one regular expression of all
known forms, rebuilt for each new secret, made a recording quadratic in their number.

So a text is searched in one of two ways, whichever is cheaper:

* with few forms (``_DIRECT``), each is looked for with ``str.find`` (C speed, a few
  passes over the text), anywhere in it;
* with many, the text is cut once into its runs of letters and digits and what lies
  between them (an ASCII text through a bytes table and ``str.split``, cheaper than
  ``re.split`` (the figure: docs/architecture.md, "Speed exceptions"), which cuts any other), and
  every piece is looked up in two tables at once
  (``map`` of a dict's ``__contains__``, ``itertools.compress``: the loop runs in C, not
  in Python). The first table is the forms themselves: most forms are one run of letters
  and digits (a token, its upper and lower case, its hex), found where a piece is the
  form. The second indexes every other form by an *anchor*, its longest run of letters
  and digits that sits between two other characters of the form (or, failing that, its
  longest run at either end): where a piece is an anchor, the form is checked where the
  anchor puts it (``str.startswith``). Python runs only for the pieces that are known:
  the cost is one split of the text, two lookups a piece and the forms that are in it,
  linear in the text, flat in the number of secrets. A text is split a megabyte at a
  time, so the pieces held at once stay bounded.

The price of the second way: a form glued to other letters or digits in the text
(``xyzSECRET``) is not one piece, so it is not seen. Finding it would take a search for
every known form at every position of the text (Aho-Corasick), which the standard
library has no C-speed tool for; done in Python over each run's substrings it would cost
a lookup per character, several times what the whole search costs now on a large answer.
Forms shorter than ``SHORT`` characters match only as whole words (``1234`` is not
redacted inside ``12345``). Memory is the forms themselves: no compiled expression, no
cache that grows with each secret.
"""

from __future__ import annotations

import html
import json
import re
from binascii import b2a_base64
from collections.abc import Iterable, Iterator
from itertools import accumulate, compress
from typing import Final

__all__ = ["SHORT", "KnownValues", "forms"]

SHORT: Final = 8  # known forms shorter than this match only as whole words
_DIRECT: Final = 32  # at most this many forms: each is simply searched for
_ANCHOR: Final = 4  # the shortest run worth indexing by (rare enough as a word)
_PIECES: Final = re.compile(r"([A-Za-z0-9]+)")  # split: what lies between, then a run
_CHUNK: Final = 1 << 20  # a text is split this many characters at a time
_CUT: Final = re.compile(r"[^A-Za-z0-9]")
_ESCAPE: Final = re.compile(r"\\[nrtbfu]")  # a JSON escape whose letter glues to a run
#: every ASCII character but a letter or digit, to a space: what cuts an ASCII text in runs
_TO_SPACE: Final = bytes(i if i < 128 and chr(i).isalnum() else 32 for i in range(256))


def _anchor(form: str) -> tuple[str, int] | None:
    """The run of letters and digits a text must hold wherever it holds ``form`` (a form
    that is not itself one run), and where in the form it starts: its first run of
    ``SHORT`` or more with other characters on both sides, else its longest such run,
    else its longest run (at an end). Any run with other characters on both sides is a
    whole piece of every text that holds the form."""
    stripped = form.rstrip("=")  # base64's padding: the run before it is the anchor
    if stripped != form and stripped.isascii() and stripped.encode("ascii").isalnum():
        return (stripped, 0) if len(stripped) >= _ANCHOR else None
    pieces = _PIECES.split(form)  # between, run, between, ..., between
    inner, inner_at, outer, outer_at = "", 0, "", 0
    pos = 0
    for i in range(1, len(pieces), 2):
        pos += len(pieces[i - 1])
        run = pieces[i]
        if pieces[i - 1] and pieces[i + 1]:  # not at an end: glued to nothing in a text
            if len(run) >= SHORT:  # rare enough as a word: any inner run is as good
                return run, pos
            if len(run) > len(inner):
                inner, inner_at = run, pos
        elif len(run) > len(outer):
            outer, outer_at = run, pos
        pos += len(run)
    if len(inner) >= _ANCHOR:
        return inner, inner_at
    return (outer, outer_at) if len(outer) >= _ANCHOR else None


class KnownValues:
    """Written forms of known secrets, each with the secret it writes (a dict underneath):
    the redactor numbers a secret's placeholder where it first appears, in any form."""

    def __init__(self) -> None:
        self.holders: dict[str, str] = {}  # every form -> the secret it writes
        self._anchored: dict[str, list[tuple[str, int]]] = {}  # run -> (form, run's offset)
        self._loose: list[str] = []  # forms without an anchor: always searched for

    def __len__(self) -> int:
        return len(self.holders)

    def __contains__(self, form: str) -> bool:
        return form in self.holders

    def get(self, form: str) -> str | None:
        return self.holders.get(form)

    def add_all(self, forms: Iterable[str], secret: str) -> None:
        """Remember every one of ``forms``, the written forms of ``secret`` (a form already
        known keeps the secret it was first given for)."""
        holders, anchored = self.holders, self._anchored
        for form in forms:
            if not form or form in holders:
                continue
            holders[form] = secret
            if form.isascii() and form.encode("ascii").isalnum():  # bytes: a table, in C
                continue  # one run: found as a piece of the text, in ``holders`` itself
            anchor = _anchor(form)
            if anchor is None:
                self._loose.append(form)
            else:
                anchored.setdefault(anchor[0], []).append((form, anchor[1]))

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where a known form occurs in ``text`` (overlaps possible; the caller merges).
        A list, built without generators: it runs on every string of a message."""
        if not self.holders:
            return []
        if len(self.holders) <= _DIRECT:
            return list(_found(text, self.holders))
        found = self._cut_spans(text)
        if "\\" in text:
            # JSON text in a string: an escape ("\n") glues its letter to the form after
            # it ("\nSECRET" is one run), so the text is cut again with each such escape
            # made two spaces (the same length: the spans stand as they are)
            unglued = _ESCAPE.sub("  ", text)
            if unglued != text:
                found += self._cut_spans(unglued)
        return found

    def _cut_spans(self, text: str) -> list[tuple[int, int]]:
        found: list[tuple[int, int]] = []
        start, size = 0, len(text)
        while start < size:
            end = size if size - start <= _CHUNK else _cut(text, start + _CHUNK)
            self._pieces(text, start, end, found)
            start = end
        if self._loose:
            found += _found(text, self._loose)
        return found

    def _pieces(self, text: str, begin: int, end: int, found: list[tuple[int, int]]) -> None:
        """Adds to ``found`` the known forms in ``text[begin:end]``, which starts and ends
        between runs."""
        chunk = text[begin:end] if begin or end < len(text) else text
        if chunk.isascii():
            self._runs(text, chunk, begin, found)
            return
        pieces = _PIECES.split(chunk)
        holders, anchored = self.holders, self._anchored
        whole = list(compress(range(len(pieces)), map(holders.__contains__, pieces)))
        inner = (
            list(compress(range(len(pieces)), map(anchored.__contains__, pieces)))
            if anchored
            else []
        )
        if not whole and not inner:
            return
        offsets = list(accumulate(map(len, pieces), initial=begin))
        for i in whole:
            start, size = offsets[i], len(pieces[i])
            # a run (odd index) is a whole word; what lies between runs is glued to them
            if i % 2 or size >= SHORT:
                found.append((start, start + size))
        for i in inner:
            _anchored_at(text, offsets[i], anchored[pieces[i]], found)

    def _runs(self, text: str, chunk: str, begin: int, found: list[tuple[int, int]]) -> None:
        """``_pieces`` for an ASCII ``chunk`` (at ``begin`` in ``text``): its runs are cut by
        ``translate`` and ``split``, several times cheaper than ``re.split``. What lies between
        runs is not looked up: a form made of none of their letters has no anchor, so it is
        one of the loose forms that ``spans`` searches for anyway."""
        # run i starts at len(runs[:i]) + i; a bytes table maps in C, a str's dict does not
        runs = chunk.encode("ascii").translate(_TO_SPACE).decode("ascii").split(" ")
        holders, anchored = self.holders, self._anchored
        whole = list(compress(range(len(runs)), map(holders.__contains__, runs)))
        inner = (
            list(compress(range(len(runs)), map(anchored.__contains__, runs))) if anchored else []
        )
        if not whole and not inner:
            return
        offsets = list(accumulate(map(len, runs), initial=begin))
        for i in whole:
            start = offsets[i] + i
            found.append((start, start + len(runs[i])))
        for i in inner:
            _anchored_at(text, offsets[i] + i, anchored[runs[i]], found)

    def found_in(self, text: str) -> bool:
        """Whether any known form occurs in ``text``."""
        return bool(self.spans(text))


# What changes a secret when it is escaped: JSON (and ``\/``), percent-encoding, HTML.
# Each escaping runs only on a secret it changes, since most secrets hold none of these.
_JSON_CHANGES: Final = re.compile(r'["\\/]|[^ -~]')
_QUOTE_CHANGES: Final = re.compile(r"[^A-Za-z0-9_.~-]")
_HTML_CHANGES: Final = re.compile(r"[&<>\"']")


def _percent(match: re.Match[str]) -> str:
    """One character percent-encoded (as ``urllib.parse.quote`` does: UTF-8, upper hex)."""
    return "".join(f"%{b:02X}" for b in match.group().encode("utf-8", "surrogatepass"))


def forms(secret: str) -> list[str]:
    """How a secret may be written in text when a server echoes it back: as is,
    JSON-escaped (with ``\\/`` too), percent- and form-encoded, HTML-escaped, and, for a
    value long enough not to occur by chance, in upper and lower case, in hex and in
    base64 (a server that encodes what it was sent)."""
    candidates = [secret]
    if not (secret.isascii() and secret.encode("ascii").isalnum()):  # else no escaping changes it
        if _JSON_CHANGES.search(secret):
            escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
            slashed = escaped.replace("/", "\\/")
            candidates += [
                escaped,
                slashed,
                json.dumps(slashed, ensure_ascii=False)[1:-1],  # and that inside JSON text
                json.dumps(secret)[1:-1],
            ]
        if _QUOTE_CHANGES.search(secret):
            quoted = _QUOTE_CHANGES.sub(_percent, secret)  # quote(secret, safe=""), in C
            candidates.append(quoted)
            if " " in secret:
                candidates.append(quoted.replace("%20", "+"))  # quote_plus
        if _HTML_CHANGES.search(secret):
            candidates.append(html.escape(secret))
    if len(secret) >= SHORT:
        raw = secret.encode("utf-8", "surrogatepass")
        b64 = b2a_base64(raw, newline=False).decode("ascii")
        hexed = raw.hex()
        candidates += [secret.upper(), secret.lower(), hexed, hexed.upper(), b64]
        if b64.endswith("="):
            candidates.append(b64.rstrip("="))
        if "+" in b64 or "/" in b64:
            candidates.append(b64.replace("+", "-").replace("/", "_"))
    return list(dict.fromkeys(candidates))  # an empty secret is never learnt


def _cut(text: str, at: int) -> int:
    """The first place at or after ``at`` that is not inside a run (or the text's end)."""
    if at >= len(text):
        return len(text)
    found = _CUT.search(text, at)
    return len(text) if found is None else found.start()


def _found(text: str, forms: Iterable[str]) -> Iterator[tuple[int, int]]:
    for form in forms:
        size = len(form)
        pos = text.find(form)
        while pos != -1:
            if size >= SHORT or _whole_word(text, pos, size):
                yield pos, pos + size
            pos = text.find(form, pos + size)


def _anchored_at(
    text: str, at: int, candidates: Iterable[tuple[str, int]], found: list[tuple[int, int]]
) -> None:
    """The forms anchored on the piece at ``at`` that ``text`` really holds there, as a
    whole word where they are short: the one check both ways of cutting a text share."""
    for form, offset in candidates:
        start, size = at - offset, len(form)
        if (
            start >= 0
            and text.startswith(form, start)
            and (size >= SHORT or _whole_word(text, start, size))
        ):
            found.append((start, start + size))


def _whole_word(text: str, pos: int, size: int) -> bool:
    before = text[pos - 1] if pos else " "
    after = text[pos + size] if pos + size < len(text) else " "
    return not (before.isascii() and before.isalnum()) and not (after.isascii() and after.isalnum())
