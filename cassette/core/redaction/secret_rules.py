"""What a secret looks like: names, shapes and free-text forms, found fast in any text.

Theory of operation
-------------------
Every rule here is *anchored on a literal trigger*: a token prefix (``ghp_``, ``glpat-``,
``AKIA``), a scheme (``://``), a header word (``Bearer``) or a secret-sounding name
(``password``, ``api_key``) in ``key=value`` or ``"key": "value"`` form. Finding a secret
is two steps: find where a trigger occurs, then run that rule's small regular expression
*at* that position (``Pattern.match(text, pos)``). A regular expression is never run
across a whole text, which matters because the text may be a 38 MB tool result: a search
for literals is a ``str.find`` (C speed), and only the few places where a trigger occurs
pay for a match.

Short texts (almost all of them) are scouted with one compiled alternation of the
triggers instead, which costs less than many ``find`` calls on a short string.

Nothing is compiled on import. The table holds each rule's expression as text, and it,
the scouts and the trigger index are built on first use (``_rules``, ``_compiled`` and
the other cached builders below): a replay imports this module to redact live requests,
and most sessions never send one that any cheap check lets through to a rule, so
compiling some 80 expressions up front was a third of what the import cost.

The formats are public facts (documented prefixes and lengths, as gitleaks and
detect-secrets list them); the table is ours. Rules say *where* the secret sits in their
match (the ``secret`` group), so ``password=hunter2`` keeps ``password=`` and loses only
``hunter2``.

Everything here is pure: text in, spans out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from typing import Any, Final

from cassette.core.redaction.secret_names import (
    _KEY_QUALIFIERS,
    SECRET_WORDS,
    SHORT_NAMES,
    _compiled,
    is_protocol_key,
    is_secret_key,
    is_secret_option,
    secret_header_values,
)
from cassette.core.redaction.secret_table import _KEYWORDS, SEARCH, Span, _Rule, _rules

__all__ = [
    "SECRET_WORDS",
    "Span",
    "find_spans",
    "is_protocol_key",
    "is_secret_key",
    "is_secret_option",
    "json_may_hold_secret",
    "secret_header_values",
]


def _trie(words: Iterable[str]) -> str:
    """One expression for many literals, factored by prefix (``a(?:kia|iza|...)|b...``):
    the engine tries a handful of branches at a position, not every literal."""
    tree: dict[str, Any] = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        branches = [re.escape(c) + emit(node[c]) for c in sorted(k for k in node if k)]
        if not branches:
            return ""
        if "" in node:  # a word ends here: what follows is optional, as a whole
            return "(?:" + "|".join(branches) + ")?"
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return emit(tree)


# One scout for short texts: where any trigger starts, in the lower-cased text (a false
# hit costs one match). The search restarts one character after each hit, so triggers that
# overlap ("-----END ...-----" right before "-----BEGIN") are all seen; the longest at a
# position stands for the shorter ones too (see ``_at_trigger``).
@cache
def _scout() -> re.Pattern[str]:
    """Where any trigger starts, in lower-cased text (built on first use)."""
    triggers = {t.lower() for r in _rules() for t in r.triggers}
    return re.compile(_trie(sorted(triggers)))


# The triggers of the rules that are not token shapes (their words and literals).
_WORD_RULES: Final = ("url-credentials", "argument", "private-key")


def _word_triggers() -> set[str]:
    return {
        t.lower()
        for r in _rules()
        if (r.folded or r.alone or r.name in _WORD_RULES) and not r.in_run
        for t in r.triggers
    }


@cache
def _word_scout() -> re.Pattern[str]:
    """Where a trigger of a rule with words starts (built on first use)."""
    return re.compile(_trie(sorted(_word_triggers())))


@cache
def _at_trigger() -> dict[str, list[_Rule]]:
    """The rules to try where a trigger starts: its own and those of every shorter trigger
    that begins it ("authorization" also starts "auth"; both name the same rule, others
    may not). Built on first use."""
    by_trigger: dict[str, list[_Rule]] = {}
    for rule in _rules():
        for trigger in rule.triggers:
            by_trigger.setdefault(trigger.lower(), []).append(rule)
    return {
        trigger: [r for t in by_trigger if trigger.startswith(t) for r in by_trigger[t]]
        for trigger in by_trigger
    }


#: What ``_spans_at`` needs of a rule, looked up once: its name, its expression, the same
#: expression without ``re.IGNORECASE`` for a rule found case-insensitively (``None`` for
#: the others), the number of its ``s`` group, whether its trigger must start a word, and
#: its last check, and how far before its trigger the secret starts (``_Rule.back``).
_Try = tuple[
    str, re.Pattern[str], re.Pattern[str] | None, int, bool, Callable[[str], bool] | None, int
]


def _try(rule: _Rule) -> _Try:
    pattern = rule.pattern
    # A folded rule is written in lower case (its literals; its classes hold both cases),
    # so on an ASCII text it matches the lower-cased text, case-sensitively, exactly where
    # it matches the text case-insensitively: the same spans, without the per-character
    # case folding of an ignore-case match (a third of its cost).
    lower = (
        _compiled(rule.source, rule.flags & ~re.IGNORECASE)
        if rule.folded and rule.flags & re.IGNORECASE
        else None
    )
    group = pattern.groupindex["s"]
    return (rule.name, pattern, lower, group, rule.word_start, rule.check, rule.back)


@cache
def _at_trigger_compiled() -> dict[str, tuple[_Try, ...]]:
    """``_at_trigger`` with what each rule needs beside it (``_Try``), and each rule name
    once (the first rule of that name wins): ``_spans_at`` runs once for every trigger
    found, thousands of times in a text full of secrets."""
    table: dict[str, tuple[_Try, ...]] = {}
    for trigger, rules in _at_trigger().items():
        first: dict[str, _Rule] = {}
        for rule in rules:
            first.setdefault(rule.name, rule)
        table[trigger] = tuple(_try(r) for r in first.values())
    return table


#: Above this many characters a text is scanned trigger by trigger with ``str.find``.
LONG_TEXT: Final = 4096


def _may_hold_secret(text: str) -> bool:
    """For a text with no run of 16 token characters (so no token shape): False when no
    other rule can match either, as each needs "=", ":", "--", "%3", an XML end tag or a
    Bearer, Basic or password word. Most
    strings of a message (names, short texts) are ruled out by these checks alone."""
    if "=" in text or ":" in text or "--" in text or "%3" in text or "</" in text:
        return True
    return _probed(text.lower(), _probes())


@cache
def _probes() -> Probes:
    """What a text with none of "=", ":", "--" must hold for a rule to match: a Bearer,
    Basic or password word, or the trigger of a rule whose match may hold no run."""
    alone = {t.lower() for r in _rules() if r.alone and not r.in_run for t in r.triggers}
    return _gated(["bearer", "basic", "pass", *sorted(alone)])


#: Probes (substrings a text must hold for a rule to match) and, apart, those looked for
#: only in a text that holds a rare character each of them holds.
Probes = tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]
#: Characters rare in messages: a single-character ``in`` is a ``memchr``, about a tenth
#: of what looking for a word costs (some 900 instructions in a 115-character request).
_GATES: Final = "_-'%="


def _gated(words: list[str]) -> Probes:
    """``words`` as probes: each word not holding a shorter one already probed, kept
    plain or under its gate (a rule's ``gate``, else the first rare character it holds,
    or a quoted member name's letters)."""
    gates = {t.lower(): r.gate for r in _rules() if r.gate for t in r.triggers}
    skipped = {t.lower() for r in _rules() if not r.probed for t in r.triggers}
    plain: list[str] = []
    gated: dict[str, list[str]] = {}
    for word in sorted(words, key=lambda w: (len(w), w)):
        if word in skipped or any(p in word for p in plain):
            continue
        gate = gates.get(word) or next((c for c in _GATES if c in word), "")
        if word.endswith('"'):  # a member name ('pat"'): a word ending in a character
            gate = word[:-1]  # that is everywhere is slow to look for; its letters first
        if gate and any(p in word for p in gated.get(gate, ())):
            continue
        (gated.setdefault(gate, []) if gate else plain).append(word)
    return tuple(plain), tuple((c, tuple(ps)) for c, ps in gated.items())


def _probed(folded: str, probes: Probes) -> bool:
    """Whether ``folded`` holds one of ``probes`` (a gated one only behind its gate)."""
    plain, gated = probes
    for probe in plain:  # a loop of ``in``: cheaper than ``map`` of ``__contains__``
        if probe in folded:
            return True
    for gate, group in gated:
        if gate in folded:
            for probe in group:
                if probe in folded:
                    return True
    return False


# What a JSON message needs to hold for any rule to fire, seen on its raw text: a trigger
# of a rule with words, or a secret-sounding member name (``"apiKey":``, ``"pwd":``).
def _json_words() -> set[str]:
    return (
        _word_triggers()
        | SECRET_WORDS
        | {name + '"' for name in SHORT_NAMES}  # as a member name only ("pat": ...)
        | {q + sep + "key" for q in _KEY_QUALIFIERS for sep in ("", "_", "-", ".", " ")}
    )


@cache
def _json_scout() -> re.Pattern[str]:
    """The words a JSON message must hold for a rule to fire (built on first use)."""
    return re.compile(_trie(sorted(_json_words())))


@cache
def _json_probes() -> Probes:
    """Substrings one of which each of the scout's words holds (``key`` for every
    ``apiKey``-like name, then the shortest words), those with a rare character behind
    it (``_gated``). A text that holds none of them cannot match the scout. Why: ``in``
    skips through a text in C, while the scout's expression is tried at each letter that
    can begin a word: searching a clean request cost 22,600 instructions, probing it
    costs 11,400. Words with "--" or a backslash need no probe: a raw text holding
    either is always walked."""
    words = [w for w in _json_words() if "--" not in w and "\\" not in w]
    return _gated(["key", *words])


_JSON_SCOUT_LIMIT: Final = 65536


def json_may_hold_secret(raw: str) -> bool:
    """False when a JSON text (a message as it was framed) certainly holds nothing any rule
    redacts, so its decoded value need not be walked: the common case, found with a
    few C-speed checks. Escapes (``\\u0070``) could hide a word, so a text with any
    backslash, or a long one, is always walked."""
    if len(raw) > _JSON_SCOUT_LIMIT or "\\" in raw or "--" in raw:
        return True
    # a run of token characters, found on bytes: a 256-byte table maps them in C, where a
    # str's translate looks each new character up in a dict
    if len(raw) >= _RUN and _RUN_BYTES in _byte_mask(raw):
        return True
    folded = raw.lower()
    if len(folded) != len(raw):
        return True
    if _probed(folded, _json_probes()):
        return _json_scout().search(folded) is not None
    return False


def _hits_short(
    text: str, scout: re.Pattern[str] | None = None, folded: str | None = None
) -> list[tuple[int, str]]:
    """Where a trigger starts in ``text``, and which (the longest at that position);
    ``folded``, the text lower-cased, when the caller has it."""
    folded = text.lower() if folded is None else folded
    scout = scout or _scout()
    if len(folded) == len(text):
        hay = folded
    else:
        scout, hay = _compiled(scout.pattern, re.IGNORECASE), text
    hits: list[tuple[int, str]] = []
    search = scout.search  # a search restarted one character on finds overlapping ones
    match = search(hay)
    while match is not None:
        start = match.start()
        hits.append((start, match.group(0).lower()))
        match = search(hay, start + 1)
    return hits


# Long texts. A regular expression tried at every position of 38 MB costs seconds, and so
# does Python work at every URL or "=" in it; what is cheap is a handful of passes that
# the regular expression engine makes in C. So:
# * token shapes all have a long run of token characters: the text is mapped to a mask
#   (``str.translate``), runs of 16 or more are found with one ``find`` of 16 marks, and
#   only the text around each run is scouted like a short text;
# * a rule with one literal trigger (``://``, ``--``, ``-----BEGIN``, ``bearer``,
#   ``basic``) is searched with its own expression, which starts with that literal: the
#   engine skips to each occurrence in C and fails there in C, so a URL without
#   credentials costs Python nothing. Each such search is a pass over the whole text, and
#   the engine skips to a leading literal as fast as ``str.find`` would (finding the
#   literal first and searching from there is a second pass, not a saving); an expression
#   led by an alternation, though, is tried at every character, so none is (the command
#   words of ``secret_table`` are a rule each);
# * ``key=value`` forms are found on the reversed, lower-cased text by one expression
#   whose first character is ``=`` or ``:``, so the engine skips everything else in C.
_RUN: Final = 16
_TOKEN_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
_MASK: Final = {i: (97 if chr(i) in _TOKEN_CHARS else 32) for i in range(128)}
_RUN_MARK: Final = "a" * _RUN
#: ``_MASK`` for UTF-8 bytes: a byte of a non-ASCII character is not a token character
_BYTE_MASK: Final = bytes(97 if chr(i) in _TOKEN_CHARS else 32 for i in range(256))
_RUN_BYTES: Final = b"a" * _RUN


def _byte_mask(text: str) -> bytes:
    """``text`` through ``_BYTE_MASK`` (a run of 16 token characters is a run of 16 ``a``)."""
    return text.encode("utf-8", "surrogatepass").translate(_BYTE_MASK)


_WINDOW_BEFORE: Final = 32  # the longest prefix that may sit before a run ("AGE-SECRET-KEY-1")
_WINDOW_AFTER: Final = 4096  # a run longer than this is data (base64); its start is scouted


@cache
def _single() -> tuple[tuple[_Rule, re.Pattern[str]], ...]:
    """The rules searched with their own expression (a folded rule's on folded text)."""
    return tuple(
        (rule, _compiled(rule.source) if rule.folded else rule.pattern)
        for rule in _rules()
        if rule.alone or rule.name in _SEARCHED
    )


#: Rules with one literal trigger searched on their own in a long text (see above).
_SEARCHED: Final = (
    "url-credentials",
    "argument",
    "private-key",
    "bearer",
    "basic-auth",
    "authorization",
)


@cache
def _rev_assign() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """``key=value`` forms, found on the reversed text from their ``=`` and from their
    ``:``: two expressions, each starting with one literal, which the engine skips to in a
    tight loop, where a leading ``[=:]`` set is tested character by character (the figure
    is in docs/architecture.md's speed exceptions). Each comes with a character its lead
    holds: a text without it is not searched (a one-character ``in`` is a ``memchr``)."""
    rest = (
        r"[ \t]*[\"']?\\?(?:(?:yek|di|eulav|gnirts|nekot)[-_]?)?("
        + _trie(k[::-1] for k in _KEYWORDS)  # a trie: one branch per character at an anchor
        + ")"
    )
    # and percent-encoded inside another URL ("token%3D..."), reversed: "d3%"
    leads = ("=", ":", "d3%", "a3%", ">")  # ">": an XML element, "<password>VALUE</"
    return tuple((lead[-1], re.compile(lead + rest)) for lead in leads)


def _spans_long(text: str) -> list[Span] | None:
    """``find_spans`` for a long text (see above); ``None`` when no shortcut applies."""
    folded = text.lower()
    if len(folded) != len(text):  # a rare character lower-cases to two: no shortcuts
        return None
    hits: list[tuple[int, str]] = []
    for start, stop in _windows(text.translate(_MASK)):
        # the lower-cased text's slice: lower-casing the slice gives the same triggers
        window = folded[start:stop]
        hits += [(start + at, t) for at, t in _hits_short(text[start:stop], None, window)]
    reverse = folded[::-1]
    size = len(text)
    for char, assign in _rev_assign():
        if char in text:
            hits += [(size - m.end(1), m.group(1)[::-1]) for m in assign.finditer(reverse)]
    found = _spans_at(text, hits, folded if text.isascii() else None)
    no_at = "@" not in text  # URL credentials need one: a text without is spared a search
    for rule, pattern in _single():
        if no_at and rule.name == "url-credentials":
            continue
        hay = folded if rule.folded else text
        match = pattern.search(hay)
        while match is not None:
            span = _accept(rule, text, match.start(), match.span("s"))
            if span is not None:
                found.append(span)
            match = pattern.search(hay, match.start() + 1)
    return found


def _windows(mask: str) -> Iterator[tuple[int, int]]:
    """The stretches of a long text to scout for token shapes: around each run of 16 token
    characters (``mask``: the text through ``_MASK``), from ``_WINDOW_BEFORE`` before it to
    its end (at most ``_WINDOW_AFTER`` on). Stretches that touch are scouted as one: a
    text dense with tokens (a thousand presigned URLs) is scouted in a few calls, not one
    per token, and no trigger is found twice."""
    size = len(mask)
    pos = mask.find(_RUN_MARK)
    begin = stop = -1
    while pos != -1:
        end = mask.find(" ", pos)
        end = size if end == -1 else end
        start = max(0, pos - _WINDOW_BEFORE)
        if start > stop:  # apart from the stretch so far: that one is done
            if stop > begin:
                yield begin, stop
            begin = start
        stop = max(stop, min(end, pos + _WINDOW_AFTER))
        pos = mask.find(_RUN_MARK, end)
    if stop > begin:
        yield begin, stop


def _accept(rule: _Rule, text: str, pos: int, where: tuple[int, int]) -> Span | None:
    start, end = where
    if end <= start or (rule.word_start and not _word_start(text, pos)):
        return None
    if rule.check is not None and not rule.check(text[start:end]):
        return None
    return Span(start - rule.back, end, rule.name)


def _word_start(text: str, pos: int) -> bool:
    """A name trigger starts a word, or a new word of a camelCase or SNAKE name: ``bypass``
    and ``spin`` are not ``pass`` and ``pin``, ``dbPassword`` and ``DB_PASS`` are."""
    if pos == 0:
        return True
    before = text[pos - 1]
    if pos >= 3 and text[pos - 3] == "%":  # after a percent-encoded "?" or "&" ("%3Ftoken")
        return True
    if pos >= 2 and text[pos - 2] == "\\" and before in "ntr":  # after "\n" in JSON text
        return True
    return not before.isalnum() or (before.islower() and text[pos].isupper())


def prepare() -> None:
    """Build now what the rules otherwise build at their first use (scouts, the trigger
    table, every rule's expression: the speed exceptions of docs/architecture.md say what it
    costs). A recording calls it while its server
    starts, so that the client's first messages do not pay it."""
    _scout()
    _word_scout()
    _json_scout()
    _json_probes()
    _at_trigger_compiled()
    _single()
    _rev_assign()
    for rule in _rules():
        rule.pattern  # noqa: B018 (compiles it)


def find_spans(text: str) -> list[Span]:
    """Every secret in ``text`` as sorted, non-overlapping spans (the earliest, then the
    longest, wins where two rules overlap)."""
    if len(text) <= LONG_TEXT:
        if len(text) >= _RUN and _RUN_BYTES in _byte_mask(text):
            folded = text.lower()
            hits = _hits_short(text, None, folded)
            return merge(_spans_at(text, hits, folded if text.isascii() else None))
        if not _may_hold_secret(text):
            return []  # most texts: a few checks in C say no rule can match
        # no run of token characters: no token shape, only the rules with words
        folded = text.lower()
        hits = _hits_short(text, _word_scout(), folded)
        return merge(_spans_at(text, hits, folded if text.isascii() else None))
    found = _spans_long(text)
    return merge(found if found is not None else _spans_at(text, _hits_short(text)))


SEARCH.append(find_spans)  # base64 nesting searches what it decodes (secret_table)


def _spans_at(text: str, hits: Iterable[tuple[int, str]], folded: str | None = None) -> list[Span]:
    """The spans of the rules whose triggers occur at ``hits``. ``folded``: the text
    lower-cased, when the text is ASCII (a folded rule then matches it case-sensitively,
    see ``_try``)."""
    found: list[Span] = []
    tried: dict[int, tuple[_Try, ...]] = {}  # a rule name is tried once at a position
    table = _at_trigger_compiled()
    new = tuple.__new__  # a Span without the Python-level __new__ of a NamedTuple
    # a trigger found twice (by the scout and as a ``key=value`` name) is tried once
    for pos, trigger in dict.fromkeys(hits):
        tries = table.get(trigger)
        if tries is None:
            continue
        before = tried.get(pos)
        if before is None:
            tried[pos] = tries
        else:  # another trigger at this position (rare): only the names not tried yet
            names = {t[0] for t in before}
            tries = tuple(t for t in tries if t[0] not in names)
            tried[pos] = before + tries
        for name, pattern, lower, group, word_start, check, back in tries:
            if lower is not None and folded is not None:
                match = lower.match(folded, pos)
            else:
                match = pattern.match(text, pos)
            if match is None:
                continue
            start, end = match.span(group)
            if end <= start:
                continue
            # after a character that is no letter or digit, a trigger starts a word
            if word_start and pos and text[pos - 1].isalnum() and not _word_start(text, pos):
                continue
            if check is None or check(text[start:end]):
                found.append(new(Span, (start - back, end, name)))
    return found


#: Rules that give way to a more particular one finding the same span ("Authorization:
#: Bearer X" is a bearer token).
_GENERIC: Final = frozenset({"assignment", "argument", "known", "authorization"})


def merge(spans: list[Span]) -> list[Span]:
    """Sorted, non-overlapping spans: overlapping ones become one, named by the first."""
    if len(spans) < 2:
        return spans
    spans.sort(key=lambda s: (s.start, -s.end, s.rule in _GENERIC))
    out = [spans[0]]
    for span in spans[1:]:
        last = out[-1]
        if span.start < last.end:
            if span.end > last.end:
                out[-1] = Span(last.start, span.end, last.rule)
            continue
        out.append(span)
    return out
