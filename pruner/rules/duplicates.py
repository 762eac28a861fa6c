"""Duplicate context: retrieved documents and tool results that repeat an earlier kept one."""

from __future__ import annotations

from ..analysis import MIN_DUPLICATE_CHARS, SessionIndex
from . import Removal, explains, register_rule

_ELIGIBLE_ROLES = frozenset({"tool", "retrieved_doc"})
#: An anchor already held by this many earlier originals is boilerplate: it does
#: not nominate candidates (that would make the search quadratic). Only the
#: first ``_COMMON_ANCHOR`` originals are recorded per anchor.
_COMMON_ANCHOR = 16
#: How many anchors of a text are looked up to nominate candidates.
_LOOKUPS = 6


def _eligible(index: SessionIndex, alive: list[bool]) -> list[int]:
    return [i for i, m in enumerate(index.messages)
            if alive[i] and (m.role in _ELIGIBLE_ROLES or m.tool_call_id is not None)
            and len(index.features[i].normalised) >= MIN_DUPLICATE_CHARS]


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
    return (m.role in _ELIGIBLE_ROLES or m.tool_call_id is not None) and \
        len(index.features[i].normalised) >= MIN_DUPLICATE_CHARS


class DuplicateWalk:
    """The state of the in-order walk: the originals kept so far and their anchors."""

    def __init__(self, index: SessionIndex, config):
        self.index = index
        self.near = "near_duplicate" not in config.disabled_rules
        self.exact = "exact_duplicate" not in config.disabled_rules
        self.threshold = config.near_duplicate_threshold
        self.first: dict[str, int] = {}  # normalised text -> its original
        self.postings: dict[int, list[int]] = {}  # anchor -> the first originals holding it

    def step(self, i: int) -> Removal | None:
        """Judge message ``i`` (after every earlier one); register it if it is an original."""
        f = self.index.features[i]
        j = self.first.get(f.normalised) if self.exact else None
        if j is not None:
            return Removal(i, "exact_duplicate", j)
        if self.near and f.anchors:
            found = _near_original(f, self.index.features, self.postings, self.threshold)
            if found is not None:
                return Removal(i, "near_duplicate", found[0], (found[1],))
        self.first.setdefault(f.normalised, i)
        postings = self.postings
        for h in f.anchors:
            p = postings.get(h)
            if p is None:
                postings[h] = [i]
            elif len(p) < _COMMON_ANCHOR:
                p.append(i)
        return None

    def withdraw(self, i: int) -> bool:
        """Take original ``i`` out, as if it had never been one.

        Returns False when that cannot be done exactly (an anchor of ``i`` had
        reached the boilerplate limit, so later texts were judged without it);
        the caller then has to walk again.
        """
        f = self.index.features[i]
        for h in f.anchors:
            p = self.postings.get(h)
            if p is not None and i in p and len(p) >= _COMMON_ANCHOR:
                return False
        if self.first.get(f.normalised) == i:
            del self.first[f.normalised]
        for h in f.anchors:
            p = self.postings.get(h)
            if p is not None and i in p:
                p.remove(i)
        return True


def _near_original(f, feats, postings: dict[int, list[int]], threshold: float) -> tuple[int, float] | None:
    """The earliest kept original that contains ``threshold`` of ``f``'s 3-grams, and the share.

    An original that contains at least 80% of the text also holds about as many
    of its anchors, so it holds at least two of the first ``_LOOKUPS`` (in hash
    order, which is unrelated to the content) unless it misses nearly all of
    them: those few lookups nominate the candidates, and the exact 3-gram count
    decides. (If the original held exactly 80% of the anchors, two hits out of
    six would be missed about 0.2% of the time.)
    """
    anchors = f.anchors
    hits: dict[int, int] = {}
    usable = 0
    for h in anchors[:_LOOKUPS]:
        p = postings.get(h)
        if p is None:
            usable += 1
        elif len(p) < _COMMON_ANCHOR:
            usable += 1
            for j in p:
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
