"""Dependency restoration: bring back what kept messages still need, transitively.

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
"""

from __future__ import annotations

import heapq
from bisect import bisect_left

from ..engine.index import SessionIndex
from . import Removal, explains


def restore_dependencies(index: SessionIndex, alive: list[bool]) -> list[Removal]:
    """Restorations, in position order; ``alive`` (what passes 1 and 2 kept) is not modified.

    Each need is judged against what passes 1 and 2 kept, never against other
    restorations, so the result does not depend on the order needs are met in,
    and appending messages never changes how earlier needs were met. A restored
    message's own needs count too (transitively); ``related`` is the earliest
    message that needed it.
    """
    msgs = index.messages
    definers: dict[str, list[int]] = {}
    for i, keys in enumerate(index.defines):
        for k in keys:
            definers.setdefault(k, []).append(i)
    kept_definers = {k: [i for i in v if alive[i]] for k, v in definers.items()}
    needed_by: dict[int, tuple[int, int, str, str]] = {}  # restored -> (earliest needer, order, rule, detail)
    heap = [i for i in range(len(msgs)) if alive[i] and (index.refs[i] or msgs[i].tool_call_id)]
    heapq.heapify(heap)
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


def needs_of(index: SessionIndex, i: int, alive, definers: dict[str, list[int]],
             kept_definers: dict[str, list[int]]):
    """The removed messages message ``i`` needs back: ``(index, rule, detail)`` triples."""
    m = index.messages[i]
    if m.tool_call_id is not None:
        site = index.call_site.get(m.tool_call_id)
        if site is not None and not alive[site[0]]:
            yield site[0], "tool_pair", m.tool_call_id
    for key in index.refs[i]:
        candidates = definers.get(key)
        if not candidates or candidates[0] > i:
            continue  # nothing defines it before this message
        kept = kept_definers[key]
        if kept and kept[0] < i:
            continue  # a message the passes kept already defines it before this one
        yield candidates[bisect_left(candidates, i) - 1], "dependency", key


@explains("dependency")
def _explain_dependency(r: Removal, messages) -> str:
    needer = messages[r.related]
    return f"defines {r.detail[0]}, which {needer.id} (turn {needer.turn}) refers to"


@explains("tool_pair")
def _explain_tool_pair(r: Removal, messages) -> str:
    if r.detail and r.detail[0] == "dropped_with_results":
        return "only made tool calls whose results were removed, so the export drops it with them"
    return f"makes the call {r.detail[0]} whose result {messages[r.related].id} is kept"
