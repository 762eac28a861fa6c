"""Dependency restoration (pass 3): bring back what kept messages still need, transitively.

Two kinds of need:

* ``dependency``: a kept message refers to a key (``refs`` field or a
  ``REF:key`` marker) and no message that the first two passes kept defines
  it before the referencing message. The definer restored is the latest one
  before the referencing message: the value the conversation had when the
  reference was made. A key defined only later is not something the message
  can depend on.
* ``tool_pair``: a kept tool result needs the assistant message that made its
  call. (The other direction, a kept call whose result was removed, is met at
  export with a placeholder naming the newer result, so restoring it would undo
  the pruning for nothing.)

Each need is judged against what passes 1 and 2 kept, never against other
restorations, so the result does not depend on the order needs are met in, and
appending messages never changes how earlier needs were met.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from typing import TYPE_CHECKING, Callable, Iterator, Sequence, cast

from ..analysis.index import SessionIndex
from ..model import Message
from . import Alive, Emits, Removal, explains, register_rule

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.config import PruneConfig


def needs_of(index: SessionIndex, i: int, alive: Alive, definers: dict[str, list[int]],
             kept_definers: dict[str, list[int]]) -> Iterator[tuple[int, str, str]]:
    """The removed messages message ``i`` needs back: ``(index, rule, detail)`` triples."""
    owner = index.call_owner[i]
    if owner >= 0 and not alive[owner]:
        yield owner, "tool_pair", cast(str, index.messages[i].tool_call_id)  # owner >= 0: i is a result
    for key in index.refs[i]:
        candidates = definers.get(key)
        if not candidates or candidates[0] > i:
            continue  # nothing defines it before this message
        kept = kept_definers[key]
        if kept and kept[0] < i:
            continue  # a message the passes kept already defines it before this one
        yield candidates[bisect_left(candidates, i) - 1], "dependency", key


def restore_dependencies(index: SessionIndex, alive: Alive) -> list[Removal]:
    """Restorations, in position order; ``alive`` (what passes 1 and 2 kept) is not modified.

    A restored message's own needs count too (transitively); ``related`` is the
    earliest message that needed it.
    """
    definers = index.definers
    kept_definers = {k: [i for i in v if alive[i]] for k, v in definers.items()}
    owner = index.call_owner
    # Only results whose call is gone and messages with references can need anything.
    heap = [i for i in index.results if alive[i] and not alive[owner[i]]]
    heap += [i for i in index.referrers if alive[i]]
    heapq.heapify(heap)
    needed_by: dict[int, tuple[int, int, str, str]] = {}  # restored -> (earliest needer, order, rule, detail)
    seen: set[int] = set()
    while heap:
        i = heapq.heappop(heap)
        if i in seen:
            continue
        seen.add(i)
        for order, (target, rule, detail) in enumerate(needs_of(index, i, alive, definers, kept_definers)):
            prior = needed_by.get(target)
            if prior is None or (i, order) < prior[:2]:
                needed_by[target] = (i, order, rule, detail)
            if prior is None:
                heapq.heappush(heap, target)
    return [Removal(j, rule, needer, (detail,)) for j, (needer, _, rule, detail) in sorted(needed_by.items())]


class DependencyTracker:
    """The needs of every message kept so far, and so the restored set, kept up to date.

    When a message starts or stops being kept by passes 1-2, only the needs it can
    change are judged again: its own, those of its results, and those of the
    messages referring to a key it defines between it and the next kept definer.
    """

    def __init__(self, index: SessionIndex, config: PruneConfig, kept12: Callable[[int], bool]):
        self.index = index
        self.kept12 = kept12  # kept by passes 1-2
        self._view = _Kept12(kept12)
        self._kept_definers: dict[str, list[int]] = {}
        self._referrers: dict[str, list[int]] = {}  # key -> messages that refer to it
        self._results_of: dict[int, list[int]] = {}  # assistant index -> its results
        # active needer -> [(target, (needer, order, rule, detail))]
        self._needs: dict[int, list[tuple[int, tuple[int, int, str, str]]]] = {}
        self.restored: dict[int, set[tuple[int, int, str, str]]] = {}  # target -> needers' entries

    def restoration(self, j: int) -> Removal | None:
        needers = self.restored.get(j)
        if not needers:
            return None
        needer, _, rule, detail = min(needers)
        return Removal(j, rule, needer, (detail,))

    def advance(self, start: int, died: list[int], revived: list[int], changed: set[int]) -> bool:
        """Bring the needs up to date; returns whether the restored set changed."""
        index, kept12 = self.index, self.kept12
        n = len(index.messages)
        restored_changed = False
        recheck: set[int] = set()
        for j in revived:  # j is kept by passes 1-2 again
            for k in index.defines[j]:
                kept = self._kept_definers[k]
                hi = kept[0] if kept else n
                insort(kept, j)
                if j < hi:  # needers after j up to the old first kept definer now have one
                    refs = self._referrers.get(k, [])
                    recheck.update(refs[bisect_left(refs, j + 1): bisect_left(refs, hi + 1)])
            recheck.add(j)
            recheck.update(self._results_of.get(j, ()))
        for j in died:  # j was kept by passes 1-2 and no longer is
            for k in index.defines[j]:
                kept = self._kept_definers[k]
                was_first = kept[0] == j
                kept.remove(j)
                if was_first:  # needers after j up to the next kept definer lose it
                    hi = kept[0] if kept else n
                    refs = self._referrers.get(k, [])
                    recheck.update(refs[bisect_left(refs, j + 1): bisect_left(refs, hi + 1)])
            recheck.add(j)
            recheck.update(self._results_of.get(j, ()))
        for i in range(start, n):
            for k in index.defines[i]:
                kept = self._kept_definers.setdefault(k, [])
                if kept12(i):
                    insort(kept, i)
            for k in index.refs[i]:
                self._referrers.setdefault(k, []).append(i)
            owner = index.call_owner[i]
            if owner >= 0:
                self._results_of.setdefault(owner, []).append(i)
            recheck.add(i)
        definers, kept_definers, view = index.definers, self._kept_definers, self._view
        heap = sorted(recheck)
        while heap:
            i = heapq.heappop(heap)
            active = kept12(i) or i in self.restored
            old = self._needs.pop(i, [])
            new = [(t, (i, order, rule, detail)) for order, (t, rule, detail) in enumerate(
                needs_of(index, i, view, definers, kept_definers))] \
                if active and (index.refs[i] or index.call_owner[i] >= 0) else []
            if new:
                self._needs[i] = new
            for need in old:
                if need not in new:
                    target, entry = need
                    needers = self.restored[target]
                    needers.discard(entry)
                    changed.add(target)  # the earliest needer may have changed
                    if not needers:
                        del self.restored[target]
                        restored_changed = True
                        heapq.heappush(heap, target)  # its own needs go too
            for need in new:
                if need not in old:
                    target, entry = need
                    fresh = target not in self.restored
                    self.restored.setdefault(target, set()).add(entry)
                    changed.add(target)
                    if fresh:
                        restored_changed = True
                        heapq.heappush(heap, target)
        return restored_changed


class _Kept12:
    """``view[i]``: is message ``i`` kept by passes 1 and 2 (what ``needs_of`` reads)."""

    __slots__ = ("_fn",)

    def __init__(self, fn: Callable[[int], bool]):
        self._fn = fn

    def __getitem__(self, i: int) -> bool:
        return self._fn(i)


@register_rule("dependencies", stage="restored", tracker=DependencyTracker,
               emits={"dependency": Emits(short="dep"), "tool_pair": Emits(short="pair")},
               description="bring back, transitively, what a kept message needs: the definer of a key "
                           "it refers to (rule dependency) and the call its result answers (rule tool_pair)")
def _restore(index: SessionIndex, alive: Alive, config: PruneConfig) -> list[Removal]:
    return restore_dependencies(index, alive)


@explains("dependency")
def _explain_dependency(r: Removal, messages: Sequence[Message]) -> str:
    assert r.related is not None  # a restoration points at the message that needed it
    needer = messages[r.related]
    return f"defines {r.detail[0]}, which {needer.id} (turn {needer.turn}) refers to"


@explains("tool_pair")
def _explain_tool_pair(r: Removal, messages: Sequence[Message]) -> str:
    if r.detail and r.detail[0] == "dropped_with_results":
        return "only made tool calls whose results were removed, so the export drops it with them"
    assert r.related is not None  # the kept result that answers the call
    return f"makes the call {r.detail[0]} whose result {messages[r.related].id} is kept"
