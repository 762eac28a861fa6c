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
        self._holders: dict[int, list[int]] | None = {}  # shingle -> first HOLDERS holders

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
        rel._holders = None  # made on the first add(), from the texts
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
        other = v != t
        pair, hits = np.unique((t[other] << _TEXT_BITS) | v[other], return_counts=True)
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

    def _holders_so_far(self) -> dict[int, list[int]]:
        if self._holders is None:
            holders: dict[int, list[int]] = {}
            for k, f in enumerate(self.texts):
                for h in f.shingles.tolist():
                    p = holders.get(h)
                    if p is None:
                        holders[h] = [k]
                    elif len(p) < HOLDERS:
                        p.append(k)
            self._holders = holders
        return self._holders

    def add(self, texts: Sequence[TextFeatures]) -> list[int]:
        """Append texts (in order); returns the earlier texts that gained a container."""
        holders = self._holders_so_far()
        threshold = self.threshold
        gained: list[int] = []
        for f in texts:
            x = len(self.texts)
            self.texts.append(f)
            self.containers.append({})
            self.contained.append([])
            size = len(f.shingles)
            if not size:
                continue
            finds: dict[int, int] = {}  # v -> shingles of x for which v is among the first holders
            found_by: dict[int, int] = {}  # t -> shared shingles for which x is among the first holders
            crowded = 0  # shingles of x whose first holders were already all taken
            get = holders.get
            for h in f.shingles.tolist():
                p = get(h)
                if p is None:
                    holders[h] = [x]
                    continue
                for v in p:
                    finds[v] = finds.get(v, 0) + 1
                if len(p) < HOLDERS:
                    for t in p:
                        found_by[t] = found_by.get(t, 0) + 1
                    p.append(x)
                else:
                    crowded += 1
            for v, c in finds.items():  # does v nearly contain x?
                if c + crowded >= threshold * size:
                    shared = c if not crowded else len(f.shingle_set & self.texts[v].shingle_set)
                    if shared >= threshold * size:
                        self.containers[x][v] = shared
                        self.contained[v].append(x)
            for t, c in found_by.items():  # does x nearly contain t?
                t_size = len(self.texts[t].shingles)
                if c + crowded >= threshold * t_size:
                    shared = (finds[t] if not crowded else len(f.shingle_set & self.texts[t].shingle_set))
                    if shared >= threshold * t_size:
                        self.containers[t][x] = shared
                        self.contained[x].append(t)
                        gained.append(t)
        return gained
