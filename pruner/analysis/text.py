"""What a text is, for the rules: computed once per distinct text and kept by content.

``text_features(text)`` gives the normalised text (exact copies), the word 3-gram
shingles (near copies) and the ``DEFINE:``/``REF:`` markers (dependencies). The
results are cached by the text itself, so pruning a conversation again, or a longer
version of it, analyses only texts it has not seen. ``features_of(texts)`` computes
every missing one in one batch.

Shingles are 44-bit hashes of each run of three consecutive normalised words, built
from a 64-bit tabulation hash of each word's UTF-8 bytes (a fixed table, so the same on
every run and machine) mixed by position; 44 bits leave room for a 20-bit text number in
one 64-bit sort key (``pruner.analysis.near``). Two different 3-grams share a hash with
probability about 2^-44. Everything per word and per 3-gram is computed with array
operations over a whole batch of texts.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable

import numpy as np

# A key starts and ends with a letter, digit or underscore, so sentence punctuation
# after a marker ("... REF:fmt.") is not part of the key.
_KEY = r"[A-Za-z0-9_](?:[A-Za-z0-9_.:\-]*[A-Za-z0-9_])?"
# \b before the marker: "HREF:x" and "REDEFINE:x" are not markers.
MARKER_RE = re.compile(rf"\b(DEFINE|REF):({_KEY})")
_PUNCT_RE = re.compile(r"[^\w\s]|_")
SHINGLE_WORDS = 3
#: Texts with fewer words than this have no shingles: they are compared exactly only.
MIN_NEAR_DUPLICATE_WORDS = 8
SHINGLE_BITS = 44
_SHINGLE_MASK = (1 << SHINGLE_BITS) - 1
_EMPTY = np.empty(0, dtype=np.int64)


def normalise(text: str) -> str:
    """NFKC, case-folded, punctuation removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_PUNCT_RE.sub(" ", text).split())


