"""What the pruning rules need to know about a session, computed once per prune.

Content-derived features (normalised text, shingles, ``DEFINE:``/``REF:``
markers) are cached per distinct content string, so re-pruning a growing
conversation only analyses the messages it has not seen.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from dataclasses import dataclass
from typing import Sequence

from .fileops import READ, FileTools, file_operations, is_partial_read
from ..model import Message, ToolCall

# A key starts and ends with a letter, digit or underscore, so sentence punctuation
# after a marker ("... REF:fmt.") is not part of the key.
_KEY = r"[A-Za-z0-9_](?:[A-Za-z0-9_.:\-]*[A-Za-z0-9_])?"
# \b before the marker: "HREF:x" and "REDEFINE:x" are not markers.
MARKER_RE = re.compile(rf"\b(DEFINE|REF):({_KEY})")
_PUNCT_RE = re.compile(r"[^\w\s]|_")
SHINGLE_WORDS = 3
#: Documents shorter than this (normalised) are never treated as duplicates:
#: there is too little text for a copy to matter.
MIN_DUPLICATE_CHARS = 32
#: A tool result removed as a copy is still answered at export by a placeholder
#: ("[same as the result at turn 12 (id m40)]", about 14 tokens), so shorter
#: results than this would cost more as a placeholder than they save.
MIN_DUPLICATE_RESULT_CHARS = 80
#: Texts with fewer words than this are compared exactly only, never as near-duplicates.
MIN_NEAR_DUPLICATE_WORDS = 8


#: A shingle is an anchor when its hash is divisible by this. Anchors are chosen
#: by content, so a passage copied into another text brings its anchors along;
#: indexing only anchors keeps near-duplicate search linear.
ANCHOR_MODULUS = 4


@dataclass(frozen=True)
class ContentFeatures:
    normalised: str
    shingles: frozenset[int]
    anchors: tuple[int, ...]  # sorted, the content-defined sample of ``shingles``
    marker_defines: tuple[str, ...]
    marker_refs: tuple[str, ...]


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


def shingles(normalised_text: str) -> frozenset[int]:
    """Hashes of the word 3-grams (CRC-32, so the same on every run and machine)."""
    words = normalised_text.split()
    if len(words) < MIN_NEAR_DUPLICATE_WORDS:
        return frozenset()
    return frozenset(zlib.crc32(" ".join(words[i:i + SHINGLE_WORDS]).encode())
                     for i in range(len(words) - SHINGLE_WORDS + 1))


def _anchors(sh: frozenset[int]) -> tuple[int, ...]:
    # The two smallest hashes join the sample so short texts (which may have no
    # hash divisible by the modulus) still find their near-identical copies.
    ordered = sorted(sh)
    return tuple(sorted(set(ordered[:2]) | {h for h in ordered if h % ANCHOR_MODULUS == 0}))


def containment(text: str, original: str) -> float:
    """Share of ``text``'s word 3-grams that also occur in ``original`` (0..1).

    This is the near-duplicate score: 1.0 for a sub-chunk or a copy with
    whitespace or case changed, a little less for another header or a changed word.
    Texts too short to have 3-grams score 1.0 only when they are equal after normalising.
    """
    a, b = content_features(text), content_features(original)
    if not a.shingles:
        return 1.0 if a.normalised == b.normalised else 0.0
    return len(a.shingles & b.shingles) / len(a.shingles)


_FEATURES: dict[str, ContentFeatures] = {}
_MAX_FEATURES = 1_000_000  # distinct texts; enough for a 500,000-message session


def content_features(text: str) -> ContentFeatures:
    f = _FEATURES.get(text)
    if f is None:
        norm = normalise(text)
        d, r = markers(text)
        sh = shingles(norm)
        f = ContentFeatures(norm, sh, _anchors(sh), d, r)
        if len(_FEATURES) >= _MAX_FEATURES:
            _FEATURES.clear()
        _FEATURES[text] = f
    return f


@dataclass(frozen=True)
class FileAccess:
    op: str  # read | write | edit
    path: str
    partial: bool


class SessionIndex:
    """Positions and links of a message list, read by every rule.

    Append-only: ``extend`` analyses new messages without touching the old ones,
    which is what lets the incremental pruner carry it from turn to turn.
    """

    def __init__(self, file_tools: FileTools):
        self.file_tools = file_tools
        self.messages: list[Message] = []
        self.features: list[ContentFeatures] = []
        self.call_site: dict[str, tuple[int, ToolCall]] = {}  # call id -> (assistant index, call)
        self.result_key: list[str | None] = []  # supersession key of each tool result
        self.file_access: list[tuple[FileAccess, ...]] = []  # what each result's call did to files
        self.defines: list[tuple[str, ...]] = []
        self.refs: list[tuple[str, ...]] = []
        self.last_turn = 0

    def extend(self, messages: Sequence[Message]) -> None:
        cache_get = _FEATURES.get
        file_tools = self.file_tools
        for m in messages:
            i = len(self.messages)
            self.messages.append(m)
            f = cache_get(m.content) or content_features(m.content)
            self.features.append(f)
            if m.turn > self.last_turn:
                self.last_turn = m.turn
            d: tuple[str, ...] = ()
            r: tuple[str, ...] = ()
            if m.defines or f.marker_defines:
                d = tuple(dict.fromkeys(m.defines + f.marker_defines))
            if m.refs or f.marker_refs:
                r = tuple(k for k in dict.fromkeys(m.refs + f.marker_refs) if k not in d)
            self.defines.append(d)
            self.refs.append(r)
            for c in m.tool_calls:
                self.call_site[c.id] = (i, c)
            key = None
            access: tuple[FileAccess, ...] = ()
            cid = m.tool_call_id
            if cid is not None:
                site = self.call_site.get(cid)
                call = site[1] if site else None
                key = m.tool_call_key or (call.call_key() if call else None)
                if call is not None and call.name:
                    access = tuple(FileAccess(op, path, op == READ and is_partial_read(call, file_tools))
                                   for op, path in file_operations(call, file_tools))
            elif m.tool_call_key:
                key = m.tool_call_key
            self.result_key.append(key)
            self.file_access.append(access)


def build_index(messages: Sequence[Message], file_tools: FileTools) -> SessionIndex:
    index = SessionIndex(file_tools)
    index.extend(messages)
    return index
