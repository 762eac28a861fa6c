"""What a text is, for the rules: computed once per distinct text and kept by content.

``text_features(text)`` gives the normalised text (exact copies), the word 3-gram
shingles (near copies) and the ``DEFINE:``/``REF:`` markers (dependencies). The
results are cached by the text itself, so pruning a conversation again, or a longer
version of it, analyses only texts it has not seen. ``features_of(texts)`` computes
every missing one in one batch.

Shingles are 44-bit hashes of each run of three consecutive normalised words, built
from a 64-bit hash of each word (two CRCs of its UTF-8 bytes, so the same on every run
and machine) mixed by position; 44 bits leave room for a 20-bit text number in one
64-bit sort key (``pruner.engine.near``). Two different 3-grams share a hash with
probability 2^-44.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from typing import Iterable, Sequence

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


_WORD_HASH: dict[str, int] = {}
_FEATURES: dict[str, TextFeatures] = {}
_MAX_FEATURES = 1_000_000  # distinct texts; enough for a 500,000-message session
_MAX_WORDS = 2_000_000
_MIX1 = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xC2B2AE3D27D4EB4F)


def _word_hash(word: str) -> int:
    h = _WORD_HASH.get(word)
    if h is None:
        b = word.encode("utf-8")
        h = zlib.crc32(b) | (zlib.adler32(b) << 32)
        if len(_WORD_HASH) >= _MAX_WORDS:
            _WORD_HASH.clear()
        _WORD_HASH[word] = h
    return h


def _shingles_many(word_lists: Sequence[list[str]]) -> list[np.ndarray]:
    """Sorted distinct shingles of each word list, computed for all of them at once."""
    out: list[np.ndarray] = [_EMPTY] * len(word_lists)
    todo = [k for k, w in enumerate(word_lists) if len(w) >= MIN_NEAR_DUPLICATE_WORDS]
    if not todo:
        return out
    get = _WORD_HASH.get
    hashes: list[int] = []
    for k in todo:
        hashes.extend([get(w) or _word_hash(w) for w in word_lists[k]])
    h = np.array(hashes, dtype=np.uint64)
    sizes = np.array([len(word_lists[k]) for k in todo])
    ends = np.cumsum(sizes)
    # A 3-gram starting at word j is inside one text when j + 2 < that text's end.
    starts = np.arange(len(h) - 2)
    text_of = np.searchsorted(ends, starts, side="right")
    inside = starts + 2 < ends[text_of]
    mixed = (h[:-2] * _MIX1) ^ (h[1:-1] * _MIX2) ^ h[2:]
    mixed ^= mixed >> np.uint64(29)
    sh = (mixed[inside] & np.uint64(_SHINGLE_MASK)).astype(np.int64)
    owner = text_of[inside]
    # One sort orders every text's shingles: text number in the high bits.
    keys = np.sort((owner.astype(np.int64) << SHINGLE_BITS) | sh)
    keep = np.ones(len(keys), dtype=bool)
    keep[1:] = keys[1:] != keys[:-1]
    keys = keys[keep]
    bounds = np.searchsorted(keys >> SHINGLE_BITS, np.arange(len(todo) + 1))
    values = keys & _SHINGLE_MASK
    for n, k in enumerate(todo):
        out[k] = values[bounds[n]:bounds[n + 1]]
    return out


def features_of(texts: Iterable[str]) -> list[TextFeatures]:
    """The features of each text, computing every one not cached yet in one batch."""
    texts = texts if isinstance(texts, list) else list(texts)
    cache = _FEATURES
    missing = [t for t in dict.fromkeys(texts) if t not in cache]
    if missing:
        norms = [normalise(t) for t in missing]
        word_lists = [n.split() for n in norms]
        if len(cache) + len(missing) > _MAX_FEATURES:
            cache.clear()  # a bounded cache: refilled on demand
        for t, n, sh in zip(missing, norms, _shingles_many(word_lists)):
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
