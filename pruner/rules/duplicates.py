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


@register_rule("exact_duplicate", stage="duplicate",
               description="same text as an earlier kept document or tool result, ignoring case, "
                           "Unicode form, punctuation and whitespace")
def remove_exact_duplicates(index: SessionIndex, alive: list[bool], config) -> list[Removal]:
    first: dict[str, int] = {}
    out: list[Removal] = []
    for i in _eligible(index, alive):
        norm = index.features[i].normalised
        j = first.get(norm)
        if j is None:
            first[norm] = i
        else:
            out.append(Removal(i, "exact_duplicate", f"repeats {_what(index, j)}", j))
    return out


@register_rule("near_duplicate", stage="duplicate",
               description="at least the threshold share of its word 3-grams already appear in one "
                           "earlier kept document or tool result")
def remove_near_duplicates(index: SessionIndex, alive: list[bool], config) -> list[Removal]:
    threshold = config.near_duplicate_threshold
    postings: dict[int, list[int]] = {}
    out: list[Removal] = []
    feats = index.features
    for i in _eligible(index, alive):
        f = feats[i]
        if not f.anchors:
            continue
        counts: dict[int, int] = {}
        for h in f.anchors:
            p = postings.get(h)
            if p is not None and len(p) < _COMMON_ANCHOR:
                for j in p:
                    counts[j] = counts.get(j, 0) + 1
        original = None
        if counts:
            need = max(1, len(f.anchors) // 2)
            size = len(f.shingles)
            for j in sorted(j for j, c in counts.items() if c >= need):
                if len(f.shingles & feats[j].shingles) >= threshold * size:
                    original = j
                    break
        if original is None:
            for h in f.anchors:
                p = postings.setdefault(h, [])
                if len(p) < _COMMON_ANCHOR:
                    p.append(i)
        else:
            share = len(f.shingles & feats[original].shingles) / len(f.shingles)
            out.append(Removal(i, "near_duplicate",
                               f"{share:.0%} of its text already appears in {_what(index, original)}", original))
    return out
