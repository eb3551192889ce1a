"""Which recording answers a live request: fingerprints, strategies and miss diagnostics.

Theory of operation
-------------------
Every recorded client request gets a *fingerprint*, a tuple that ignores what may
legitimately change between runs:

* lifecycle calls (``initialize``, ``server/discover``, ``ping``) by method alone, so a
  different client, client version or capability set still gets the recorded handshake;
* ``tools/call`` by tool name plus the canonical (sorted keys, compact) JSON of its
  arguments, so key order and whitespace never matter;
* everything else by method plus canonical params without ``_meta`` (progress tokens,
  modern-era envelopes). A pagination ``cursor`` is part of the fingerprint when the
  recording handed it out (a ``nextCursor`` of a recorded answer): a second listing that
  walks the same pages gets the same pages. A cursor the recording never saw is left out,
  and the request takes the next page of that listing in recorded order;
* *absent* is *empty*: a missing ``params``, ``null`` and ``{}`` are the same request, and
  so are a missing params member (``arguments`` above all) and one that is ``null`` or
  ``{}``, because clients differ only in how they spell "nothing" (fastmcp leaves
  ``prompts/get`` ``arguments`` out where other clients send ``{}``). An empty *list* or
  string is data and stays, and so is anything *inside* the arguments: a tool may tell an
  argument set to ``null`` from one left out.

A redacted position of a recording (a placeholder, or a typed sentinel its event lists)
matches any live value there (``cassette.core.replay.wildcards``): a recording that holds one is
a *template*, tried in recorded order when no fingerprint matches, so a live request
whose secret differs from the recorded one still finds its recording.

Recordings with one fingerprint queue up in recorded order and the first one not yet
consumed wins. Queues only ever shrink from the front, so a lookup costs O(1) amortised
whatever the cassette's size. When nothing matches, the matcher raises a ``ReplayMiss``
that carries a ``MissReport``: what kind of miss, the closest recording (fewest differing
paths, unconsumed first) and the exact paths that diverged. Diagnosis runs only on a miss.

*Ignored params* (``Strategy.ignore``: JSON Pointers into the request, such as
``/params/arguments/requestId``; ``--ignore-param``, a marker's ``ignore=``,
``[tool.cassette] ignore-params``) are removed from both sides before fingerprinting, so
a volatile value (a timestamp, a nonce) never causes a miss; a miss that happens for
another reason still shows them in its diagnostics, marked ``(ignored)``.

Strategies trade strictness for tolerance and are named so a test states its choice:

``strict``   each recording answers once; a repeat of anything is an "already played" miss.
``default``  as strict, except that a repeated *read-only* request (lifecycle calls, lists,
             ``prompts/get``, ``resources/read``, ``tasks/get``, ``tasks/result``,
             ``completion/complete``) replays the last recorded answer with its fingerprint
             once its recordings are used up: a poll keeps seeing the final status.
``loose``    as default, and a miss falls back to the next unconsumed recording of the same
             *key* in recorded order: the method and what the request is about (the tool or
             prompt name, the resource URI, the task id, the page), never another's, so a
             test that reorders calls or varies arguments still gets an answer and never
             one meant for something else.

Any strategy may also *allow repeats* (``Strategy.allow_repeats``: the marker's
``allow_repeats=True``, ``--allow-repeats``, ``allow-repeats`` in ``[tool.cassette]``,
vcrpy's ``allow_playback_repeats``): a request of any method whose recordings are all
used up gets its last answer again instead of an "already played" miss, and each time is
counted (``FingerprintMatcher.repeats``) for the end-of-run line. An "already played"
miss suggests ``loose`` only when an unplayed recording of the same key is left (so
``loose`` would answer), and ``allow_repeats`` when there is a last answer to give.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

import attrs

from cassette.core.replay.strategies import (
    STRATEGIES,
    Strategy,
    check_ignore_pointer,
    get_strategy,
    ignored_paths,
    without_ignored,
)
from cassette.core.replay.wildcards import has_wildcards, mask_like
from cassette.core.wire.jsonrpc import JSONObject, keeping_literals, one_shot
from cassette.core.words.text import one_line, show_value
from cassette.errors import AlreadyPlayedError, NotRecordedError, ReplayMiss

if TYPE_CHECKING:
    from collections.abc import Callable

    from cassette.core.replay.misses import MissReport
    from cassette.core.words.jsondiff import Difference
    from cassette.core.words.said import Quote, Said

__all__ = [
    "LIFECYCLE_METHODS",
    "STRATEGIES",
    "Candidate",
    "Fingerprint",
    "FingerprintMatcher",
    "Matcher",
    "MissReport",
    "Strategy",
    "canonical",
    "check_ignore_pointer",
    "fingerprint",
    "get_strategy",
    "one_line",
    "quoted_diffs",
    "quoted_label",
    "show_value",
    "without_ignored",
]

LIFECYCLE_METHODS: Final = frozenset({"initialize", "server/discover", "ping"})
#: Matched by method alone and replayable again: the lifecycle, and the log level, which is
#: the live client's choice (the replay honours it when sending log messages).
METHOD_ONLY: Final = LIFECYCLE_METHODS | {"logging/setLevel"}
#: Requests that change nothing on the server: asking again gets the same answer, so under
#: ``default`` the last recording of one keeps answering once its recordings are used up
#: (besides every ``*/list``).
READ_ONLY: Final = frozenset(
    {"prompts/get", "resources/read", "tasks/get", "tasks/result", "completion/complete"}
)
# In a 2026-07-28 retry the client's input responses and the server's echoed state: the
# retry must find the recording that follows the first call. A pagination cursor is kept
# apart (see ``compared_part``).
_VOLATILE_PARAMS: Final = frozenset({"_meta", "cursor", "inputResponses", "requestState"})
#: What a request is about, for the methods that name it: ``loose`` never crosses it.
_SUBJECT: Final = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "resources/subscribe": "uri",
    "resources/unsubscribe": "uri",
    "tasks/get": "taskId",
    "tasks/result": "taskId",
    "tasks/cancel": "taskId",
}
#: No cursor handed out: a recording whose answers never paginate.
NO_CURSORS: Final[frozenset[str]] = frozenset()
_DIAGNOSE_LIMIT: Final = 500  # candidates compared on a miss; keeps a miss fast on huge tapes
_SHOWN_DIFFS: Final = 3

Fingerprint = tuple[str, str, str]
MethodKey = tuple[str, str]


# The C encoder sorts keys itself: several times faster than sorting in Python first, and
# this runs once per recorded request when a cassette is prepared.
_canonical = keeping_literals(
    one_shot(
        json.JSONEncoder(
            ensure_ascii=False,
            separators=(",", ":"),
            check_circular=False,
            allow_nan=False,
            sort_keys=True,
        )
    )
)


def canonical(value: Any) -> str:
    """Sorted, compact JSON: equal for values that differ only in key order or spacing."""
    return _canonical(value)


def _params(message: JSONObject) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def _tool_name(params: dict[str, Any]) -> str:
    name = params.get("name")
    return name if isinstance(name, str) else ""


def _cursor(params: dict[str, Any]) -> str | None:
    cursor = params.get("cursor")
    return cursor if isinstance(cursor, str) else None


def _empty(value: Any) -> bool:
    """``null`` or ``{}``: how clients spell a member they have nothing to put in."""
    return value is None or (isinstance(value, dict) and not value)


def compared_part(message: JSONObject, cursors: frozenset[str] = NO_CURSORS) -> Any:
    """The part of a request its fingerprint depends on (what a miss diagnosis diffs): a
    cursor counts only when the recording handed it out (``cursors``)."""
    method = message.get("method")
    params = _params(message)
    if method in METHOD_ONLY:
        return None
    if method == "tools/call":
        arguments = params.get("arguments")
        return {} if arguments is None else arguments
    kept = {k: v for k, v in params.items() if k not in _VOLATILE_PARAMS and not _empty(v)}
    cursor = _cursor(params)
    if cursor is not None and cursor in cursors:
        kept["cursor"] = cursor
    return kept


def fingerprint(message: JSONObject, cursors: frozenset[str] = NO_CURSORS) -> Fingerprint:
    """The fingerprint of a request or notification (see the module docstring)."""
    method = message.get("method")
    if not isinstance(method, str):
        method = ""
    if method in METHOD_ONLY:
        return (method, "", "")
    if method == "tools/call":
        return (method, _tool_name(_params(message)), canonical(compared_part(message)))
    return (method, "", canonical(compared_part(message, cursors)))


def unknown_cursor(message: JSONObject, cursors: frozenset[str]) -> bool:
    """Whether the request carries a cursor the recording never handed out."""
    cursor = _cursor(_params(message))
    return cursor is not None and cursor not in cursors


def method_key(message: JSONObject, cursors: frozenset[str] = NO_CURSORS) -> MethodKey:
    """What ``loose`` falls back on: the method and what the request is about (the tool,
    prompt, resource or task it names; for a listing, the page a known cursor names)."""
    method = message.get("method")
    method = method if isinstance(method, str) else ""
    params = _params(message)
    subject = params.get(_SUBJECT.get(method, ""))
    if method.endswith("/list"):
        cursor = _cursor(params)
        subject = cursor if cursor is not None and cursor in cursors else None
    return (method, subject if isinstance(subject, str) else "")


def _repeatable(method: str) -> bool:
    return method in METHOD_ONLY or method in READ_ONLY or method.endswith("/list")


@attrs.frozen(slots=True)
class Candidate:
    """One recorded client message the matcher may hand out."""

    key: int  # the caller's handle for it (the replayer uses its exchange index)
    message: JSONObject
    seq: int  # file position, for diagnostics (line = seq + 1)
    wildcards: tuple[str, ...] = ()  # pointers of typed sentinels (see the module docstring)

    def masked(self, live: JSONObject) -> JSONObject:
        """``live`` with the positions this recording redacted taken from the recording."""
        masked: JSONObject = mask_like(self.message, live, self.wildcards)
        return masked


def _session_queue(
    queues: dict[Any, deque[int]], shared: Mapping[Any, tuple[int, ...]], key: Any
) -> deque[int] | None:
    """A session's queue for ``key``, made on first use from the shared index: a session
    (one per test, or per HTTP client) starts in constant time whatever the cassette's size."""
    queue = queues.get(key)
    if queue is None:
        positions = shared.get(key)
        if positions is None:
            return None
        queue = queues[key] = deque(positions)
    return queue


