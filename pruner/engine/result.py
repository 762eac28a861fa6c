"""A pruning result: the kept session, one decision per message (built when read), and stats.

``finish`` turns what the passes decided (per message: removed by which rule, or
restored for which need) into a ``PruneResult``: it settles kept calls whose results
were removed (a placeholder, or with ``drop_pair`` the call goes too), counts tokens
from the index's per-message counts, and leaves the decisions as a lazy sequence: the
one-sentence reasons are written only when someone reads them.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from itertools import compress
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence, cast, overload

from ..model import STATUSES, Decision, Session
from ..rules import Removal, explain, placeholder_text
from .payoff import PLACEHOLDER_LONGER
from ..tokens import HeuristicCounter, TokenCounter

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.index import SessionIndex
    from ..analysis.config import PruneConfig


@dataclass(frozen=True)
class PruneStats:
    """What one pruning did, in figures: messages and tokens before and after, counts per status
    and per rule, the token counter that counted them, and the time the passes took."""

    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int  # kept messages plus the placeholders the export sends
    placeholder_tokens: int
    by_status: Mapping[str, int]
    by_rule: Mapping[str, int]
    counter: str  # which token counter produced the numbers
    elapsed_ms: float  # the passes only
    rounds: int  # passes are re-run on the kept set until it no longer changes

    @property
    def reduction(self) -> float:
        """Share of tokens removed (0..1)."""
        return 1 - self.tokens_after / self.tokens_before if self.tokens_before else 0.0


class Decisions(Sequence[Decision]):
    """The decisions, one per input message in input order, made when first read.

    Behaves as a tuple (indexing, iteration, equality with tuples and other decision
    sequences); pickles as a tuple.
    """

    __slots__ = ("_build", "_items", "_n")

    def __init__(self, build: Callable[[], tuple[Decision, ...]], n: int):
        self._build: Callable[[], tuple[Decision, ...]] | None = build
        self._items: tuple[Decision, ...] | None = None
        self._n = n

    def _all(self) -> tuple[Decision, ...]:
        if self._items is None:
            assert self._build is not None  # dropped only once the items are built
            was_enabled = gc.isenabled()
            gc.disable()  # thousands of acyclic objects: no collection needs to walk the heap for them
            try:
                self._items = items = self._build()
            finally:
                if was_enabled:
                    gc.enable()
            self._build = None
            return items
        return self._items

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, k: int) -> Decision: ...

    @overload
    def __getitem__(self, k: slice) -> tuple[Decision, ...]: ...

    def __getitem__(self, k: int | slice) -> Decision | tuple[Decision, ...]:
        return self._all()[k]

    def __iter__(self) -> Iterator[Decision]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Decisions):
            other = other._all()
        return isinstance(other, tuple) and self._all() == other

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return repr(self._all())

    def __reduce__(self) -> tuple[type[tuple[Decision, ...]], tuple[tuple[Decision, ...]]]:
        return tuple, (self._all(),)


@dataclass(frozen=True)
class PruneResult:
    """What ``prune()`` returns: the input session, the kept session, one ``Decision`` per input
    message, the stats, and the placeholder text the export sends for each kept call whose
    result was pruned."""

    session: Session  # the input, unchanged
    kept: Session  # the kept messages, input order, content unchanged
    decisions: Sequence[Decision]  # one per input message, input order (built when first read)
    stats: PruneStats
    placeholders: Mapping[str, str] = field(default_factory=dict)  # call id -> placeholder text

    def decision(self, message_id: str) -> Decision:
        for d in self.decisions:
            if d.id == message_id:
                return d
        raise KeyError(message_id)

    def report(self) -> dict[str, Any]:
        """The JSON-ready report: totals, counter, and every decision."""
        s = self.stats
        return {
            "session": self.session.name, "source_format": self.session.source_format,
            "messages_before": s.messages_before, "messages_after": s.messages_after,
            "tokens_before": s.tokens_before, "tokens_after": s.tokens_after,
            "placeholder_tokens": s.placeholder_tokens, "reduction_pct": round(100 * s.reduction, 2),
            "encoding": s.counter, "elapsed_ms": round(s.elapsed_ms, 3), "rounds": s.rounds,
            "by_status": dict(s.by_status), "by_rule": dict(s.by_rule),
            "decisions": [d.as_dict() for d in self.decisions],
        }


_KEPT = "no pruning rule applies to it"


def _held_reason(index: SessionIndex, r: Removal, counter: TokenCounter | HeuristicCounter, tokens: int) -> str:
    """Why a message a rule would have removed is kept: its placeholder would not be shorter."""
    msgs = index.messages
    related = msgs[r.related] if r.related is not None else None
    cost = counter.count(placeholder_text(r.rule, related, msgs[r.index], r.detail))
    return (f"{PLACEHOLDER_LONGER}: {r.rule} would replace its {tokens} tokens with a placeholder of "
            f"{cost} tokens")


def settle_orphans(index: SessionIndex, alive: bytearray, final: dict[int, tuple[str, Removal]],
                   policy: str) -> dict[str, str]:
    """Placeholders for kept calls whose results were removed (``drop_pair`` first drops
    assistant messages that held nothing but such calls). Updates ``alive`` and ``final``."""
    msgs, owner_of = index.messages, index.call_owner
    orphaned: dict[int, list[int]] = {}  # assistant index -> its removed results
    for i in index.results:
        if not alive[i]:
            owner = owner_of[i]
            if alive[owner]:
                orphaned.setdefault(owner, []).append(i)
    if policy == "drop_pair" and orphaned:
        answered = {msgs[i].tool_call_id for i in index.results if alive[i]}
        for owner, results in orphaned.items():
            a = msgs[owner]
            if not a.content.strip() and not a.defines and not any(c.id in answered for c in a.tool_calls):
                alive[owner] = 0
                final[owner] = (final[results[0]][0],
                                Removal(owner, "tool_pair", results[0], ("dropped_with_results",)))
    placeholders: dict[str, str] = {}
    for owner, results in orphaned.items():
        if alive[owner]:
            for i in results:
                r = final[i][1]
                related = msgs[r.related] if r.related is not None else None
                # a result answers a call
                placeholders[cast(str, msgs[i].tool_call_id)] = placeholder_text(r.rule, related, msgs[i], r.detail)
    return placeholders


def finish(session: Session, index: SessionIndex, alive: bytearray, final: dict[int, tuple[str, Removal]],
           ever_restored: dict[int, Removal], first_removal: dict[int, str], config: PruneConfig,
           counter: TokenCounter | HeuristicCounter,
           rounds: int, start: float, *, held: Mapping[int, Removal] | None = None) -> PruneResult:
    """Settle orphaned calls, count tokens, and leave the decisions to be explained when read.

    ``alive``: kept after the passes and restorations; ``final``: why each removed message
    went; ``ever_restored``: why each restored one came back; ``first_removal``: the rule
    that first removed each restored one; ``held``: the removals not made because the
    placeholder would be longer (``pruner.engine.payoff``), whose messages are kept.
    """
    msgs = index.messages
    n = len(msgs)
    placeholders = settle_orphans(index, alive, final, config.orphan_policy)
    elapsed_ms = (time.perf_counter() - start) * 1000

    restored = {i: r for i, r in ever_restored.items() if alive[i]}
    kept_back = {i: r for i, r in (held or {}).items() if alive[i] and i not in restored and i not in final}
    by_status = dict.fromkeys(STATUSES, 0)
    by_rule: dict[str, int] = {}
    for status, r in final.values():
        by_status[status] += 1
        by_rule[r.rule] = by_rule.get(r.rule, 0) + 1
    for r in restored.values():
        by_rule[r.rule] = by_rule.get(r.rule, 0) + 1
    kept_messages = tuple(compress(msgs, alive))
    by_status["restored"] = len(restored)
    by_status["kept"] = len(kept_messages) - len(restored)

    tokens = index.tokens(counter)
    placeholder_tokens = sum(counter.count_many(placeholders.values()))  # uncounted ones in one go
    stats = PruneStats(
        messages_before=n, messages_after=len(kept_messages), tokens_before=sum(tokens),
        tokens_after=sum(compress(tokens, alive)) + placeholder_tokens, placeholder_tokens=placeholder_tokens,
        by_status=by_status, by_rule=dict(sorted(by_rule.items())), counter=counter.name,
        elapsed_ms=elapsed_ms, rounds=rounds)

    def build() -> tuple[Decision, ...]:
        # Decision(...) without the frozen dataclass's per-field __init__: a result holds one per
        # message, built thousands at a time; the objects are the same (fields in __dict__).
        new, cls = object.__new__, Decision
        out: list[Decision] = []
        add = out.append
        for m in msgs:
            d = new(cls)
            f = d.__dict__  # filled in place: cheaper than assigning a new __dict__
            f["id"] = m.id
            f["status"] = "kept"
            f["rule"] = ""
            f["reason"] = _KEPT
            f["related"] = None
            add(d)
        for i, (status, r) in final.items():
            f = out[i].__dict__
            f["status"] = status
            f["rule"] = r.rule
            f["reason"] = explain(r, msgs)
            f["related"] = None if r.related is None else msgs[r.related].id
        for i, r in kept_back.items():
            out[i].__dict__["reason"] = _held_reason(index, r, counter, tokens[i])
        for i, r in restored.items():
            reason = explain(r, msgs) + f" (it had been removed by {first_removal[i]})"
            # a restoration points at the message that needed it
            out[i] = cls(msgs[i].id, "restored", r.rule, reason, msgs[cast(int, r.related)].id)
        return tuple(out)

    kept = session if len(kept_messages) == n else session.with_messages(kept_messages)
    return PruneResult(session=session, kept=kept, decisions=Decisions(build, n), stats=stats,
                       placeholders=placeholders)

