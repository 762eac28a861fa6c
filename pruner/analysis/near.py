"""Which texts of a session contain most of which others: the near-duplicate search.

A text ``t`` (its word 3-gram shingles ``S_t``) is *nearly contained* in ``v`` when
``|S_t & S_v| >= threshold * |S_t|``. Comparing every pair costs the square of the
session; this search costs at most ``HOLDERS`` look-ups per shingle of a text, however
long the session grows:

* texts are numbered in order of first appearance, and for each shingle only its first
  ``HOLDERS`` holders are looked up;
* ``t`` *finds* ``v`` when they share a shingle of which ``v`` is among those first
  holders; every found pair's exact overlap is known, so the threshold is exact.

A pair is missed only when every shingle the two texts share is held by at least
``HOLDERS`` texts that appeared before ``v``, which takes boilerplate repeated across
dozens of distinct texts (the README and ``tests/unit/analysis/test_near_duplicate_search.py`` state
the measured miss rate on templated inputs). The relation depends only on the texts
and their order, so building it at once (``build``) and text by text (``add``, for the
incremental pruner) give the same pairs.
"""

from __future__ import annotations

import math
from itertools import repeat
from typing import ItemsView, Iterable, Sequence, cast

import numpy as np

from .text import SHINGLE_BITS, TextFeatures

#: How many of a shingle's first holders are looked up.
HOLDERS = 32
#: Shingles chosen beyond the pigeonhole minimum when building at once: a container must then
#: hold more than one of them, which rules out most candidates before their overlap is counted.
_EXTRA = 2
_TEXT_BITS = 63 - SHINGLE_BITS  # text numbers share a sort key with shingles
_MAX_TEXTS = 1 << _TEXT_BITS


