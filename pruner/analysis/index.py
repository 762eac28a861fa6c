"""What the pruning rules need to know about a session: built once per session, read by every rule.

Content-derived features are computed once per distinct text (``pruner.analysis.text``);
the per-message facts (call keys, file accesses, dependency keys, which messages take
part in duplicate detection) are plain lists filled in one pass; the near-duplicate
relation (``pruner.analysis.near``) and token counts are computed when first asked for.
A session's index is kept while the session is alive (``index_for``), so pruning it
again with other settings reads the same index; it is append-only (``extend``), which
is what lets the incremental pruner carry it from turn to turn.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Sequence

from .fileops import READ, WRITE, FileTools, file_operations, is_partial_read
from .near import NearRelation
from .text import (MARKER_RE, MIN_NEAR_DUPLICATE_WORDS, SHINGLE_WORDS, TextFeatures, containment,  # noqa: F401
                   features_of, markers, normalise, text_features)
from ..model import Message, Session, ToolCall, canonical_json
from ..tokens import HeuristicCounter, TokenCounter

#: Documents shorter than this (normalised) are never treated as duplicates:
#: there is too little text for a copy to matter.
MIN_DUPLICATE_CHARS = 32
#: A tool result removed as a copy is still answered at export by a placeholder
#: ("[same as the result at turn 12 (id m40)]", about 14 tokens), so shorter
#: results than this would cost more as a placeholder than they save.
MIN_DUPLICATE_RESULT_CHARS = 80
_DUPLICATE_ROLES = frozenset({"tool", "retrieved_doc"})
_NO_MARKERS = ((), ())


@dataclass(frozen=True)
class FileAccess:
    op: str  # read | write | edit
    path: str
    partial: bool

    @property
    def shows_whole_file(self) -> bool:
        """Whether this access shows the file's whole content again, so an earlier read of it is stale: a
        full re-read, or a write (its call holds the new content). Not an edit: it changes some lines,
        and the earlier read still shows every other one, which the next edit copies (an edit tool's
        ``old_string`` must match the file; issue 20 found the model's replies copying them)."""
        return self.op == WRITE or (self.op == READ and not self.partial)


class SessionIndex:
    """Positions and links of a message list, read by every rule.

    Append-only: ``extend`` analyses new messages without touching the old ones.
    Besides one entry per message, it keeps the positions that matter to each rule
    (results with a call key, file accesses, TTLs, references), so a rule visits only
    those, and the distinct texts that take part in duplicate detection, numbered in
    order of first appearance (``texts``, ``text_no``).
    """

    def __init__(self, file_tools: FileTools):
        self.file_tools = file_tools
        self.messages: list[Message] = []
        self.features: list[TextFeatures | None] = []  # content features, for duplicate candidates
        self.call_site: dict[str, tuple[int, ToolCall]] = {}  # call id -> (assistant index, call)
        self.call_owner: list[int] = []  # tool results: index of the message that made the call; else -1
        self.result_key: list[str | None] = []  # supersession key of each tool result
        self.file_access: list[tuple[FileAccess, ...]] = []  # what each result's call did to files
        self.defines: list[tuple[str, ...]] = []
        self.refs: list[tuple[str, ...]] = []
        self.text_no: list[int] = []  # duplicate candidates: number of its normalised text; else -1
        self.candidates: list[int] = []  # positions of the duplicate candidates
        self.texts: list[TextFeatures] = []  # distinct candidate texts, by first appearance
        self.text_first: list[int] = []  # position where each text first appears
        self.last_turn = 0
        # Positions that matter to one rule each, in order.
        self.keyed: list[int] = []
        self.results: list[int] = []  # tool results (they need the call that produced them)
        self.file_ops: list[int] = []
        self.expiring: list[int] = []
        self.referrers: list[int] = []
        self.definers: dict[str, list[int]] = {}
        self.by_key: dict[str, list[int]] = {}  # key -> results with it
        self.changes: dict[str, list[int]] = {}  # path -> messages that make earlier reads stale
        self._text_of: dict[str, int] = {}
        self._near: dict[float, NearRelation] = {}
        # counter name -> (counter, counts)
        self._tokens: dict[str, tuple[TokenCounter | HeuristicCounter, list[int]]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.messages)

    def extend(self, messages: Sequence[Message]) -> None:
        start = len(self.messages)
        msgs = list(messages)
        candidates = [m.content for m in msgs if m.tool_call_id is not None or m.role in _DUPLICATE_ROLES]
        feats = iter(features_of(candidates)) if candidates else iter(())
        file_tools = self.file_tools
        texts_before = len(self.texts)
        for i, m in enumerate(msgs, start=start):
            self.messages.append(m)
            cid = m.tool_call_id
            f = None
            text = -1
            if cid is not None or m.role in _DUPLICATE_ROLES:
                f = next(feats)
                limit = MIN_DUPLICATE_RESULT_CHARS if cid is not None else MIN_DUPLICATE_CHARS
                if len(f.normalised) >= limit:
                    text = self._text_of.get(f.normalised, -1)
                    if text < 0:
                        text = self._text_of[f.normalised] = len(self.texts)
                        self.texts.append(f)
                        self.text_first.append(i)
                    self.candidates.append(i)
                mdef, mref = f.marker_defines, f.marker_refs
            else:
                c = m.content
                mdef, mref = markers(c) if ("DEFINE:" in c or "REF:" in c) else _NO_MARKERS
            self.features.append(f)
            self.text_no.append(text)
            if m.turn > self.last_turn:
                self.last_turn = m.turn
            d: tuple[str, ...] = ()
            r: tuple[str, ...] = ()
            if m.defines or mdef:
                d = tuple(dict.fromkeys(m.defines + mdef))
                for k in d:
                    self.definers.setdefault(k, []).append(i)
            if m.refs or mref:
                r = tuple(k for k in dict.fromkeys(m.refs + mref) if k not in d)
                if r:
                    self.referrers.append(i)
            self.defines.append(d)
            self.refs.append(r)
            for tool_call in m.tool_calls:
                self.call_site[tool_call.id] = (i, tool_call)
            key = None
            access: tuple[FileAccess, ...] = ()
            owner = -1
            if cid is not None:
                site = self.call_site.get(cid)
                call = None
                if site is not None:
                    owner, call = site
                key = m.tool_call_key or (_call_key(call) if call else None)
                if call is not None and call.name:
                    access = tuple(FileAccess(op, path, op == READ and is_partial_read(call, file_tools))
                                   for op, path in file_operations(call, file_tools))
            elif m.tool_call_key:
                key = m.tool_call_key
            self.call_owner.append(owner)
            if owner >= 0:
                self.results.append(i)
            self.result_key.append(key)
            self.file_access.append(access)
            if key is not None:
                self.keyed.append(i)
                self.by_key.setdefault(key, []).append(i)
            if access:
                self.file_ops.append(i)
                for a in access:
                    if a.shows_whole_file:
                        self.changes.setdefault(a.path, []).append(i)
            if m.expires_after_turn is not None:
                self.expiring.append(i)
        new_texts = self.texts[texts_before:]
        if new_texts:
            for rel in self._near.values():
                rel.add(new_texts)
        for counter, counts in self._tokens.values():
            counts.extend(_message_tokens_many(msgs, counter))

    # -- computed when first asked for -----------------------------------------------------------

    def near(self, threshold: float) -> NearRelation:
        """Which candidate texts nearly contain which others, at ``threshold`` (built once)."""
        rel = self._near.get(threshold)
        if rel is None:
            with self._lock:
                rel = self._near.get(threshold)
                if rel is None:
                    rel = self._near[threshold] = NearRelation.build(self.texts, threshold)
        return rel

    def tokens(self, counter: TokenCounter | HeuristicCounter) -> list[int]:
        """Tokens of each message (content, and its calls' names and arguments), under ``counter``."""
        hit = self._tokens.get(counter.name)
        if hit is None:
            with self._lock:
                hit = self._tokens.get(counter.name)
                if hit is None:
                    hit = self._tokens[counter.name] = (counter, _message_tokens_many(self.messages, counter))
        return hit[1]


def _message_tokens_many(messages: Sequence[Message], counter: TokenCounter | HeuristicCounter) -> list[int]:
    """``message_tokens`` of each message, with every uncounted text counted in one go."""
    texts = [m.content for m in messages]
    for m in messages:
        for c in m.tool_calls:
            texts.append(c.name)
            texts.append(c.arguments if isinstance(c.arguments, str) else _canonical_arguments(c))
    counts: list[int] = counter.count_many(texts)
    out = counts[:len(messages)]
    k = len(messages)
    for j, m in enumerate(messages):
        if m.tool_calls:
            n = len(m.tool_calls) * 2
            out[j] += sum(counts[k:k + n])
            k += n
    return out


def _canonical_arguments(call: ToolCall) -> str:
    """``canonical_json(call.arguments)`` for object arguments, kept on the call: it is frozen, and
    both its supersession key and its token count need it."""
    text = call.__dict__.get("_canonical_arguments")
    if text is None:
        text = call.__dict__["_canonical_arguments"] = canonical_json(call.arguments)
    return text


def _call_key(call: ToolCall) -> str:
    """``call.call_key()``, reusing the kept canonical arguments."""
    if call.key or isinstance(call.arguments, str):
        return call.call_key()
    return f"{call.name}({_canonical_arguments(call)})"


def build_index(messages: Sequence[Message], file_tools: FileTools) -> SessionIndex:
    index = SessionIndex(file_tools)
    index.extend(messages)
    return index


# Indexes of live sessions, newest last: pruning a session again (other settings, a second
# look) reads its index instead of building it again. Keyed by the session object, which is
# immutable; a few are kept, so memory stays bounded however many sessions pass through.
_INDEXES: OrderedDict[tuple[int, FileTools], tuple[weakref.ref[Session], SessionIndex]] = OrderedDict()
_INDEXES_KEPT = 4
_INDEXES_MESSAGES = 1_000_000  # and no more messages than this in all of them (the newest is always kept)
_INDEXES_LOCK = threading.RLock()  # re-entrant: a weakref callback may run while it is held


def index_for(session: Session, file_tools: FileTools) -> SessionIndex:
    """The index of ``session`` (kept for the few most recently used sessions)."""
    key = (id(session), file_tools)
    with _INDEXES_LOCK:
        hit = _INDEXES.get(key)
        if hit is not None and hit[0]() is session:
            _INDEXES.move_to_end(key)
            return hit[1]
    index = build_index(session.messages, file_tools)

    def forget(_ref: weakref.ref[Session], key: tuple[int, FileTools] = key) -> None:
        with _INDEXES_LOCK:
            hit = _INDEXES.get(key)
            if hit is not None and hit[0] is _ref:
                del _INDEXES[key]
    with _INDEXES_LOCK:
        _INDEXES[key] = (weakref.ref(session, forget), index)
        while len(_INDEXES) > 1 and (len(_INDEXES) > _INDEXES_KEPT or
                                     sum(len(ix) for _, ix in _INDEXES.values()) > _INDEXES_MESSAGES):
            _INDEXES.popitem(last=False)
    return index
