"""Why the default near-duplicate threshold is 0.8.

Re-fetched chunks (another header, other whitespace, one or two changed words,
a sub-chunk) score well above 0.8; distinct chunks written from one template
(product sheets, policy sections that share boilerplate) score well below it.
The default sits in that gap with a margin on each side, and the README states the
measured scores; the tests fail if a margin shrinks or the README's figures go stale.
"""

from __future__ import annotations

import itertools
import re

from pruner import Message, PruneConfig, Session, prune
from pruner.analysis.index import containment
from pruner.engine.prune import DEFAULT_NEAR_DUPLICATE_THRESHOLD
from tests.support.docs import documentation_text

CHUNKS = [
    "Product sheet. The Alpine shell jacket weighs 420 grams, is rated to 20,000 millimetres of water "
    "column and packs into its own chest pocket. It comes in five sizes from XS to XL and in three "
    "colours: glacier blue, moss green and black. The fabric is a three layer recycled nylon with a "
    "fluorocarbon free finish. Price: 189 dollars. Warranty: two years.",
    "Product sheet. The Ridge insulated parka weighs 910 grams, is rated to 10,000 millimetres of water "
    "column and has a removable hood. It comes in four sizes from S to XL and in two colours: charcoal "
    "and rust. The fill is 600 cuin recycled down with a water repellent treatment. Price: 329 dollars. "
    "Warranty: lifetime against manufacturing defects.",
    "Returns policy. Items may be returned within 30 days of delivery for a full refund to the original "
    "payment method. Items must be unworn, with tags attached, in the original packaging. Return shipping "
    "is free for members and costs six dollars otherwise. Refunds are issued within five business days "
    "after the warehouse receives the parcel.",
    "Exchanges policy. Items may be exchanged within 60 days of delivery for another size or colour of "
    "the same product. Items must be unworn, with tags attached, in the original packaging. Exchange "
    "shipping is free for everyone. Exchanges are dispatched within two business days after the "
    "warehouse receives the parcel.",
    "Care guide. Wash the shell jacket cold on a gentle cycle with a technical detergent, close all "
    "zips first, and never use fabric softener because it clogs the membrane. Tumble dry on low heat "
    "for twenty minutes to restore the water repellent finish, or iron on a low setting through a towel.",
]


def variants(chunk: str) -> list[str]:
    words = chunk.split()
    one = list(words)
    one[len(one) // 2] = "CHANGED"
    two = list(one)
    two[len(two) // 3] = "ALTERED"
    return [
        "## Search result 3 (cached)\n" + chunk,                      # another header
        "\n\n".join(chunk.split(". ")),                               # other whitespace
        " ".join(one),                                                # one changed word
        " ".join(two),                                                # two changed words
        "### Excerpt\n" + " ".join(one),                              # header and a changed word
        " ".join(words[len(words) // 5: len(words) * 4 // 5]),        # a sub-chunk
        chunk.upper(),                                                # case
    ]


def test_the_default_threshold_sits_between_copies_and_distinct_texts():
    copies = [containment(v, c) for c in CHUNKS for v in variants(c)]
    distinct = [containment(a, b) for a, b in itertools.permutations(CHUNKS, 2)]
    assert max(distinct) < DEFAULT_NEAR_DUPLICATE_THRESHOLD <= min(copies)
    # and with margin on both sides, so small wording changes do not flip decisions
    assert min(copies) - DEFAULT_NEAR_DUPLICATE_THRESHOLD >= 0.04
    assert DEFAULT_NEAR_DUPLICATE_THRESHOLD - max(distinct) >= 0.2


def test_a_stricter_threshold_misses_real_copies():
    copies = [containment(v, c) for c in CHUNKS for v in variants(c)]
    assert any(score < 0.9 for score in copies), "0.9 would already miss some re-fetched chunks"


def test_the_pruner_applies_it_to_every_variant_and_to_no_distinct_chunk():
    messages = [Message(id="u1", role="user", content="find it")]
    messages += [Message(id=f"c{i}", role="retrieved_doc", content=c) for i, c in enumerate(CHUNKS)]
    messages += [Message(id=f"v{i}_{j}", role="retrieved_doc", content=v)
                 for i, c in enumerate(CHUNKS) for j, v in enumerate(variants(c))]
    result = prune(Session.of(messages), PruneConfig())
    by_id = {d.id: d for d in result.decisions}
    assert all(by_id[f"c{i}"].status == "kept" for i in range(len(CHUNKS)))
    for i, c in enumerate(CHUNKS):
        for j, _ in enumerate(variants(c)):
            d = by_id[f"v{i}_{j}"]
            assert d.status == "duplicate" and d.related == f"c{i}", (i, j, d)


def test_readme_states_the_measured_scores():
    """The README's "at 0.875 or above" and "at most 0.44" are the scores measured here (as rounded there)."""
    text = documentation_text()
    paragraph = text.split("Why the near-duplicate threshold is", 1)[1].split("\n\n", 1)[0]
    copies_floor = re.search(r"at\s+(0\.\d+)\s+or\s+above", paragraph)
    distinct_ceiling = re.search(r"score\s+at\s+most\s+(0\.\d+)", paragraph)
    assert copies_floor and distinct_ceiling, "the documentation no longer states the measured scores"
    copies = min(containment(v, c) for c in CHUNKS for v in variants(c))
    distinct = max(containment(a, b) for a, b in itertools.permutations(CHUNKS, 2))
    for stated, measured in ((copies_floor.group(1), copies), (distinct_ceiling.group(1), distinct)):
        assert float(stated) == round(measured, len(stated) - 2), (stated, measured)
    # and rounded the safe way: "or above" is not above the lowest copy, "at most" not below the highest
    assert float(copies_floor.group(1)) <= copies and float(distinct_ceiling.group(1)) >= distinct