class Matcher(Protocol):
    """Picks the recording that answers a live request; raises ``ReplayMiss`` otherwise.

    Everything it needs is public: it is made from the recorded requests (``Candidate``
    values: ``key``, ``message``, ``seq``) and raises ``cassette.errors.NotRecordedError``
    or ``AlreadyPlayedError``. ``strict`` declares how the replay treats what is not a
    request: under a strict matcher a client's answer that differs from the recorded one,
    or a server request left out for a capability the client lacks, is a miss, not a
    warning."""

    #: whether differing client answers and left-out server requests are misses
    strict: bool

    def match(self, message: dict[str, Any]) -> int:
        """Return the ``Candidate.key`` of the recording that answers ``message``."""
        ...


def request_label(message: JSONObject) -> str:
    """A request as a person names it: its method, and a tool call's tool, on one line."""
    method = one_line(message.get("method"))
    if method == "tools/call":
        return f'tools/call "{one_line(_tool_name(_params(message)))}"'
    return method


_label = request_label


def quoted_label(message: JSONObject) -> Said:
    """``request_label`` as a ``Said`` (``cassette.core.words.said``): the method and the tool
    are quoted names, so a person reads them redacted and our words as they are."""
    from cassette.core.words.said import NAME, Quote, said

    method = Quote(message.get("method"), NAME)
    if message.get("method") == "tools/call":
        return said(method, ' "', Quote(_tool_name(_params(message)), NAME), '"')
    return said(method)


