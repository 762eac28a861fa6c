"""How often does the near-duplicate search miss a copy? Measured against exact containment.

The search (``pruner.analysis.near``) looks up only the first ``HOLDERS`` holders of each
shingle, so it can miss a copy whose every shared 3-gram is boilerplate held by many
earlier texts. This module builds sessions made to provoke that: many distinct documents
written from one template (shared sentences, different values, optional sentences), then
near copies of earlier ones (another header, other whitespace, changed words, a dropped
sentence, a sub-chunk, case), interleaved with more templated documents. For every copy the
pruner judged, it works out the exact answer: the earliest original (a document the pruner
kept) before it that contains at least the threshold share of its 3-grams, by comparing
with every one. A *miss* is a copy the pruner kept although such an original exists; its
containment (the best original's share) says how clear a copy it was.

>>> r = measure_misses(seeds=range(2), documents=(12,), copies=6)
>>> r["judged"] > 0 and r["missed_above_0.9"] == 0
True
"""

from __future__ import annotations

import random
from typing import Any, Iterable

from ..analysis.near import HOLDERS
from ..engine.prune import DEFAULT_NEAR_DUPLICATE_THRESHOLD, prune
from ..analysis.text import text_features
from ..model import Message, Session

_PRODUCTS = ["jacket", "parka", "vest", "boot", "tent", "stove", "pack", "lamp", "glove", "sleeping bag"]
_COLOURS = ["glacier blue", "moss green", "black", "rust", "charcoal", "sand", "red", "olive", "grey", "white"]
_MATERIALS = ["recycled nylon", "merino wool", "polyester fleece", "waxed cotton", "ripstop", "down", "canvas"]
_FEATURES = ["a removable hood", "taped seams", "two chest pockets", "a two way zip", "pit vents", "a stuff sack",
             "reflective trim", "a drop hem", "adjustable cuffs", "a hanging loop", "a helmet compatible hood"]


def _document(rnd: random.Random, k: int) -> str:
    """One distinct document from the template: shared sentences, values from small pools (so that,
    with enough documents, every 3-gram a value is part of is held by dozens of earlier documents
    too), and optional parts."""
    product, colour, material = rnd.choice(_PRODUCTS), rnd.choice(_COLOURS), rnd.choice(_MATERIALS)
    features = rnd.sample(_FEATURES, 3)
    sentences = [
        f"Product sheet. The {colour} {product} model {rnd.choice('ABCDEFGH')}{rnd.randint(1, 9)} weighs "
        f"{100 * rnd.randint(2, 20)} grams and is made of {material}.",
        f"It comes in {rnd.randint(2, 7)} sizes and ships within {rnd.randint(1, 9)} business days of the order.",
        f"Its features are {features[0]}, {features[1]} and {features[2]}.",
        "Returns are accepted within thirty days of delivery when the item is unworn and the tags are attached.",
        "Care: wash cold on a gentle cycle, never use fabric softener, and dry on low heat.",
        f"The price is {10 * rnd.randint(2, 40)} dollars and the warranty lasts {rnd.randint(1, 5)} years.",
        f"Reviewers rate it {rnd.randint(1, 5)} out of 5 for warmth and {rnd.randint(1, 5)} out of 5 for fit.",
    ]
    optional = [s for s in sentences[3:5] if rnd.random() < 0.7]  # boilerplate some sheets leave out
    return " ".join(sentences[:3] + optional + sentences[5:])


