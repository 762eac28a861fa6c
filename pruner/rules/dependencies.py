"""Dependency restoration: bring back what kept messages still need, transitively.

Two kinds of need:

* ``dependency``: a kept message refers to a key (``refs`` field or a
  ``REF:key`` marker) and no alive message before it defines that key. The
  definer restored is the latest one before the referencing message: the value
  the conversation had when the reference was made. A key defined only later
  is not something the message can depend on.
* ``tool_pair``: a kept tool result needs the assistant message that made its
  call. (The other direction, a kept call whose result was removed, is met at
  export with a placeholder naming the newer result, so restoring it would undo
  the pruning for nothing.)
"""

from __future__ import annotations

import heapq
from bisect import bisect_left

from ..analysis import SessionIndex
from . import Removal, explains


def restore_dependencies(index: SessionIndex, alive: list[bool]) -> list[Removal]:
    """Restorations, in the order they were made; ``alive`` is not modified.

    Needs are met in position order (a heap), so what a message needs is
    settled before anything after it is looked at: appending messages never
    changes how earlier needs were met.
    """
    alive = list(alive)
    msgs = index.messages
    definers: dict[str, list[int]] = {}
    for i, keys in enumerate(index.defines):
        for k in keys:
            definers.setdefault(k, []).append(i)
    call_site = index.call_site
    restored: list[Removal] = []
    heap = [i for i in range(len(msgs)) if alive[i] and (index.refs[i] or msgs[i].tool_call_id)]
    heapq.heapify(heap)
    seen: set[int] = set()

    def bring_back(j: int, rule: str, detail: str, needed_by: int) -> None:
        alive[j] = True
        restored.append(Removal(j, rule, needed_by, (detail,)))
        heapq.heappush(heap, j)

    while heap:
        i = heapq.heappop(heap)
        if i in seen:
            continue
        seen.add(i)
        m = msgs[i]
        if m.tool_call_id is not None:
            site = call_site.get(m.tool_call_id)
            if site is not None and not alive[site[0]]:
                bring_back(site[0], "tool_pair", m.tool_call_id, i)
        for key in index.refs[i]:
            candidates = definers.get(key)
            if not candidates:
                continue
            before = bisect_left(candidates, i)
            if before == 0 or any(alive[j] for j in candidates[:before]):
                continue  # defined only later, or an alive message before it defines it
            bring_back(candidates[before - 1], "dependency", key, i)
    return restored


@explains("dependency")
def _explain_dependency(r: Removal, messages) -> str:
    needer = messages[r.related]
    return f"defines {r.detail[0]}, which {needer.id} (turn {needer.turn}) refers to"


@explains("tool_pair")
def _explain_tool_pair(r: Removal, messages) -> str:
    if r.detail and r.detail[0] == "dropped_with_results":
        return "only made tool calls whose results were removed, so the export drops it with them"
    return f"makes the call {r.detail[0]} whose result {messages[r.related].id} is kept"
