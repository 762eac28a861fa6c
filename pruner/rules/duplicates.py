"""Duplicate context: retrieved documents and tool results that repeat an earlier kept one."""

from __future__ import annotations

from ..analysis import MIN_DUPLICATE_CHARS, SessionIndex
from . import Removal, register_rule

_ELIGIBLE_ROLES = frozenset({"tool", "retrieved_doc"})
#: An anchor shared by more earlier texts than this is boilerplate: it is not
#: used to find candidates (it would make the search quadratic), and the exact
#: check on every candidate still decides.
_COMMON_ANCHOR = 64


def _eligible(index: SessionIndex, alive: list[bool]) -> list[int]:
    return [i for i, m in enumerate(index.messages)
            if alive[i] and (m.role in _ELIGIBLE_ROLES or m.tool_call_id is not None)
            and len(index.features[i].normalised) >= MIN_DUPLICATE_CHARS]


def _what(index: SessionIndex, j: int) -> str:
    m = index.messages[j]
    kind = "document" if m.role == "retrieved_doc" else "tool result"
    return f"the {kind} at turn {m.turn} ({m.id})"


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
            out.append(Removal(i, "exact_duplicate", f"repeats {_what(index, j)}", j))
            continue
        original = _near_original(f, feats, postings, threshold) if near and f.anchors else None
        if original is not None:
            share = len(f.shingles & feats[original].shingles) / len(f.shingles)
            out.append(Removal(i, "near_duplicate",
                               f"{share:.0%} of its text already appears in {_what(index, original)}", original))
            continue
        first.setdefault(f.normalised, i)
        for h in f.anchors:
            p = postings.setdefault(h, [])
            if len(p) < _COMMON_ANCHOR:
                p.append(i)
    return out


def _near_original(f, feats, postings: dict[int, list[int]], threshold: float) -> int | None:
    counts: dict[int, int] = {}
    for h in f.anchors:
        p = postings.get(h)
        if p is not None and len(p) < _COMMON_ANCHOR:
            for j in p:
                counts[j] = counts.get(j, 0) + 1
    if not counts:
        return None
    need = max(1, len(f.anchors) // 2)
    size = len(f.shingles)
    for j in sorted(j for j, c in counts.items() if c >= need):
        if len(f.shingles & feats[j].shingles) >= threshold * size:
            return j
    return None