def markers(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(defined keys, referenced keys)`` named by ``DEFINE:key`` / ``REF:key`` markers."""
    defines: list[str] = []
    refs: list[str] = []
    if "DEFINE:" in text or "REF:" in text:
        for kind, key in MARKER_RE.findall(text):
            (defines if kind == "DEFINE" else refs).append(key)
    return tuple(dict.fromkeys(defines)), tuple(dict.fromkeys(refs))


class TextFeatures:
    """The features of one distinct text (shared by every message that holds it)."""

    __slots__ = ("normalised", "shingles", "marker_defines", "marker_refs", "_set")

    def __init__(self, normalised: str, shingles: np.ndarray, marker_defines: tuple[str, ...],
                 marker_refs: tuple[str, ...]):
        self.normalised = normalised
        self.shingles = shingles  # sorted, distinct shingle hashes (int64); empty below 8 words
        self.marker_defines = marker_defines
        self.marker_refs = marker_refs
        self._set: frozenset[int] | None = None

    @property
    def shingle_set(self) -> frozenset[int]:
        if self._set is None:
            self._set = frozenset(self.shingles.tolist())
        return self._set


_FEATURES: dict[str, TextFeatures] = {}
_MAX_FEATURES = 1_000_000  # distinct texts; enough for a 500,000-message session
_MIX1 = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xC2B2AE3D27D4EB4F)
#: Tabulation hashing of words: a fixed table of random 64-bit values, one per (byte value,
#: position in the word mod 64); a word's hash XORs its bytes' values. Generated from a fixed
#: seed by numpy's PCG64, so every run and machine gets the same table.
_TABLE = np.random.Generator(np.random.PCG64(20_251_130)).integers(
    0, 2**63, size=(64, 256), dtype=np.int64).astype(np.uint64) * np.uint64(2) + np.uint64(1)
_BATCH_BYTES = 4 << 20  # normalised text hashed per batch (bounds the per-byte arrays)


def _normalise_words(text: str) -> str:
    # The same as normalise(): words are runs of word characters other than "_".
    return " ".join(_WORDS_RE.findall(unicodedata.normalize("NFKC", text).casefold()))


_WORDS_RE = re.compile(r"[^\W_]+")
# ASCII bytes: letters lower-cased, digits kept, everything else a space; bytes of
# non-ASCII characters (>= 0x80) kept, they are dealt with character by character.
_ASCII_WORDS = bytes(b if b >= 0x80 or chr(b).isalnum() else 0x20 for b in range(256)).lower()
_SEP = 0xFF  # never a byte of UTF-8: separates the texts of a batch
_MAX_REPLACEMENTS = 64  # distinct non-ASCII characters to replace in a batch (real text: a handful)


def normalise_many(texts: list[str]) -> list[str]:
    """``normalise`` of each text (the same strings), computed over the whole batch at once.

    After NFKC (per text), case folding and the word test are per character, so they are
    done on the batch's UTF-8 bytes: ASCII bytes through one translation table, each
    distinct non-ASCII character by one replacement (its case folding, with non-word
    characters made spaces), and the spaces collapsed with array operations. The
    replacements may be applied in any order because case folding is idempotent
    (``tests/unit/analysis/test_text_normalise.py`` checks it and the word test for every code point).
    """
    data = bytes([_SEP]).join(unicodedata.normalize("NFKC", t).encode("utf-8", "surrogatepass")
                              for t in texts).translate(_ASCII_WORDS)
    b = np.frombuffer(data, dtype=np.uint8)
    replace = []
    for char in _non_ascii_chars(b):
        folded = "".join(c if c.isalnum() else " " for c in char.casefold())
        if folded != char:
            replace.append((char.encode("utf-8", "surrogatepass"), folded.encode("utf-8", "surrogatepass")))
    if len(replace) > _MAX_REPLACEMENTS:  # each replacement reads the whole batch: text by text instead
        return [_normalise_words(t) for t in texts]
    for old, new in replace:
        data = data.replace(old, new)
    if replace:
        b = np.frombuffer(data, dtype=np.uint8)
    if not len(b):
        return [""] * len(texts)
    # Keep word bytes, separators and the first space after a word; then drop a space that
    # ends its text (before a separator, or at the end).
    word = (b != 0x20) & (b != _SEP)
    keep = ~word
    keep[0] = b[0] == _SEP
    keep[1:] &= (b[1:] == _SEP) | word[:-1]
    c = b[word | keep]
    drop = c == 0x20
    drop[:-1] &= c[1:] == _SEP
    text: str = c[~drop].tobytes().replace(bytes([_SEP]), b"\x00").decode("utf-8")
    return text.split("\x00")


def _non_ascii_chars(b: np.ndarray) -> list[str]:
    """The distinct non-ASCII characters in UTF-8 bytes ``b`` (with no ``_SEP`` inside a character)."""
    at = np.flatnonzero((b >= 0xC0) & (b != _SEP))
    if not len(at):
        return []
    padded = np.concatenate((b, np.zeros(3, dtype=np.uint8)))
    size = np.where(b[at] < 0xE0, 2, np.where(b[at] < 0xF0, 3, 4))
    key = padded[at].astype(np.uint32) << 24
    for k in (1, 2, 3):  # a character's bytes in one 32-bit key, zeros after its last byte
        key |= np.where(size > k, padded[at + k], 0).astype(np.uint32) << (24 - 8 * k)
    return [k.to_bytes(4, "big").rstrip(b"\x00").decode("utf-8", "surrogatepass")
            for k in np.unique(key).tolist()]


def _word_hashes(norms: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every word's hash, for all texts in order, and each text's number of words."""
    counts = np.fromiter((n.count(" ") + 1 if n else 0 for n in norms), dtype=np.int64, count=len(norms))
    parts = []
    batch: list[str] = []
    size = 0
    for n in norms:
        if len(n) > _BATCH_BYTES:  # a huge text: in pieces cut at spaces (words stay whole)
            parts.append(hash_words(batch))
            batch, size = [], 0
            pos = 0
            while pos < len(n):
                cut = len(n) if pos + _BATCH_BYTES >= len(n) else n.rfind(" ", pos, pos + _BATCH_BYTES)
                if cut <= pos:  # one word longer than a batch
                    cut = n.find(" ", pos + _BATCH_BYTES)
                    cut = len(n) if cut < 0 else cut
                parts.append(hash_words([n[pos:cut]]))
                pos = cut + 1
            continue
        batch.append(n)
        size += len(n)
        if size >= _BATCH_BYTES:
            parts.append(hash_words(batch))
            batch, size = [], 0
    parts.append(hash_words(batch))
    return np.concatenate(parts), counts


def hash_words(norms: list[str]) -> np.ndarray:
    """Hashes of the words of ``norms`` (single spaces between words), all in one go."""
    norms = [n for n in norms if n]
    if not norms:
        return np.empty(0, dtype=np.uint64)
    b = np.frombuffer(" ".join(norms).encode("utf-8"), dtype=np.uint8)
    spaces = np.flatnonzero(b == 0x20)  # exactly one between words: normalised text
    starts = np.concatenate(([0], spaces + 1))
    lengths = np.diff(np.append(starts, len(b) + 1)) - 1
    longest = int(lengths.max())
    if longest > _COLUMN_WORDS:
        h = _xor_bytes(b, starts, lengths)
    else:
        h = _xor_columns(b, starts, lengths, longest)
    h ^= lengths.astype(np.uint64) * _MIX2
    return h * _MIX1


_COLUMN_WORDS = 256  # words up to this long are hashed a byte position at a time


def _xor_columns(b: np.ndarray, starts: np.ndarray, lengths: np.ndarray, longest: int) -> np.ndarray:
    """The XOR of each word's table values, one byte position at a time over every word that
    long (words ordered longest first, so those are a prefix): no per-byte index arrays."""
    order = np.argsort(-lengths.astype(np.int16), kind="stable")
    first = starts[order]
    longer = np.searchsorted(-lengths[order], -np.arange(longest), side="left")  # words longer than k
    acc = np.zeros(len(order), dtype=np.uint64)
    for k, m in enumerate(longer.tolist()):
        acc[:m] ^= _TABLE[k & 63][b[first[:m] + k]]
    h = np.empty_like(acc)
    h[order] = acc
    return h


def _xor_bytes(b: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The XOR of each word's table values, with per-byte arrays (for batches with very long words)."""
    word = b != 0x20
    at = np.flatnonzero(word)
    # Each byte's position in its word: its index minus its word's start.
    pos = at - np.repeat(starts, lengths)
    values = _TABLE[pos & 63, b[at]]
    return np.bitwise_xor.reduceat(values, np.concatenate(([0], np.cumsum(lengths)[:-1])))


def _shingles_many(norms: list[str]) -> list[np.ndarray]:
    """Sorted distinct shingles of each normalised text, computed for all of them at once."""
    out: list[np.ndarray] = [_EMPTY] * len(norms)
    h, counts = _word_hashes(norms)
    if not len(h):
        return out
    # A 3-gram starting at word j is inside one text when its text has 2 more words after j,
    # and only texts of at least MIN_NEAR_DUPLICATE_WORDS words have shingles.
    text_of = np.repeat(np.arange(len(counts)), counts)[:-2]
    left = np.cumsum(counts)[text_of] - np.arange(len(text_of))  # words from j to its text's end
    inside = (left > 2) & (counts[text_of] >= MIN_NEAR_DUPLICATE_WORDS)
    mixed = (h[:-2] * _MIX1) ^ (h[1:-1] * _MIX2) ^ h[2:]
    mixed ^= mixed >> np.uint64(29)
    sh = (mixed[inside] & np.uint64(_SHINGLE_MASK)).astype(np.int64)
    owner = text_of[inside]
    if not len(owner):
        return out
    # One sort orders every text's shingles: text number in the high bits.
    keys = np.sort((owner.astype(np.int64) << SHINGLE_BITS) | sh)
    keep = np.ones(len(keys), dtype=bool)
    keep[1:] = keys[1:] != keys[:-1]
    keys = keys[keep]
    text_no = keys >> SHINGLE_BITS
    bounds = np.flatnonzero(np.concatenate(([True], text_no[1:] != text_no[:-1], [True])))
    values = keys & _SHINGLE_MASK
    for k, a, b in zip(text_no[bounds[:-1]].tolist(), bounds[:-1].tolist(), bounds[1:].tolist()):
        out[k] = values[a:b]
    return out


def features_of(texts: Iterable[str]) -> list[TextFeatures]:
    """The features of each text, computing every one not cached yet in one batch."""
    texts = texts if isinstance(texts, list) else list(texts)
    cache = _FEATURES
    missing = [t for t in dict.fromkeys(texts) if t not in cache]
    if missing:
        # In batches: the text number shares a 64-bit sort key with 44-bit shingles.
        for k in range(0, len(missing), 1 << 18):
            part = missing[k:k + (1 << 18)]
            norms = normalise_many(part)
            if len(cache) + len(part) > _MAX_FEATURES:
                cache.clear()  # a bounded cache: refilled on demand
            for t, n, sh in zip(part, norms, _shingles_many(norms)):
                d, r = markers(t)
                cache[t] = TextFeatures(n, sh, d, r)
        get = cache.get
        return [get(t) or text_features(t) for t in texts]
    return [cache[t] for t in texts]


def text_features(text: str) -> TextFeatures:
    f = _FEATURES.get(text)
    return f if f is not None else features_of([text])[0]


def containment(text: str, original: str) -> float:
    """Share of ``text``'s word 3-grams that also occur in ``original`` (0..1).

    This is the near-duplicate score: 1.0 for a sub-chunk or a copy with
    whitespace or case changed, a little less for another header or a changed word.
    Texts too short to have 3-grams score 1.0 only when they are equal after normalising.
    """
    a, b = text_features(text), text_features(original)
    if not len(a.shingles):
        return 1.0 if a.normalised == b.normalised else 0.0
    return len(a.shingle_set & b.shingle_set) / len(a.shingles)
