"""What we say about a message, with what it quotes of the message kept apart.

Theory of operation
-------------------
A miss, a warning, the end-of-run account are sentences we write around pieces of a
message: a method, a tool's name, a path, a recorded and a received value. What a person
reads must pass the redaction gate, and redacting the whole sentence as free text reads
our own words as the message's: with an argument named ``token``, the sentence
``/token: recorded "abc", received (absent)`` looks like ``token: <value>``, and the word
*recorded* was redacted in its place, on stderr and in the error the client got.

So a sentence is built as a ``Said``: a ``str`` (it reads, prints and compares as the
text it is, so every caller that takes a string takes it), which also keeps its
``parts``: our words (plain ``str``), ``Quote``s of the message, and ``Prose`` (text
someone else wrote whole, say a custom matcher's message, whose words cannot be told
apart). ``told`` redacts the parts and never our words: a quoted value as the JSON value
it is, under the member name it stood under (``{"token": ...}``, so a name rule applies
and the whole value goes, never a truncated piece of it), a quoted name as text, prose
as text. Telling twice is harmless: a placeholder is never redacted again. A sentence
that is a plain ``str`` (nothing kept of its parts) is redacted whole, as before.

Composing keeps the parts: ``said(...)`` of ``Said`` pieces is one ``Said``; an f-string
of one is a plain ``str``, so code that builds what a person reads uses ``said``.

Sans-IO, and no attrs class: imported on the first miss, cheaply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from cassette.core.words.text import one_line, show_value

__all__ = [
    "NAME",
    "VALUE",
    "Prose",
    "Quote",
    "Said",
    "one_line",
    "prose",
    "said",
    "show_value",
    "tell",
]

#: what a ``Quote`` holds: a name (a method, a tool, a path) or a JSON value
NAME: Final = "name"
VALUE: Final = "value"
Redact = Callable[[Any], Any]
RedactText = Callable[[str], str]


class Quote:
    """A piece of a message a sentence quotes: a ``NAME`` (shown on one line) or a
    ``VALUE`` (shown as short JSON), with the member name it stood under (``key``)."""

    __slots__ = ("key", "kind", "value")

    def __init__(self, value: Any, kind: str = VALUE, key: str | None = None) -> None:
        self.value = value
        self.kind = kind
        self.key = key

    def shown(self) -> str:
        return one_line(self.value) if self.kind == NAME else show_value(self.value)

    def told(self, value: Redact, text: RedactText) -> Quote:
        """The quote redacted: a name as text, a value as the value it is."""
        from cassette.core.words.jsondiff import MISSING

        if self.kind == NAME:
            return Quote(text(str(self.value)), NAME)
        if self.value is MISSING:
            return self
        if self.key is None:
            return Quote(value(self.value), VALUE)
        return Quote(value({self.key: self.value})[self.key], VALUE, self.key)


class Prose:
    """Text someone else wrote whole: redacted as text."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


Part = str | Quote | Prose


class Said(str):
    """A sentence and its parts (see the module docstring)."""

    parts: tuple[Part, ...]

    def __new__(cls, parts: Iterable[Part]) -> Said:
        kept = tuple(parts)
        text = "".join(_shown(part) for part in kept)
        made = super().__new__(cls, text)
        made.parts = kept
        return made

    def told(self, value: Redact, text: RedactText) -> Said:
        """The sentence with its quotes and prose redacted, our words as they are."""
        return Said(_told(part, value, text) for part in self.parts)


def _shown(part: Part) -> str:
    if isinstance(part, Quote):
        return part.shown()
    return part.text if isinstance(part, Prose) else part


def _told(part: Part, value: Redact, text: RedactText) -> Part:
    if isinstance(part, Quote):
        return part.told(value, text)
    if isinstance(part, Prose):
        return Prose(text(part.text))
    return part


def said(*pieces: str | Quote | Prose) -> Said:
    """One ``Said`` of ``pieces``: our words (``str``), quotes, prose, and other ``Said``s,
    whose parts are kept."""
    parts: list[Part] = []
    for piece in pieces:
        if isinstance(piece, Said):
            parts.extend(piece.parts)
        else:
            parts.append(piece)
    return Said(parts)


def prose(text: str) -> Said:
    """``text`` as a ``Said``: itself if it is one, else prose (redacted whole)."""
    return text if isinstance(text, Said) else Said((Prose(text),))


def tell(text: str, value: Redact, whole: RedactText) -> str:
    """``text`` as a person may read it: a ``Said`` with its parts redacted (``value`` for
    quoted values, ``whole`` for names and prose), any other text redacted whole."""
    return text.told(value, whole) if isinstance(text, Said) else whole(text)