class NearRelation:
    """``containers[t]``: ``{v: shared}`` for every text ``v`` that nearly contains ``t``;
    ``contained[v]``: the texts ``v`` nearly contains (the reverse)."""

    def __init__(self, threshold: float):
        self.threshold = threshold
        self.texts: list[TextFeatures] = []
        self.containers: list[dict[int, int]] = []
        self.contained: list[list[int]] = []
        self._holders: _Holders | None = None  # first holders of each shingle, made on the first add()
        self._late: list[int] = []  # per text: its shingles of which it is a later holder than those looked up

    def __len__(self) -> int:
        return len(self.texts)

    # -- all at once --------------------------------------------------------------------------

    @classmethod
    def build(cls, texts: Sequence[TextFeatures], threshold: float) -> "NearRelation":
        """The relation over ``texts`` (in order of first appearance), computed with sorts."""
        rel = cls(threshold)
        if len(texts) >= _MAX_TEXTS:  # too many for one sort key: text by text
            rel.add(texts)
            return rel
        rel.texts = list(texts)
        n = len(texts)
        rel.containers = [{} for _ in range(n)]
        rel.contained = [[] for _ in range(n)]
        rel._late = [0] * n
        sizes = np.fromiter((len(f.shingles) for f in texts), dtype=np.int64, count=n)
        if n < 2 or not sizes.any():
            return rel
        tid = np.repeat(np.arange(n, dtype=np.int64), sizes)
        keys = np.sort((np.concatenate([f.shingles for f in texts]) << _TEXT_BITS) | tid)
        sh = keys >> _TEXT_BITS
        holder = keys & (_MAX_TEXTS - 1)
        starts = np.flatnonzero(np.concatenate(([True], sh[1:] != sh[:-1])))
        size = np.diff(np.append(starts, len(keys)))
        group = np.repeat(np.arange(len(starts)), size)
        gsize = size[group]
        rank = np.arange(len(keys)) - np.repeat(starts, size)
        late = np.bincount(holder[rank >= HOLDERS], minlength=n)
        rel._late = late.tolist()
        # A container of t must hold all but ``slack`` of t's shingles, so it holds at least
        # ``chosen - slack`` of any ``chosen`` of them (pigeonhole). Choosing t's rarest shingles
        # in uncrowded groups (every holder listed, so every holder is looked up) finds every
        # container of t with few candidates; each candidate's overlap is then counted exactly.
        kmin = np.ceil(threshold * sizes).astype(np.int64)
        slack = sizes - kmin
        want = slack + 1 + _EXTRA
        buckets = HOLDERS + 2
        hist = np.bincount(holder * buckets + np.minimum(gsize, HOLDERS + 1), minlength=n * buckets)
        cum = np.cumsum(hist.reshape(n, buckets), axis=1)
        uncrowded = cum[:, HOLDERS]
        enough = (uncrowded >= slack + 1) & (sizes > 0)
        limit = np.argmax(cum >= np.minimum(want, uncrowded)[:, None], axis=1)  # largest group size chosen
        need_hits = cum[np.arange(n), limit] - slack
        picked = np.flatnonzero(enough[holder] & (gsize <= limit[holder]) & (gsize >= 2))
        t, v = _pairs(holder, starts, group, picked, gsize[picked])
        keep = (v != t) & (sizes[v] >= threshold * sizes[t])
        pair, hits = np.unique((t[keep] << _TEXT_BITS) | v[keep], return_counts=True)
        pt, pv = pair >> _TEXT_BITS, pair & (_MAX_TEXTS - 1)
        sure = hits >= need_hits[pt]
        rel._count_exactly(pt[sure], pv[sure], sizes)
        # Texts with too few uncrowded shingles: every shingle looks up its first HOLDERS holders
        # (the search's definition), and a count that may have missed late holders is checked.
        rest = np.flatnonzero(~enough[holder])
        if len(rest):
            t, v = _pairs(holder, starts, group, rest, np.minimum(gsize[rest], HOLDERS))
            keep = (v != t) & (sizes[v] >= threshold * sizes[t])
            pair, hits = np.unique((t[keep] << _TEXT_BITS) | v[keep], return_counts=True)
            pt, pv = pair >> _TEXT_BITS, pair & (_MAX_TEXTS - 1)
            crowded = np.bincount(holder[gsize > HOLDERS], minlength=n)
            missed = np.minimum(crowded[pt], late[pv])
            maybe = hits + missed >= threshold * sizes[pt]
            rel._count_exactly(pt[maybe], pv[maybe], sizes)
        return rel

    def _count_exactly(self, ts: np.ndarray, vs: np.ndarray, sizes: np.ndarray) -> None:
        """Record each ``v`` that nearly contains ``t``, counting their overlap exactly."""
        texts, threshold = self.texts, self.threshold
        for a, b in zip(ts.tolist(), vs.tolist()):
            shared = len(texts[a].shingle_set & texts[b].shingle_set)
            if shared >= threshold * int(sizes[a]) and b not in self.containers[a]:
                self.containers[a][b] = shared
                self.contained[b].append(a)



    # -- text by text -------------------------------------------------------------------------

    def _holder_table(self) -> "_Holders":
        if self._holders is None:
            self._holders = _Holders.of(self.texts)
        return self._holders

    def add(self, texts: Sequence[TextFeatures]) -> None:
        """Append texts (in order of first appearance).

        Text by text, ``containers[x]`` holds the texts that appeared before ``x`` (all a walk
        judging ``x`` where it first appears can use); ``refresh(x)`` adds the later ones when
        ``x`` comes to be judged further on (``pruner.rules.duplicates``). So an append only
        looks up the new texts' shingles.
        """
        table = self._holder_table()
        for f in texts:
            x = len(self.texts)
            self.texts.append(f)
            self.containers.append({})
            self.contained.append([])
            size = len(f.shingles)
            if not size:
                self._late.append(0)
                continue
            slack = size - math.ceil(self.threshold * size)
            finds, crowded, exact = table.add(f.shingles, x, slack)
            self._late.append(crowded)
            if exact:  # candidates from the rarest shingles: count each one's overlap exactly
                self._contain_exactly(x, cast("list[int]", finds))  # exact: add() found candidates
            else:
                self._contain(x, cast("Iterable[tuple[int, int]]", finds), crowded)  # (holder, count) pairs

    def refresh(self, x: int) -> None:
        """Bring ``containers[x]`` up to date with every text so far (``x`` is judged later than
        where it first appeared, so texts that appeared after it can be its original)."""
        f = self.texts[x]
        if len(f.shingles):
            finds, crowded = self._holder_table().look_up(f.shingles, x)
            self._contain(x, finds, crowded)

    def _contain(self, x: int, finds: Iterable[tuple[int, int]], crowded: int) -> None:
        """Record every found ``v`` that nearly contains ``x``. A count can only have missed the
        shingles ``v`` holds later than the holders looked up (at most ``late[v]``, and at most
        ``x``'s shingles in crowded groups); only where that could matter is the overlap counted."""
        f = self.texts[x]
        need = self.threshold * len(f.shingles)
        mine, late = self.containers[x], self._late
        for v, c in finds:
            missed = min(crowded, late[v])
            if v != x and v not in mine and c + missed >= need:
                shared = c if not missed else len(f.shingle_set & self.texts[v].shingle_set)
                if shared >= need:
                    mine[v] = shared
                    self.contained[v].append(x)


    def _contain_exactly(self, x: int, candidates: Iterable[int]) -> None:
        """Record each candidate that nearly contains ``x``, counting the overlap exactly."""
        f, need = self.texts[x], self.threshold * len(self.texts[x].shingles)
        for v in candidates:
            shared = len(f.shingle_set & self.texts[v].shingle_set)
            if shared >= need:
                self.containers[x][v] = shared
                self.contained[v].append(x)