def quoted_diffs(diffs: Sequence[Difference], ignored: Callable[[str], bool] | None = None) -> Said:
    """``PATH: recorded VALUE, received VALUE; ...`` as a ``Said``: each path a quoted
    name, each value quoted under the member it stands at (``cassette.core.words.said``)."""
    from cassette.core.words.said import NAME, VALUE, Quote, said

    pieces: list[str | Quote] = []
    for index, d in enumerate(diffs):
        key = d.path.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
        if index:
            pieces.append("; ")
        pieces += [Quote(d.path or "/", NAME), ": recorded ", Quote(d.recorded, VALUE, key)]
        pieces += [", received ", Quote(d.received, VALUE, key)]
        if ignored is not None and ignored(d.path):
            pieces.append(" (ignored)")
    return said(*pieces)


@attrs.frozen(eq=False)  # compared by identity: no __eq__ to build at import
class CandidateIndex:
    """Recordings grouped by fingerprint and by method, computed once per cassette.

    Immutable, so every replay session of one cassette (an HTTP front may serve hundreds)
    shares it and keeps only its own consumption state.
    """

    candidates: tuple[Candidate, ...]
    by_fp: Mapping[Fingerprint, tuple[int, ...]]
    by_method: Mapping[MethodKey, tuple[int, ...]]
    #: the pagination cursors the recording handed out (``nextCursor`` of its answers)
    cursors: frozenset[str] = NO_CURSORS
    #: every page of each listing, whatever its cursor: where an unknown cursor goes
    by_listing: Mapping[Fingerprint, tuple[int, ...]] = attrs.field(factory=dict)
    #: recordings with redacted positions, by method key, in recorded order
    templates: Mapping[MethodKey, tuple[tuple[int, Fingerprint], ...]] = attrs.field(factory=dict)
    #: the params fingerprints leave out (``Strategy.ignore``)
    ignore: tuple[str, ...] = ()

    @classmethod
    def build(
        cls,
        candidates: Sequence[Candidate],
        cursors: frozenset[str] = NO_CURSORS,
        ignore: Sequence[str] = (),
    ) -> CandidateIndex:
        by_fp: dict[Fingerprint, list[int]] = {}
        by_method: dict[MethodKey, list[int]] = {}
        by_listing: dict[Fingerprint, list[int]] = {}
        templates: dict[MethodKey, list[tuple[int, Fingerprint]]] = {}
        for pos, cand in enumerate(candidates):
            message = without_ignored(cand.message, ignore) if ignore else cand.message
            fp = fingerprint(message, cursors)
            by_fp.setdefault(fp, []).append(pos)
            key = method_key(message, cursors)
            by_method.setdefault(key, []).append(pos)
            if cursors:
                by_listing.setdefault(fingerprint(message), []).append(pos)
            # a placeholder's text is in the canonical JSON when there is one: most
            # recordings are spared the walk
            maybe = cand.wildcards or "REDACTED" in fp[2]
            if fp[2] and maybe and has_wildcards(compared_part(message), cand.wildcards):
                templates.setdefault(key, []).append((pos, fp))
        return cls(
            tuple(candidates),
            {k: tuple(v) for k, v in by_fp.items()},
            {k: tuple(v) for k, v in by_method.items()},
            cursors,
            {k: tuple(v) for k, v in by_listing.items()},
            {k: tuple(v) for k, v in templates.items()},
            tuple(ignore),
        )


