"""What a strategy lost, as one list over the whole session: each term the replies used that its context
no longer held, the request where that started, the message that held it, and why it left.

Context recall (``pruner.replay.recall``) records a ``Loss`` per used term missing at each request: a
term lost at request 40 and used again at 41, 57 and 186 is four losses of one thing. Here they are
grouped into one row per (chain, term, the message that held it): the first request the strategy's
context lacked it, the last, how many requests lacked it, the holding message (its position, id and
kind: ``pruner.replay.composition.kind_of``) and why the strategy's context no longer held it
(``reason``, here so that ``pruner.replay.verdict`` imports it without a circle: summarised, truncated,
cleared, pruned, never sent…). A term whose holder changes (a newer message repeated it and that one left
too) is a row per holder.

The rows come from the losses the recall kept (``LOSSES_PER_REQUEST`` per request); the exact count
of losses is ``LostTerms.missing``, so a list built from fewer says so (``LostTerms.complete``).

>>> from pruner.model import Message, Session
>>> from pruner.replay import replay
>>> s = Session.of([Message(id="u", role="user", content="Fix src/app.py: it raises KeyError_42"),
...                 Message(id="a", role="assistant", content="Opening src/app.py for KeyError_42")])
>>> lost_terms(replay(s, ["full"]), "full").rows
()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..errors import ConfigurationError
from .composition import call_index, kind_of
from .recall import Loss, context_recall

if TYPE_CHECKING:  # pragma: no cover
    from .engine import Replay

#: How a lost-terms list can be ordered (``sort_lost``), the first being the default.
SORT_KEYS = ("request", "requests", "term", "message", "why")


@dataclass(frozen=True)
class LostTerm:
    """One term a strategy's context lacked, over every request that lacked it."""

    term: str
    chain: str  # whose messages ``position`` indexes ("main" or a subagent's chain id)
    request: int  # the first request whose context lacked it
    last_request: int
    requests: int  # how many requests lacked it (of those the recall kept)
    position: int | None  # the holding message's position in its chain (None: no session message held it)
    message_id: str
    kind: str  # the holding message's kind (user, assistant, tool: Bash, file reads, summaries…)
    left_at: int | None  # the request at which the strategy stopped sending it (None: never sent it)
    why: str

    def as_dict(self) -> dict[str, Any]:
        return {"term": self.term, "chain": self.chain, "request": self.request, "last_request": self.last_request,
                "requests": self.requests, "position": self.position, "message_id": self.message_id,
                "kind": self.kind, "left_at": self.left_at, "why": self.why}


@dataclass(frozen=True)
class LostTerms:
    """A strategy's lost-terms list, with the exact counts beside it."""

    strategy: str
    rows: tuple[LostTerm, ...]
    used: int  # used terms over every request (the recall's denominator)
    missing: int  # losses over every request (exact)
    kept: int  # losses the rows were built from

    @property
    def complete(self) -> bool:
        return self.kept == self.missing

    def as_dict(self) -> dict[str, Any]:
        return {"strategy": self.strategy, "used_terms": self.used, "terms_missing": self.missing,
                "losses_listed": self.kept, "complete": self.complete, "lost": [r.as_dict() for r in self.rows]}


_WHY = {"compact": "summarised", "truncate": "truncated", "clear": "cleared", "prune": "pruned"}


def reason(replay: "Replay", strategy: str, loss: Loss) -> str:
    """Why ``strategy``'s context lacked the loss's source message (from the strategy's events)."""
    if loss.source is None:
        return "held only by a message outside the session"
    if loss.left_at is None:
        if loss.placeholder is not None:
            return f"never sent: the placeholder {loss.placeholder!r} went in its place"
        return "never sent: left out when it arrived"
    row = replay.runs[strategy].rows[loss.left_at]
    kinds = [e.kind for e in row.events]
    kind = next((k for k in ("compact", "truncate", "clear", "prune") if k in kinds), None)
    what = _WHY.get(kind, "dropped") if kind is not None else "dropped"
    text = f"{what} at request {loss.left_at}"
    if loss.placeholder is not None:
        text += f" (placeholder {loss.placeholder!r})"
    return text


