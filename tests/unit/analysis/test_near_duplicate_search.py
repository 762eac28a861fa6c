"""The near-duplicate search (pruner.analysis.near): exact on what it finds, the same built at once
and text by text, and measured against exact containment on templated documents made to defeat it."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

import pytest
from pruner.bench.near_search import adversarial_session, judge, measure_misses
from pruner.analysis.near import HOLDERS, NearRelation
from pruner.analysis.text import features_of

_WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]


def _texts(draw_words):
    return [" ".join(w) for w in draw_words]


texts_strategy = st.lists(st.lists(st.sampled_from(_WORDS), min_size=0, max_size=40), min_size=1, max_size=25)


def _exact(texts, threshold):
    feats = features_of(texts)
    unique = list(dict.fromkeys(f.normalised for f in feats))
    by_norm = {f.normalised: f for f in feats}
    fs = [by_norm[n] for n in unique]
    out = []
    for a in fs:
        row = {}
        for j, b in enumerate(fs):
            if b is not a and len(a.shingles):
                shared = len(a.shingle_set & b.shingle_set)
                if shared >= threshold * len(a.shingles):
                    row[j] = shared
        out.append(row)
    return fs, out


@given(texts_strategy, st.sampled_from([0.5, 0.8, 1.0]))
def test_the_relation_is_exact_containment_while_no_shingle_has_more_holders_than_are_looked_up(words, threshold):
    fs, expected = _exact(_texts(words), threshold)
    assert len(fs) <= HOLDERS  # so every holder of every shingle is looked up
    assert NearRelation.build(fs, threshold).containers == expected


@given(texts_strategy, st.integers(1, 5), st.sampled_from([0.5, 0.8]))
def test_built_at_once_and_text_by_text_give_the_same_relation(words, step, threshold):
    fs = list({f.normalised: f for f in features_of(_texts(words))}.values())
    built = NearRelation.build(fs, threshold)
    grown = NearRelation(threshold)
    for k in range(0, len(fs), step):
        grown.add(fs[k:k + step])
    # Text by text, each text knows the containers that appeared before it ...
    assert all(grown.containers[x] == {v: c for v, c in built.containers[x].items() if v < x} for x in range(len(fs)))
    # ... and refresh() adds the later ones.
    for x in range(len(fs)):
        grown.refresh(x)
    assert grown.containers == built.containers
    assert sorted(map(sorted, grown.contained)) == sorted(map(sorted, built.contained))


def test_the_same_when_shingles_have_more_holders_than_are_looked_up():
    # 80 texts sharing a boilerplate sentence: its shingles have 80 holders, more than HOLDERS.
    rnd = random.Random(7)
    texts = [f"boilerplate sentence shared by every text here {rnd.choice(_WORDS)} {k} {rnd.choice(_WORDS)} "
             f"{' '.join(rnd.choices(_WORDS, k=8))}" for k in range(80)]
    fs = list({f.normalised: f for f in features_of(texts)}.values())
    assert len(fs) > HOLDERS
    built = NearRelation.build(fs, 0.8)
    grown = NearRelation(0.8)
    for f in fs:
        grown.add([f])
    for x in range(len(fs)):
        grown.refresh(x)
    assert grown.containers == built.containers


def test_the_issue_case_a_copy_of_one_of_20_templated_documents_is_never_kept():
    # Issue 13: main's anchor sampling kept a 99.2% copy in 2 of 300 seeds with 20 templated documents.
    kept = 0
    for seed in range(300):
        for v in judge(adversarial_session(seed, 20, 3)):
            kept += v["expected"] is not None and v["decided"] is None
    assert kept == 0


@pytest.mark.slow
def test_no_copy_above_0_9_containment_is_missed_among_templated_documents():
    r = measure_misses(seeds=range(3), documents=(200, 1000), copies=60)
    assert r["copies"] > 100 and r["missed_above_0.9"] == 0, r


@given(st.lists(st.lists(st.sampled_from(["ab", "cd", "ef"]), min_size=8, max_size=30), min_size=40, max_size=70),
       st.lists(st.lists(st.sampled_from(["ab", "cd"]), min_size=8, max_size=30), min_size=40, max_size=70),
       st.sampled_from([0.5, 0.8]))
@pytest.mark.slow
def test_the_same_when_most_shingles_are_crowded(three, two, threshold):
    # Two or three words make only 8 or 27 different 3-grams, held by dozens of texts: building at
    # once falls back to looking up every shingle's first holders for most texts, and must agree.
    words = three + two
    fs = list({f.normalised: f for f in features_of(_texts(words))}.values())
    built = NearRelation.build(fs, threshold)
    grown = NearRelation(threshold)
    for f in fs:
        grown.add([f])
    for x in range(len(fs)):
        grown.refresh(x)
    assert grown.containers == built.containers
