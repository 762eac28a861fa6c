"""Duplicate context (pass 2): documents and tool results that repeat an earlier kept one.

Texts are compared by their normalised form (exact copies) and by their word 3-grams
(near copies, ``pruner.analysis.near``). One walk in position order judges each text at
its first appearance among the messages pass 1 kept: a copy of the earliest *original*
(a text not itself a copy) that nearly contains it, or an original. Every later
appearance of a text repeats that verdict: an exact copy of the original, or the same
near copy. So a removed copy always points at a message that stays.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any, Sequence

from ..analysis.index import SessionIndex
from ..model import Message
from . import Alive, Emits, Removal, explains, register_rule

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.near import NearRelation
    from ..analysis.config import PruneConfig


def _what(m: Message) -> str:
    kind = "document" if m.role == "retrieved_doc" else "tool result"
    return f"the {kind} at turn {m.turn} ({m.id})"


@explains("exact_duplicate")
def _explain_exact(r: Removal, messages: Sequence[Message]) -> str:
    assert r.related is not None  # a copy points at its original
    return f"repeats {_what(messages[r.related])}"


@explains("near_duplicate")
def _explain_near(r: Removal, messages: Sequence[Message]) -> str:
    assert r.related is not None  # a copy points at its original
    return f"{r.detail[0]:.0%} of its text already appears in {_what(messages[r.related])}"


def _original_for(containers: dict[int, int], first: dict[int, int], copy_of: dict[int, Any],
                  before: int) -> tuple[int, int, int] | None:
    """The earliest original (position, text, shared) before ``before`` among ``containers``
    (``first``: where each text first appears; ``copy_of``: the texts that are copies)."""
    best: tuple[int, int, int] | None = None
    for v, shared in containers.items():
        q = first.get(v)
        if q is not None and q < before and v not in copy_of and (best is None or q < best[0]):
            best = (q, v, shared)
    return best


class DuplicateTracker:
    """The walk carried from append to append: per text, where it first appears among the
    messages pass 1 keeps, and whether it is an original or the copy of which original.

    When pass 1 removes a text's first appearance, the text is judged again at its next
    one; when a text stops or starts being an original (or moves), the texts it nearly
    contains are judged again, in order of their first appearance, so each is judged
    after everything before it has settled.
    """

    def __init__(self, index: SessionIndex, config: PruneConfig, gone: bytearray):
        self.index = index
        self.threshold = config.near_duplicate_threshold
        self.gone = gone  # gone[i]: pass 1 removed message i
        self._occ: dict[int, list[int]] = {}  # text -> positions pass 1 keeps, in order
        self._copy_of: dict[int, tuple[int, int]] = {}  # text -> (original text, shared) for near copies
        self._judged_at: dict[int, int] = {}  # text -> the position its verdict was made at
        self._start = 0  # the first new message of the current append

    def is_copy(self, i: int) -> bool:
        """Message ``i`` (kept by pass 1) is removed as a copy."""
        t = self.index.text_no[i]
        return t >= 0 and (self._occ[t][0] != i or t in self._copy_of)

    def removal(self, i: int) -> Removal | None:
        t = self.index.text_no[i]
        if t < 0 or self.gone[i]:
            return None
        occ = self._occ[t]
        c = self._copy_of.get(t)
        if c is None:
            return None if occ[0] == i else Removal(i, "exact_duplicate", occ[0])
        v, shared = c
        return Removal(i, "near_duplicate", self._occ[v][0], (shared / len(self.index.texts[t].shingles),))

    def advance(self, start: int, left: list[int], changed: set[int]) -> tuple[list[int], list[int]]:
        """Messages ``left`` (earlier ones) were removed by pass 1 in this append; messages from
        ``start`` on are new. Returns the earlier positions that stopped (``died``) and started
        (``revived``) being kept by passes 1-2, and adds to ``changed`` every message whose
        verdict may have changed."""
        occ, text_no = self._occ, self.index.text_no
        rel = self.index.near(self.threshold)
        self._start = start
        died: list[int] = []
        revived: list[int] = []
        heap: list[tuple[int, int]] = []
        for j in left:
            t = text_no[j]
            if t < 0:
                continue
            positions = occ[t]
            if positions[0] == j:
                if self._judged_at.get(t) == j and t not in self._copy_of:
                    died.append(j)  # it was an original here: kept by passes 1-2 until now
                positions.pop(0)
                if positions:
                    heapq.heappush(heap, (positions[0], t))
                else:
                    del occ[t]
                    self._copy_of.pop(t, None)
                    self._judged_at.pop(t, None)
                self._push_contained(rel, t, j, heap)
            else:
                positions.remove(j)
        while heap:  # earlier texts first, so every verdict reads settled ones
            p, u = heapq.heappop(heap)
            waiting = occ.get(u)
            if waiting and waiting[0] == p:
                self._judge(rel, u, changed, died, revived, heap)
        for i in range(start, len(text_no)):
            t = text_no[i]
            if t < 0 or self.gone[i]:
                continue
            positions = occ.setdefault(t, [])
            positions.append(i)
            changed.add(i)
            if len(positions) == 1:  # the text appears (again): judge it here
                self._judge(rel, t, changed, died, revived, heap)
        return died, revived

    def _push_contained(self, rel: NearRelation, t: int, after: int, heap: list[tuple[int, int]]) -> None:
        occ = self._occ
        for u in rel.contained[t]:
            p = occ.get(u)
            if p and p[0] > after:
                heapq.heappush(heap, (p[0], u))

    def _judge(self, rel: NearRelation, t: int, changed: set[int], died: list[int], revived: list[int],
               heap: list[tuple[int, int]]) -> None:
        occ, copy_of = self._occ, self._copy_of
        positions = occ[t]
        p = positions[0]
        if p > self.index.text_first[t]:  # judged after texts that appeared later than it did
            rel.refresh(t)
        best = None
        for v, shared in rel.containers[t].items():
            o = occ.get(v)
            if o is not None and o[0] < p and v not in copy_of and (best is None or o[0] < best[0]):
                best = (o[0], v, shared)
        was_original_here = self._judged_at.get(t) == p and t not in copy_of
        was_judged_here = self._judged_at.get(t) == p
        self._judged_at[t] = p
        if best is None:
            copy_of.pop(t, None)
        else:
            copy_of[t] = (best[1], best[2])
        changed.update(positions)
        original = best is None
        if was_judged_here and was_original_here == original:
            return  # the same verdict at the same place: nothing it contains can change
        if was_original_here and not original:
            died.append(p)
        elif original and not was_original_here and p < self._start:
            revived.append(p)
        self._push_contained(rel, t, p, heap)

@register_rule("duplicate_context", stage="duplicate", tracker=DuplicateTracker,
               removes_again=lambda index, i, kept: True,  # the walk before a copy is unchanged
               emits={"exact_duplicate": Emits(short="exact", placeholder="[same as the result{where}]"),
                      "near_duplicate": Emits(short="near",
                                               placeholder="[{share} of this text appears in the result{where}]")},
               description="a document or tool result whose text repeats an earlier kept one: "
                           "exactly (ignoring case, Unicode form, punctuation and whitespace; rule "
                           "exact_duplicate) or nearly (at least the threshold share of its word "
                           "3-grams appear in it; rule near_duplicate)")
def remove_duplicates(index: SessionIndex, alive: Alive, config: PruneConfig) -> list[Removal]:
    """One walk in position order over the duplicate candidates pass 1 kept."""
    exact = "exact_duplicate" not in config.disabled_rules
    near = "near_duplicate" not in config.disabled_rules
    threshold = config.near_duplicate_threshold
    containers = index.near(threshold).containers if near else None
    texts = index.texts
    first: dict[int, int] = {}  # text -> its first position here
    copy_of: dict[int, tuple[int, float]] = {}  # text -> (original's position, share) for near copies
    out: list[Removal] = []
    text_no = index.text_no
    # Removals made as tuples directly: the named tuple's generated __new__ is a Python call,
    # a large share of this walk when thousands of candidates repeat.
    new, add = tuple.__new__, out.append
    for i in index.candidates:
        if not alive[i]:
            continue
        t = text_no[i]
        p = first.get(t)
        if p is not None:  # the text appeared before: the same verdict
            c = copy_of.get(t)
            if c is not None:
                add(new(Removal, (i, "near_duplicate", c[0], (c[1],))))
            elif exact:
                add(new(Removal, (i, "exact_duplicate", p, ())))
            elif near:  # exact copies off: an original contains all of it
                add(new(Removal, (i, "near_duplicate", p, (1.0,))))
            continue
        first[t] = i
        if containers is not None and containers[t]:  # None: near duplicates are off
            best = _original_for(containers[t], first, copy_of, i)
            if best is not None:
                share = best[2] / len(texts[t].shingles)
                copy_of[t] = (best[0], share)
                add(new(Removal, (i, "near_duplicate", best[0], (share,))))
    return out