class FingerprintMatcher:
    """The built-in matcher: fingerprints, consumption in recorded order, a strategy."""

    def __init__(
        self, candidates: Sequence[Candidate] | CandidateIndex, strategy: str | Strategy = "default"
    ):
        self.strategy = get_strategy(strategy)
        self.strict = self.strategy.strict
        ignore = self.strategy.ignore
        if not isinstance(candidates, CandidateIndex):
            index = CandidateIndex.build(candidates, ignore=ignore)
        elif candidates.ignore != ignore:  # prepared without this strategy's ignore rules
            index = CandidateIndex.build(candidates.candidates, candidates.cursors, ignore)
        else:
            index = candidates
        self._index = index
        self._candidates = index.candidates
        self._consumed = [False] * len(self._candidates)
        # This session's queues, made on first use from the shared index: a session (one
        # per test, or per HTTP client) starts in constant time whatever the cassette's size.
        self._by_fp: dict[Fingerprint, deque[int]] = {}
        self._by_method: dict[MethodKey, deque[int]] = {}
        self._by_listing: dict[Fingerprint, deque[int]] = {}
        self._last: dict[Fingerprint, int] = {}
        #: requests answered again with their last recording (``Strategy.allow_repeats``)
        self.repeats = 0

    def _queue(self, fp: Fingerprint) -> deque[int] | None:
        return _session_queue(self._by_fp, self._index.by_fp, fp)

    def _method_queue(self, key: MethodKey) -> deque[int] | None:
        return _session_queue(self._by_method, self._index.by_method, key)

    def _take(self, queue: deque[int] | None) -> int | None:
        while queue:
            pos = queue.popleft()
            if not self._consumed[pos]:
                self._consumed[pos] = True
                return pos
        return None

    def _take_single(self, fp: Fingerprint) -> int | None:
        """A request recorded once (most are), taken without making it a queue: ``_take``
        of the queue ``_queue`` would make, for less (docs/architecture.md, "Speed exceptions", has
        the figure)."""
        if fp in self._by_fp:
            return None
        positions = self._index.by_fp.get(fp)
        if positions is None or len(positions) != 1:
            return None
        pos = positions[0]
        if self._consumed[pos]:
            return None
        self._consumed[pos] = True
        return pos

    def _use(self, fp: Fingerprint, pos: int) -> int:
        self._last[fp] = pos
        return self._candidates[pos].key

    def match(self, message: JSONObject) -> int:
        """See ``Matcher.match``."""
        if not self._index.ignore:
            return self._match(message, message)
        return self._match(without_ignored(message, self._index.ignore), message)

    def _match(self, message: JSONObject, original: JSONObject) -> int:
        cursors = self._index.cursors
        if cursors and unknown_cursor(message, cursors):
            return self._match_listing(message)
        fp = fingerprint(message, cursors)
        pos = self._take_single(fp)
        if pos is not None:
            return self._use(fp, pos)
        queue = self._queue(fp)
        pos = self._take(queue)
        if pos is not None:
            return self._use(fp, pos)
        templates = self._index.templates.get(method_key(message, cursors), ())
        fits = [(p, t_fp) for p, t_fp in templates if self._fits(p, t_fp, message)]
        for p, t_fp in fits:
            if not self._consumed[p]:
                self._consumed[p] = True
                return self._use(t_fp, p)
        again = self._again(fp, queue is not None, [t_fp for _, t_fp in fits])
        if again is not None:
            return again
        if fits:
            queue = self._queue(fits[0][1])
            fp = fits[0][1]
        if self.strategy.fallback_to_method:
            pos = self._take(self._method_queue(method_key(message, cursors)))
            if pos is not None:
                return self._use(fp, pos)
        raise self._miss(original, fp, recorded=queue is not None)

    def _again(self, fp: Fingerprint, recorded: bool, fits: list[Fingerprint]) -> int | None:
        """The last answer again for a request whose recordings are used up: a read-only
        one under ``default`` and ``loose``; any one with ``allow_repeats`` (counted)."""
        listing = self.strategy.repeat_listings and _repeatable(fp[0])
        if not (listing or self.strategy.allow_repeats):
            return None
        for last_fp in [fp] * recorded + fits:
            last = self._last.get(last_fp)
            if last is not None:
                if not listing:
                    self.repeats += 1
                return self._candidates[last].key
        return None

    def _match_listing(self, message: JSONObject) -> int:
        """A cursor the recording never handed out: the next page of that listing in
        recorded order, whatever its cursor (how replays matched every page before)."""
        fp = fingerprint(message)
        queue = _session_queue(self._by_listing, self._index.by_listing, fp)
        pos = self._take(queue)
        if pos is not None:
            return self._use(fp, pos)
        if queue is not None and self.strategy.repeat_listings:
            last = self._last.get(fp)
            if last is not None:
                return self._candidates[last].key
        raise self._miss(message, fp, recorded=queue is not None)

    def _fits(self, pos: int, fp: Fingerprint, message: JSONObject) -> bool:
        """Whether a template recording matches ``message``, its wildcards matching anything."""
        return fingerprint(self._candidates[pos].masked(message), self._index.cursors) == fp

    def unconsumed(self) -> list[Candidate]:
        """Recordings never played: what a test may have forgotten to exercise."""
        return [c for c, used in zip(self._candidates, self._consumed, strict=True) if not used]

    # -- diagnosis (only on a miss) -------------------------------------------------------

    def _miss(self, message: JSONObject, fp: Fingerprint, *, recorded: bool) -> ReplayMiss:
        if recorded:
            return self._already_played(message, fp)
        report = self._not_recorded(message)
        return NotRecordedError(report.summary, report)

    def _already_played(self, message: JSONObject, fp: Fingerprint) -> ReplayMiss:
        times = len(self._index.by_fp.get(fp, ()))
        last = self._last.get(fp)
        seq = self._candidates[last].seq if last is not None else None
        hint = self._already_played_hint(message, last)
        from cassette.core.words.said import said

        summary = said(
            quoted_label(message),
            f" with these arguments was recorded {times} time(s) and every recording has "
            f"been played already (strategy {self.strategy.name}{hint})",
        )
        from cassette.core.replay.misses import MissReport

        report = MissReport("already-played", str(message.get("method")), summary, seq)
        return AlreadyPlayedError(summary, report)

    def _already_played_hint(self, message: JSONObject, last: int | None) -> str:
        """What would answer a used-up request, and only what would: ``loose`` when an
        unplayed recording of the same key (another argument set of the same tool) is
        left, ``allow_repeats`` when there is a last answer to give again."""
        hints = []
        if not self.strategy.fallback_to_method:
            key = method_key(message, self._index.cursors)
            left = self._index.by_method.get(key, ())
            if any(not self._consumed[pos] for pos in left):
                hints.append("the loose strategy would answer it with another recording of it")
        if last is not None and not self.strategy.allow_repeats:
            hints.append("allow_repeats (--allow-repeats) would answer it again")
        return "".join(f"; {hint}" for hint in hints)

    def _not_recorded(self, message: JSONObject) -> MissReport:
        from cassette.core.replay.misses import MissReport
        from cassette.core.words.said import NAME, Quote, said

        method = str(message.get("method"))
        label = quoted_label(message)
        same_method = [c for c in self._candidates if c.message.get("method") == method]
        if not same_method:
            known = sorted({str(c.message.get("method")) for c in self._candidates})
            return MissReport(
                "not-recorded",
                method,
                said(Quote(method, NAME), " was never recorded (recorded: ", *_listing(known), ")"),
            )
        key = method_key(message)
        same_key = [c for c in same_method if method_key(c.message) == key]
        if not same_key:
            tools = sorted({_tool_name(_params(c.message)) for c in same_method})
            return MissReport(
                "not-recorded",
                method,
                said(label, " was never recorded (recorded tools: ", *_listing(tools), ")"),
            )
        return self._closest(message, label, same_key)

    def _closest(self, message: JSONObject, label: Said, pool: list[Candidate]) -> MissReport:
        from cassette.core.words.jsondiff import differences  # a miss's work, not a replay's start

        consumed = {c.key for c, used in zip(self._candidates, self._consumed, strict=True) if used}
        pool = sorted(pool, key=lambda c: c.key in consumed)[:_DIAGNOSE_LIMIT]
        best: tuple[Candidate, list[Difference], int] | None = None
        ignored = ignored_paths(message, self._index.ignore)
        for cand in pool:
            received = compared_part(cand.masked(message))
            diffs = differences(compared_part(cand.message), received)
            counted = [d for d in diffs if not any(d.path.startswith(p) for p in ignored)]
            if best is None or len(counted) < best[2]:
                best = (cand, diffs, len(counted))
        assert best is not None
        cand, diffs, _ = best
        what = "arguments" if message.get("method") == "tools/call" else "params"
        ignored = ignored_paths(message, self._index.ignore)

        def is_ignored(path: str) -> bool:
            return any(path == p or path.startswith(p + "/") for p in ignored)

        diffs.sort(key=lambda d: is_ignored(d.path))  # what caused the miss comes first
        shown = quoted_diffs(diffs[:_SHOWN_DIFFS], is_ignored)
        more = f" (and {len(diffs) - _SHOWN_DIFFS} more)" if len(diffs) > _SHOWN_DIFFS else ""
        from cassette.core.words.said import said

        summary = said(label, f" not recorded: {what} differ at ", shown, more)
        method = str(message.get("method"))
        from cassette.core.replay.misses import MissReport

        return MissReport("not-recorded", method, summary, cand.seq, tuple(diffs))


def _listing(names: Sequence[str]) -> list[str | Quote]:
    """``a, b, c`` with each name quoted, or ``none``."""
    from cassette.core.words.said import NAME, Quote

    if not names:
        return ["none"]
    out: list[str | Quote] = []
    for index, name in enumerate(names):
        out += [", "] * bool(index) + [Quote(name, NAME)]
    return out


if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        """``MissReport``, built on first use (``cassette.core.replay.misses``)."""
        if name != "MissReport":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from cassette.core.replay.misses import MissReport

        return MissReport