def lost_terms(replay: "Replay", strategy: str, *, sort: str = SORT_KEYS[0]) -> LostTerms:
    """``strategy``'s lost terms over the whole session, one row per term and holding message, ordered by
    ``sort`` (``SORT_KEYS``). Raises ``ConfigurationError`` for a strategy that was not replayed."""
    if strategy not in replay.runs:
        raise ConfigurationError(f"strategy {strategy!r} was not replayed; replayed: {', '.join(replay.runs)}")
    report = context_recall(replay)
    recall = report.strategies[strategy]
    chains = dict(replay.session.chains)
    calls: dict[str, Any] = {}
    groups: dict[tuple[str, str, str], list[Any]] = {}
    for loss in recall.losses:
        key = (loss.chain, loss.term, loss.source_id)
        group = groups.get(key)
        if group is None:
            groups[key] = [loss, loss.request, 1]
        else:
            group[1] = loss.request
            group[2] += 1
    rows = []
    for (chain, term, source_id), (first, last, count) in groups.items():
        kind = ""
        messages = chains[chain].messages if chain in chains else ()
        if first.source is not None and first.source < len(messages):
            if chain not in calls:
                calls[chain] = call_index(messages)
            kind = kind_of(messages[first.source], calls[chain])
        rows.append(LostTerm(term=term, chain=chain, request=first.request, last_request=last, requests=count,
                             position=first.source, message_id=source_id, kind=kind, left_at=first.left_at,
                             why=reason(replay, strategy, first)))
    return LostTerms(strategy, sort_lost(rows, sort), recall.used, recall.missing, len(recall.losses))


_ORDERS: dict[str, Callable[[LostTerm], Any]] = {
    "request": lambda r: (r.request, r.chain, r.term),
    "requests": lambda r: (-r.requests, r.request, r.term),  # the ones lacking longest first
    "term": lambda r: (r.term.casefold(), r.term, r.request),
    "message": lambda r: (r.chain, r.position if r.position is not None else -1, r.request, r.term),
    "why": lambda r: (r.why, r.request, r.term),
}


def sort_lost(rows: Sequence[LostTerm], by: str = SORT_KEYS[0]) -> tuple[LostTerm, ...]:
    """``rows`` ordered by ``by`` (one of ``SORT_KEYS``); every order ends on a unique key, so it is total."""
    order = _ORDERS.get(by)
    if order is None:
        raise ConfigurationError(f"cannot sort lost terms by {by!r}; choose from {', '.join(SORT_KEYS)}")
    return tuple(sorted(rows, key=lambda r: (order(r), _every_field(r))))


def _every_field(r: LostTerm) -> tuple[Any, ...]:
    """The tie-break: every field, so rows that tie on the order's key never keep their input order."""
    return (r.chain, r.message_id, r.term, r.request, r.last_request, r.requests,
            -1 if r.position is None else r.position, r.kind, -1 if r.left_at is None else r.left_at, r.why)


def top_lost(lost: LostTerms, n: int = 5) -> list[dict[str, Any]]:
    """The ``n`` terms lacked at the most requests (the Corpus page's "top lost terms")."""
    return [{"term": r.term, "requests": r.requests, "request": r.request, "kind": r.kind}
            for r in sort_lost(lost.rows, "requests")[:n]]


def _cell(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def lost_lines(lost: LostTerms, *, limit: int | None = None, safe: Callable[[str], str] = str) -> list[str]:
    """The list as a text table for a terminal (``safe``: how untrusted text is made harmless there)."""
    head = (f"{lost.strategy}: {len(lost.rows):,} term{'' if len(lost.rows) == 1 else 's'} lost ({lost.missing:,} of "
            f"the {lost.used:,} used terms "
            "missing, counted at every request that lacked them)")
    if not lost.complete:
        head += f"; listed from the first {lost.kept:,} losses kept"
    if not lost.rows:
        return [head, "nothing lost: its context held every term the replies used"]
    header = f"{'request':>7}  {'term':<32}  {'lacked':>6}  {'message that held it':<36}  why"
    out = [head, header, "-" * len(header)]
    rows = lost.rows if limit is None else lost.rows[:limit]
    for r in rows:
        where = "no session message" if r.position is None else \
            f"{'' if r.chain == 'main' else r.chain + ' '}#{r.position} {r.kind}"
        out.append(f"{r.request:>7}  {_cell(safe(r.term), 32):<32}  {r.requests:>6}  "
                   f"{_cell(safe(where), 36):<36}  {safe(r.why)}")
    if limit is not None and len(lost.rows) > limit:
        out.append(f"… and {len(lost.rows) - limit:,} more (all of them with --json)")
    return out