def _copy(rnd: random.Random, text: str) -> str:
    """A near copy: one or two of the edits a re-fetch makes."""
    words = text.split()
    kind = rnd.choice(["header", "whitespace", "word", "words", "sentence", "subchunk", "case", "header+word"])
    if kind in ("word", "words", "header+word"):
        for _ in range(1 if kind != "words" else 2):
            words[rnd.randrange(len(words))] = rnd.choice(["CHANGED", "updated", "revised", "n/a"])
    if kind == "sentence":
        sentences = " ".join(words).split(". ")
        del sentences[rnd.randrange(len(sentences))]
        return ". ".join(sentences)
    if kind == "subchunk":
        a = rnd.randrange(len(words) // 5 + 1)
        return " ".join(words[a: a + max(10, len(words) * 3 // 5)])
    out = " ".join(words)
    if kind == "whitespace":
        out = "\n\n".join(out.split(". "))
    if kind == "case":
        out = out.upper()
    if kind.startswith("header"):
        out = f"## Search result {rnd.randint(1, 9)} (cached)\n" + out
    return out


def adversarial_session(seed: int, documents: int, copies: int) -> Session:
    """``documents`` templated documents, then ``copies`` near copies of earlier ones mixed with more."""
    rnd = random.Random(seed)
    sources = [_document(rnd, k) for k in range(documents)]
    texts = list(sources)
    for k in range(copies):
        if rnd.random() < 0.75:
            texts.append(_copy(rnd, rnd.choice(sources)))
        else:
            sources.append(_document(rnd, documents + k))
            texts.append(sources[-1])
    msgs = [Message(id="u1", role="user", content="find the product sheets")]
    msgs += [Message(id=f"d{k}", role="retrieved_doc", content=t) for k, t in enumerate(texts)]
    return Session.of(msgs, name=f"adversarial-{seed}-{documents}")


def _containment(a: str, b: str) -> float:
    fa, fb = text_features(a), text_features(b)
    return len(fa.shingle_set & fb.shingle_set) / len(fa.shingles) if len(fa.shingles) else 0.0


def judge(session: Session, threshold: float = DEFAULT_NEAR_DUPLICATE_THRESHOLD) -> list[dict[str, Any]]:
    """For every document the pruner judged at its first appearance: what it decided and the exact answer."""
    result = prune(session)
    decisions = {d.id: d for d in result.decisions}
    originals: list[Message] = []
    seen: set[str] = set()
    out = []
    for m in session.messages:
        if m.role != "retrieved_doc":
            continue
        norm = text_features(m.content).normalised
        d = decisions[m.id]
        if norm in seen or d.rule == "exact_duplicate":
            seen.add(norm)
            continue
        seen.add(norm)
        shares = [(_containment(m.content, o.content), o.id) for o in originals]
        qualifying = [oid for share, oid in shares if share >= threshold]
        best = max((share for share, _ in shares), default=0.0)
        out.append({"id": m.id, "decided": d.related if d.rule == "near_duplicate" else None,
                    "expected": qualifying[0] if qualifying else None, "best_share": best})
        if d.status == "kept":
            originals.append(m)
    return out


def measure_misses(*, seeds: Iterable[int] = range(100), documents: Iterable[int] = (20, 200, 1000),
                   copies: int = 60, threshold: float = DEFAULT_NEAR_DUPLICATE_THRESHOLD) -> dict[str, Any]:
    """Misses of the search against exact containment, over every seed and document count."""
    judged = copies_found = 0
    missed: list[float] = []
    wrong = 0
    for n in documents:
        for seed in seeds:
            for v in judge(adversarial_session(seed, n, copies), threshold):
                judged += 1
                if v["expected"] is None:
                    wrong += v["decided"] is not None
                    continue
                copies_found += v["decided"] is not None
                if v["decided"] is None:
                    missed.append(v["best_share"])
                elif v["decided"] != v["expected"]:
                    wrong += 1
    return {"judged": judged, "copies": copies_found + len(missed), "missed": len(missed),
            "missed_above_0.9": sum(1 for s in missed if s > 0.9),
            "missed_shares": sorted(round(s, 3) for s in missed), "wrong_original": wrong,
            "holders": HOLDERS, "threshold": threshold, "documents": list(documents),
            "seeds": len(list(seeds)), "copies_per_session": copies}
