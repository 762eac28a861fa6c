"""Duplicate context: retrieved documents and tool results that repeat an earlier kept one."""

from __future__ import annotations

from bisect import bisect_left, insort

from ..engine.index import MIN_DUPLICATE_CHARS, MIN_DUPLICATE_RESULT_CHARS, SessionIndex
from . import Removal, explains, register_rule

_ELIGIBLE_ROLES = frozenset({"tool", "retrieved_doc"})
#: An anchor already held by this many earlier originals is boilerplate: it does
#: not nominate candidates (that would make the search quadratic).
_COMMON_ANCHOR = 16
#: How many anchors of a text are looked up to nominate candidates.
_LOOKUPS = 6


def _eligible(index: SessionIndex, alive: list[bool]) -> list[int]:
    return [i for i in range(len(index.messages)) if alive[i] and is_candidate(index, i)]


def _what(m) -> str:
    kind = "document" if m.role == "retrieved_doc" else "tool result"
    return f"the {kind} at turn {m.turn} ({m.id})"


@explains("exact_duplicate")
def _explain_exact(r: Removal, messages) -> str:
    return f"repeats {_what(messages[r.related])}"


@explains("near_duplicate")
def _explain_near(r: Removal, messages) -> str:
    return f"{r.detail[0]:.0%} of its text already appears in {_what(messages[r.related])}"


@register_rule("duplicate_context", stage="duplicate",
               description="a document or tool result whose text repeats an earlier kept one: "
                           "exactly (ignoring case, Unicode form, punctuation and whitespace; rule "
                           "exact_duplicate) or nearly (at least the threshold share of its word "
                           "3-grams appear in it; rule near_duplicate)")
def remove_duplicates(index: SessionIndex, alive: list[bool], config) -> list[Removal]:
    """One walk in order: each text is compared with the originals kept before it.

    Exact and near copies are found in the same walk so that a removed copy
    always points at a message that stays.
    """
    walk = DuplicateWalk(index, config)
    out = []
    for i in _eligible(index, alive):
        r = walk.step(i)
        if r is not None:
            out.append(r)
    return out


def is_candidate(index: SessionIndex, i: int) -> bool:
    """Whether message ``i`` takes part in duplicate detection (when alive)."""
    m = index.messages[i]
    if m.tool_call_id is not None:
        return len(index.features[i].normalised) >= MIN_DUPLICATE_RESULT_CHARS
    return m.role in _ELIGIBLE_ROLES and len(index.features[i].normalised) >= MIN_DUPLICATE_CHARS


class DuplicateWalk:
    """The originals kept so far, by normalised text and by anchor, in position order.

    ``judge(i)`` looks only at originals before ``i``, so a message can be judged
    again after an earlier original came or went: the incremental pruner does
    that, and the in-order walk is the special case where every original is earlier.
    """

    def __init__(self, index: SessionIndex, config):
        self.index = index
        self.near = "near_duplicate" not in config.disabled_rules
        self.exact = "exact_duplicate" not in config.disabled_rules
        self.threshold = config.near_duplicate_threshold
        self.by_text: dict[str, list[int]] = {}  # normalised text -> originals, in order
        self.postings: dict[int, list[int]] = {}  # anchor -> originals holding it, in order

    def judge(self, i: int) -> Removal | None:
        """Message ``i``'s verdict against the originals before it (``None``: an original)."""
        f = self.index.features[i]
        if self.exact:
            same = self.by_text.get(f.normalised)
            if same and same[0] < i:
                return Removal(i, "exact_duplicate", same[0])
        if self.near and f.anchors:
            found = _near_original(i, f, self.index.features, self.postings, self.threshold)
            if found is not None:
                return Removal(i, "near_duplicate", found[0], (found[1],))
        return None

    def step(self, i: int) -> Removal | None:
        """Judge ``i`` and, if it is an original, register it."""
        r = self.judge(i)
        if r is None:
            self.register(i)
        return r

    def register(self, i: int) -> None:
        f = self.index.features[i]
        _add(self.by_text, f.normalised, i)
        if self.near:
            get = self.postings.get
            for h in f.anchors:  # _add, inlined: this loop is the walk's hottest
                p = get(h)
                if p is None:
                    self.postings[h] = [i]
                elif not p or p[-1] < i:
                    p.append(i)
                else:
                    insort(p, i)

    def unregister(self, i: int) -> None:
        f = self.index.features[i]
        self.by_text[f.normalised].remove(i)
        if self.near:
            for h in f.anchors:
                self.postings[h].remove(i)

    def affected_by(self, i: int, h: int, *, leaving: bool) -> int | None:
        """The last position whose lookup of anchor ``h`` changes when original ``i``
        comes (or, with ``leaving``, goes); ``None``: every later position may change."""
        p = self.postings.get(h, [])
        limit = _COMMON_ANCHOR if leaving else _COMMON_ANCHOR - 1
        return p[limit] if len(p) > limit else None


def _add(lists: dict, key, i: int) -> None:
    """Insert ``i`` into the sorted list at ``key`` (an append in the in-order walk)."""
    p = lists.get(key)
    if p is None:
        lists[key] = [i]
    elif not p or p[-1] < i:
        p.append(i)
    else:
        insort(p, i)


def _near_original(i: int, f, feats, postings: dict[int, list[int]],
                   threshold: float) -> tuple[int, float] | None:
    """The earliest original before ``i`` that contains ``threshold`` of ``f``'s 3-grams, and the share.

    An original that contains at least 80% of the text also holds about as many
    of its anchors, so it holds at least two of the first ``_LOOKUPS`` (in hash
    order, which is unrelated to the content) unless it misses nearly all of
    them: those few lookups nominate the candidates, and the exact 3-gram count
    decides. (If the original held exactly 80% of the anchors, two hits out of
    six would be missed about 0.2% of the time.) An anchor that
    ``_COMMON_ANCHOR`` earlier originals hold is boilerplate and nominates nobody.
    """
    hits: dict[int, int] = {}
    usable = 0
    for h in f.anchors[:_LOOKUPS]:
        p = postings.get(h)
        before = bisect_left(p, i) if p else 0
        if before < _COMMON_ANCHOR:
            usable += 1
            for k in range(before):
                j = p[k]
                hits[j] = hits.get(j, 0) + 1
    if not hits:
        return None
    need_hits = 2 if usable >= 2 else 1
    size = len(f.shingles)
    need = threshold * size
    mine = f.shingles
    for j in sorted(j for j, c in hits.items() if c >= need_hits):
        shared = len(mine & feats[j].shingles)
        if shared >= need:
            return j, shared / size
    return None