#: What ``_Holders.add`` found: candidate containers (exact), or (holder, count) pairs.
_Found = list[int] | ItemsView[int, int] | tuple[()]


class _Holders:
    """The first ``HOLDERS`` holders of every shingle. A text's shingles are mostly new, so
    those are entered in bulk (a dict update and a list extend, in C); only the shingles
    seen before are walked one by one."""

    def __init__(self) -> None:
        self.row: dict[int, int] = {}  # shingle -> its row in holders
        self.holders: list[int | list[int]] = []  # a lone holder, or the first HOLDERS holders

    @classmethod
    def of(cls, texts: Sequence[TextFeatures]) -> "_Holders":
        table = cls()
        for x, f in enumerate(texts):
            if len(f.shingles):
                table.add(f.shingles, x, -1)  # enter only: nothing to look up
        return table

    def add(self, shingles: np.ndarray, x: int, slack: int) -> tuple[_Found, int, bool]:
        """Enter text ``x``, which any text containing it holds all but ``slack`` shingles of.

        Returns ``(found, crowded, exact)``. Most shingles of a new text are new: when more than
        ``slack`` are, nothing before it can contain it and nothing is looked up. Otherwise, when
        it has enough shingles whose every holder is listed, the rarest of them name the
        candidates (``exact``: a container holds all but ``slack`` of those chosen). Else every
        shingle's first holders are counted (``found``: holder -> count). ``crowded``: its
        shingles whose first holders were all taken already."""
        keys = shingles.tolist()
        rows = list(map(self.row.get, keys, repeat(-1)))
        holders = self.holders
        known = [r for r in rows if r >= 0]
        fresh = len(keys) - len(known)
        groups = [holders[r] for r in known]
        sizes = [1 if isinstance(p, int) else len(p) for p in groups]
        crowded = sizes.count(HOLDERS)
        found: _Found | None = None
        exact = False
        if fresh <= slack:
            listed = fresh + len(known) - crowded  # shingles whose every holder is listed
            if listed > slack:
                exact = True
                want = slack + 1 + _EXTRA - fresh  # known shingles to choose beyond the new ones
                chosen = sorted((n, k) for k, n in enumerate(sizes) if n < HOLDERS)[:max(want, 0)]
                need = fresh + len(chosen) - slack  # hits a container must have among them
                hits: dict[int, int] = {}
                for _, k in chosen:
                    p = groups[k]
                    for v in ((p,) if isinstance(p, int) else p):
                        hits[v] = hits.get(v, 0) + 1
                found = [v for v, c in hits.items() if c >= need]
            else:
                hits = {}
                for p in groups:
                    for v in ((p,) if isinstance(p, int) else p):
                        hits[v] = hits.get(v, 0) + 1
                found = hits.items()
        for r, p, n in zip(known, groups, sizes):
            if isinstance(p, int):  # n == 1: a lone holder
                holders[r] = [p, x]
            elif n < HOLDERS:
                p.append(x)
        if fresh:
            first = len(holders)
            new = [k for k, r in zip(keys, rows) if r < 0]
            self.row.update(zip(new, range(first, first + len(new))))
            holders.extend(repeat(x, len(new)))
        return (found if found is not None else ()), crowded, exact

    def look_up(self, shingles: np.ndarray, x: int) -> tuple[ItemsView[int, int], int]:
        """``(finds, crowded)`` for text ``x``, already entered: the first holders of its shingles now."""
        holders, row = self.holders, self.row
        finds: dict[int, int] = {}
        crowded = 0
        for k in shingles.tolist():
            p = holders[row[k]]
            if isinstance(p, int):
                finds[p] = finds.get(p, 0) + 1
                continue
            for v in p:
                finds[v] = finds.get(v, 0) + 1
            if len(p) >= HOLDERS:  # later holders than these may exist
                crowded += 1
        finds.pop(x, None)
        return finds.items(), crowded


def _pairs(holder: np.ndarray, starts: np.ndarray, group: np.ndarray, entries: np.ndarray,
           looks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(t, v)`` for each entry (``t`` holds a shingle) and each of the first ``looks`` holders ``v``
    of that shingle."""
    total = int(looks.sum())
    first = np.cumsum(looks) - looks
    t = np.repeat(holder[entries], looks)
    v = holder[np.repeat(starts[group[entries]], looks) + (np.arange(total) - np.repeat(first, looks))]
    return t, v
