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
dozens of distinct texts (the README and ``tests/test_near_duplicate_search.py`` state
the measured miss rate on templated inputs). The relation depends only on the texts
and their order, so building it at once (``build``) and text by text (``add``, for the
incremental pruner) give the same pairs.
"""

from __future__ import annotations

from itertools import repeat
from typing import Sequence

import numpy as np

from .text import SHINGLE_BITS, TextFeatures

#: How many of a shingle's first holders are looked up.
HOLDERS = 32
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
        # Each entry (t holds shingle h) looks up the first HOLDERS holders of h.
        looks = np.minimum(size, HOLDERS)[group]
        looks[size[group] < 2] = 0
        total = int(looks.sum())
        if not total:
            return rel
        first = np.cumsum(looks) - looks
        t = np.repeat(holder, looks)
        v = holder[np.repeat(starts[group], looks) + (np.arange(total) - np.repeat(first, looks))]
        # v can only nearly contain t when it has at least threshold * |S_t| shingles at all.
        keep = (v != t) & (sizes[v] >= threshold * sizes[t])
        pair, hits = np.unique((t[keep] << _TEXT_BITS) | v[keep], return_counts=True)
        # Shingles of t held by more than HOLDERS texts: there, v may be a holder not looked up.
        crowded = np.bincount(holder[size[group] > HOLDERS], minlength=n)
        pt, pv = pair >> _TEXT_BITS, pair & (_MAX_TEXTS - 1)
        need = threshold * sizes[pt]
        maybe = hits + crowded[pt] >= need
        for a, b, c in zip(pt[maybe].tolist(), pv[maybe].tolist(), hits[maybe].tolist()):
            shared = c if not crowded[a] else len(texts[a].shingle_set & texts[b].shingle_set)
            if shared >= threshold * int(sizes[a]):
                rel.containers[a][b] = shared
                rel.contained[b].append(a)
        return rel

    # -- text by text -------------------------------------------------------------------------

    def _holder_table(self) -> "_Holders":
        if self._holders is None:
            self._holders = _Holders.of(self.texts)
        return self._holders

    def add(self, texts: Sequence[TextFeatures]) -> None:
        """Append texts (in order of first appearance)."""
        table = self._holder_table()
        threshold = self.threshold
        for f in texts:
            x = len(self.texts)
            self.texts.append(f)
            self.containers.append({})
            self.contained.append([])
            size = len(f.shingles)
            if not size:
                continue
            finds, found_by, crowded = table.add(f.shingles, x)
            for v, c in finds:  # does v nearly contain x?
                if c + crowded >= threshold * size:
                    shared = c if not crowded else len(f.shingle_set & self.texts[v].shingle_set)
                    if shared >= threshold * size:
                        self.containers[x][v] = shared
                        self.contained[v].append(x)
            for t, c in found_by:  # does x nearly contain t?
                t_size = len(self.texts[t].shingles)
                if c + crowded >= threshold * t_size:
                    shared = len(f.shingle_set & self.texts[t].shingle_set) if crowded else c
                    if shared >= threshold * t_size:
                        self.containers[t][x] = shared
                        self.contained[x].append(t)


class _Holders:
    """The first ``HOLDERS`` holders of every shingle. A text's shingles are mostly new, so
    those are entered in bulk (a dict update and a list extend, in C); only the shingles
    seen before are walked one by one."""

    def __init__(self):
        self.row: dict[int, int] = {}  # shingle -> its row in holders
        self.holders: list[int | list[int]] = []  # a lone holder, or the first HOLDERS holders

    @classmethod
    def of(cls, texts: Sequence[TextFeatures]) -> "_Holders":
        table = cls()
        for x, f in enumerate(texts):
            if len(f.shingles):
                table.add(f.shingles, x)
        return table

    def add(self, shingles: np.ndarray, x: int):
        """Enter text ``x``; returns ``(finds, found_by, crowded)``: the texts among the first
        holders of its shingles with how many each, the texts that hold a shingle of which ``x``
        is among the first holders with how many, and how many of its shingles had all their
        first holders already."""
        keys = shingles.tolist()
        rows = list(map(self.row.get, keys, repeat(-1)))
        holders = self.holders
        finds: dict[int, int] = {}
        found_by: dict[int, int] = {}
        crowded = 0
        fresh = None
        for k, r in zip(keys, rows):
            if r < 0:
                if fresh is None:
                    fresh = []
                fresh.append(k)
                continue
            p = holders[r]
            if type(p) is int:  # one holder so far (most shingles): no list until a second one
                finds[p] = finds.get(p, 0) + 1
                found_by[p] = found_by.get(p, 0) + 1
                holders[r] = [p, x]
                continue
            for v in p:
                finds[v] = finds.get(v, 0) + 1
            if len(p) < HOLDERS:
                for t in p:
                    found_by[t] = found_by.get(t, 0) + 1
                p.append(x)
            else:
                crowded += 1
        if fresh:
            first = len(holders)
            self.row.update(zip(fresh, range(first, first + len(fresh))))
            holders.extend(repeat(x, len(fresh)))
        return finds.items(), found_by.items(), crowded


def _counted(values: np.ndarray):
    """``(value, how many times)`` pairs."""
    if not len(values):
        return ()
    u, c = np.unique(values, return_counts=True)
    return zip(u.tolist(), c.tolist())
