"""Duplicate context: retrieved documents and tool results that repeat an earlier kept one."""

from __future__ import annotations

from ..analysis import MIN_DUPLICATE_CHARS, SessionIndex
from . import Removal, explains, register_rule

_ELIGIBLE_ROLES = frozenset({"tool", "retrieved_doc"})
#: An anchor shared by more earlier texts than this is boilerplate: it is not
#: used to find candidates (it would make the search quadratic), and the exact
#: check on every candidate still decides.
_COMMON_ANCHOR = 64


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

    An original that contains most of the text also holds most of its anchors,
    so it appears in the postings of at least one of any ``len(anchors) // 2 + 1``
    of them: those few lookups find every candidate, and the exact 3-gram
    count decides.
    """
    anchors = f.anchors
    candidates: set[int] = set()
    for h in anchors[: len(anchors) // 2 + 1]:
        p = postings.get(h)
        if p is not None and len(p) < _COMMON_ANCHOR:
            candidates.update(p)
    if not candidates:
        return None
    size = len(f.shingles)
    need = threshold * size
    mine = f.shingles
    for j in sorted(candidates):
        shared = len(mine & feats[j].shingles)
        if shared >= need:
            return j, shared / size
    return None
