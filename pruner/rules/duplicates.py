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
    near = "near_duplicate" not in config.disabled_rules
    exact = "exact_duplicate" not in config.disabled_rules
    threshold = config.near_duplicate_threshold
    first: dict[str, int] = {}
    postings: dict[int, list[int]] = {}
    out: list[Removal] = []
    feats = index.features
    for i in _eligible(index, alive):
        f = feats[i]
        j = first.get(f.normalised) if exact else None
        if j is not None:
            out.append(Removal(i, "exact_duplicate", j))
            continue
        found = _near_original(f, feats, postings, threshold) if near and f.anchors else None
        if found is not None:
            out.append(Removal(i, "near_duplicate", found[0], (found[1],)))
            continue
        first.setdefault(f.normalised, i)
        for h in f.anchors:
            p = postings.setdefault(h, [])
            if len(p) < _COMMON_ANCHOR:
                p.append(i)
    return out


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
