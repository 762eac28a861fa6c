"""The batch normaliser (``normalise_many``, bytes and arrays) gives exactly what the
per-text definition (NFKC, case folding, runs of word characters other than "_") gives."""

from __future__ import annotations

import sys

from hypothesis import given
from hypothesis import strategies as st

import pytest
from pruner.analysis.text import normalise, normalise_many

# Characters whose case folding, NFKC or word test is unusual: final sigma, sharp s, dotted I,
# Kelvin sign, ligatures, lone surrogates, combining marks, circled digits, full-width letters.
_TRICKY = "ΣςßİKﬁ\ud800\udfff\U0001f600\U0010ffffé\u0301②Ａ·—_'\t\n\x00\x1f\x7f\x85\xa0\u2028"
texts = st.text(alphabet=st.one_of(st.characters(), st.sampled_from(list(_TRICKY + "aZ9 .,"))), max_size=40)


@given(st.lists(texts, min_size=1, max_size=8))
def test_batch_normalise_equals_per_text_definition(batch):
    assert normalise_many(batch) == [normalise(t) for t in batch]


@pytest.mark.slow
def test_batch_normalise_on_every_code_point():
    # Each code point between letters (its word test and case folding decide the result), a
    # block of them per text.
    points = [chr(i) for i in range(sys.maxunicode + 1)]
    batch = ["".join(c + "b" for c in points[k:k + 32]) for k in range(0, len(points), 32)]
    for k in range(0, len(batch), 2):  # two texts a batch: few enough characters to replace at once
        assert normalise_many(batch[k:k + 2]) == [normalise(t) for t in batch[k:k + 2]]
    assert normalise_many(batch) == [normalise(t) for t in batch]


def test_case_folding_is_idempotent_so_replacements_commute():
    # normalise_many replaces each distinct non-ASCII character by its folding, one after
    # another: that is only order-free if folding a folded character changes nothing.
    for i in range(sys.maxunicode + 1):
        for c in chr(i).casefold():
            assert c.casefold() == c, hex(i)


def test_empty_texts_and_batches_of_empty_texts():
    assert normalise_many([""]) == [""]
    assert normalise_many(["", " ", "...", "a"]) == ["", "", "", "a"]
    assert normalise_many(["  Hello,   WORLD!  ", "x_y"]) == ["hello world", "x y"]


def _hash_by_bytes(norms):
    import numpy as np

    from pruner.analysis import text
    b = np.frombuffer(" ".join(norms).encode("utf-8"), dtype=np.uint8)
    starts = np.concatenate(([0], np.flatnonzero(b == 0x20) + 1))
    lengths = np.diff(np.append(starts, len(b) + 1)) - 1
    return (text._xor_bytes(b, starts, lengths) ^ lengths.astype(np.uint64) * text._MIX2) * text._MIX1


words = st.text(alphabet=st.sampled_from(list("abz09éß漢\U0001f600")), min_size=1, max_size=12)
long_words = st.text(alphabet=st.sampled_from(list("ab漢")), min_size=60, max_size=300)


@given(st.lists(st.lists(st.one_of(words, words, words, long_words), min_size=1, max_size=8), min_size=1, max_size=5))
def test_word_hashes_by_position_equal_hashes_by_byte(texts):
    from pruner.analysis.text import hash_words
    norms = [" ".join(w) for w in texts]
    assert hash_words(norms).tolist() == _hash_by_bytes(norms).tolist()
