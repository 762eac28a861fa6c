"""Following one context request by request (``pruner.replay.recall``'s machinery).

``_ChainIndex`` holds one chain's messages once: each reply's distinctive terms, each message's
term set (content-addressed), the postings of each term. ``_Holder`` follows one context (a
strategy's, or the recording's) from what changed since its previous request: copies of each
session message sent, the other messages (summaries) and placeholders with their terms, when each
message left, and the open compaction's summary score.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import compress, count
from operator import is_not
from typing import Any, Mapping, Sequence

from ..compaction.cut import SUMMARY_KINDS
from ..model import Message
from ..terms import context_terms, message_text, reply_terms


def is_summary(m: Message) -> bool:
    if m.role == "summary":
        return True
    md = m.metadata
    return bool(md) and isinstance(md, Mapping) and md.get("kind") in SUMMARY_KINDS


@dataclass(frozen=True)
class SummaryRecall:
    """One compaction's summary, scored on the replies after it (until the next compaction)."""

    request: int  # the first request whose context held the summary
    summary_id: str
    candidates: int  # reply terms only the replaced history held
    held: int  # of them, held by the summary
    summary_tokens: int | None = None
    offline_held: int | None = None  # recorded compactions: the offline summary of the same history, same length
    offline_tokens: int | None = None
    examples: tuple[str, ...] = ()  # candidate terms the summary lacks (first few)

    @property
    def recall(self) -> float | None:
        return round(self.held / self.candidates, 4) if self.candidates else None

    @property
    def offline_recall(self) -> float | None:
        if self.offline_held is None or not self.candidates:
            return None
        return round(self.offline_held / self.candidates, 4)

    def as_dict(self) -> dict[str, Any]:
        d = {"request": self.request, "summary_id": self.summary_id, "candidates": self.candidates,
             "held": self.held, "recall": self.recall, "summary_tokens": self.summary_tokens,
             "missing_examples": list(self.examples)}
        if self.offline_held is not None:
            d.update(offline_held=self.offline_held, offline_recall=self.offline_recall,
                     offline_tokens=self.offline_tokens)
        return d


# -- the index: term sets per message, postings per term -----------------------------------------


class _ChainIndex:
    """One chain's messages: each reply's distinctive terms, each message's terms, postings per term."""

    def __init__(self, messages: Sequence[Message]):
        self.messages = messages
        replies: dict[int, tuple[str, ...]] = {}
        vocabulary: set[str] = set()
        for p, m in enumerate(messages):
            if m.role == "assistant":
                reply = reply_terms(message_text(m))
                replies[p] = tuple(sorted(reply))
                vocabulary |= reply
        self.replies = replies
        self.vocabulary = frozenset(vocabulary)
        self._by_text: dict[str, frozenset[str]] = {}
        self.pos_of = {id(m): p for p, m in enumerate(messages)}
        self.summaries = frozenset(p for p, m in enumerate(messages) if is_summary(m))
        self.pos_of_id = {m.id: p for p, m in enumerate(messages)}
        self.call_owner = {c.id: p for p, m in enumerate(messages) for c in m.tool_calls}
        self.terms = [self.text_terms(message_text(m)) for m in messages]
        postings: dict[str, list[int]] = {}
        for p, terms in enumerate(self.terms):
            for t in terms:
                postings.setdefault(t, []).append(p)
        self.postings = postings

    def text_terms(self, text: str) -> frozenset[str]:
        terms = self._by_text.get(text)
        if terms is None:
            terms = self._by_text[text] = frozenset(context_terms(text, self.vocabulary))
        return terms

    def holders(self, term: str, before: int) -> list[int]:
        """Positions before ``before`` whose message holds ``term``, oldest first."""
        rows = self.postings.get(term)
        if not rows:
            return []
        return rows[:bisect_left(rows, before)]


@dataclass
class _Open:
    """A compaction whose summary is in the context: what it replaced, and its score so far."""

    request: int
    summary_key: int
    summary_id: str
    summary_terms: frozenset[str]
    replaced: set[int]
    replaced_terms: set[str]  # terms of replaced messages that are not session messages (an earlier summary)
    summary_tokens: int | None = None
    offline_terms: frozenset[str] | None = None
    offline_tokens: int | None = None
    candidates: int = 0
    held: int = 0
    offline_held: int = 0
    examples: list[str] = field(default_factory=list)

    def close(self) -> SummaryRecall:
        return SummaryRecall(self.request, self.summary_id, self.candidates, self.held, self.summary_tokens,
                             self.offline_held if self.offline_terms is not None else None, self.offline_tokens,
                             tuple(self.examples))


class _Holder:
    """One context (a strategy's, or the recording's) followed request by request from what changed."""

    def __init__(self, index: _ChainIndex):
        self.index = index
        self.sent = [0] * len(index.messages)  # copies of each session message in the context
        self.mirror: list[Message] = []
        # id(message) -> [message, terms, copies] (not session messages)
        self.extras: dict[int, list[Any]] = {}
        self.extra_terms: dict[str, int] = {}
        self.subs: dict[str, str] = {}
        self.sub_terms: dict[str, set[str]] = {}  # term -> call ids whose placeholder holds it
        self.left: dict[int, int] = {}  # position -> request at which it last left
        self.open: _Open | None = None
        self.closed: list[SummaryRecall] = []

    # -- following the context --------------------------------------------------------------------

    def _extra(self, m: Message, sign: int) -> None:
        key = id(m)
        entry = self.extras.get(key)
        if entry is None:
            if sign < 0:
                return
            entry = self.extras[key] = [m, self.index.text_terms(message_text(m)), 0]
        entry[2] += sign
        if (sign > 0 and entry[2] == 1) or (sign < 0 and entry[2] == 0):
            counts = self.extra_terms
            for t in entry[1]:
                n = counts.get(t, 0) + sign
                if n:
                    counts[t] = n
                else:
                    counts.pop(t, None)
        if entry[2] <= 0:
            del self.extras[key]

    def update(self, request: int, messages: Sequence[Message], substitutes: Mapping[str, str],
               changed_at: int | None = None) -> None:
        mirror = self.mirror
        c = min(len(mirror), len(messages)) if changed_at is None else min(changed_at, len(mirror), len(messages))
        if c and mirror[c - 1] is not messages[c - 1]:
            c = 0  # the hint does not hold: find the first difference
        if changed_at is None or c == 0:
            c = next(compress(count(), map(is_not, mirror, messages)), min(len(mirror), len(messages)))
        gone, came = self._tails(mirror[c:], messages[c:])
        del mirror[c:]
        mirror.extend(messages[c:])
        self.apply(request, gone, came, substitutes)

    def apply(self, request: int, gone: Sequence[Message], came: Sequence[Message],
              substitutes: Mapping[str, str]) -> None:
        """The context changed: ``gone`` left it, ``came`` entered it (in that order), and it sends
        ``substitutes`` (call id -> placeholder text)."""
        sent, pos_of, messages = self.sent, self.index.pos_of, self.index.messages
        summaries = self.index.summaries
        left, entered_summary = [], None
        for m in gone:
            p = pos_of.get(id(m))
            if p is None or messages[p] is not m:
                self._extra(m, -1)
            else:
                sent[p] -= 1
                if not sent[p]:
                    left.append(p)
        for m in came:
            p = pos_of.get(id(m))
            if p is None or messages[p] is not m:
                new = id(m) not in self.extras
                self._extra(m, 1)
                if new and is_summary(m):
                    entered_summary = m
            else:
                if summaries and p in summaries and not sent[p] and entered_summary is None:
                    entered_summary = m
                sent[p] += 1
        gone_for_good = [p for p in left if not sent[p]]
        for p in gone_for_good:
            self.left[p] = request
        if substitutes != self.subs:
            self._update_subs(substitutes)
        if entered_summary is not None and (gone_for_good or gone):
            self._compaction(request, entered_summary, gone_for_good, gone)  # a summary replaced something

    def _tails(self, old: list[Message], new: Sequence[Message]) -> tuple[list[Message], list[Message]]:
        """What left and what came between two context tails: the messages both still send form one
        block ending at the old tail's last message (contexts keep session order), found at C speed;
        only the parts outside it are walked."""
        if not old:
            return [], list(new)
        last = old[-1]
        pos_of = self.index.pos_of
        p = pos_of.get(id(last))
        if p is not None and new:
            j = bisect_left(new, p, key=lambda m: pos_of.get(id(m), -1))
            if j < len(new) and new[j] is last:
                head = new[:j + 1]
                common = next(compress(count(), map(is_not, reversed(old), reversed(head))), min(len(old), j + 1))
                return old[:len(old) - common], [*head[:j + 1 - common], *new[j + 1:]]
        return old, list(new)

    def _update_subs(self, substitutes: Mapping[str, str]) -> None:
        old = self.subs
        index, sub_terms = self.index, self.sub_terms
        changed = {cid for cid, _ in old.items() ^ substitutes.items()}  # C speed: set ops on the items
        for cid in changed:
            text = old.get(cid)
            if text is not None:
                for t in index.text_terms(text):
                    holders = sub_terms.get(t)
                    if holders is not None:
                        holders.discard(cid)
                        if not holders:
                            del sub_terms[t]
        for cid in changed:
            text = substitutes.get(cid)
            if text is not None:
                old[cid] = text
                for t in index.text_terms(text):
                    sub_terms.setdefault(t, set()).add(cid)
            else:
                old.pop(cid, None)

    def _compaction(self, request: int, summary: Message, left: list[int], gone: Sequence[Message]) -> None:
        if self.open is not None:
            self.closed.append(self.open.close())
        replaced_terms: set[str] = set()
        pos_of = self.index.pos_of
        for m in gone:
            if pos_of.get(id(m)) is None and m is not summary:
                replaced_terms |= self.index.text_terms(message_text(m))
        if self.open is not None and self.open.summary_key not in self.extras and \
                not self._session_sent(self.open.summary_key):
            replaced_terms |= self.open.summary_terms  # a merged summary replaces the previous one
        self.open = _Open(request, id(summary), summary.id, self.index.text_terms(message_text(summary)),
                          set(left), replaced_terms)

    def _session_sent(self, key: int) -> bool:
        p = self.index.pos_of.get(key)
        return p is not None and self.sent[p] > 0

    # -- reading --------------------------------------------------------------------------------------

    def held(self, term: str, before: int, *, exclude: int | None = None) -> bool:
        """Whether the context holds ``term`` (``exclude``: leaving one message out, by identity)."""
        n = self.extra_terms.get(term, 0)
        if n and exclude is not None:
            entry = self.extras.get(exclude)
            if entry is not None and term in entry[1]:
                n -= 1
        if n > 0:
            return True
        sent = self.sent
        skip = self.index.pos_of.get(exclude) if exclude is not None else None
        for p in reversed(self.index.holders(term, before)):
            if sent[p] and p != skip:
                return True
        cids = self.sub_terms.get(term)
        if cids:
            owner = self.index.call_owner
            return any(cid not in owner or sent[owner[cid]] for cid in cids)
        return False

    def source(self, term: str, before: int) -> int | None:
        """The newest message of this context holding ``term`` (None: only a message outside the session)."""
        sent = self.sent
        for p in reversed(self.index.holders(term, before)):
            if sent[p]:
                return p
        return None

    def score_summary(self, terms: Sequence[str], before: int) -> None:
        """Count the candidates of one request for the open compaction."""
        c = self.open
        if c is None:
            return
        index = self.index
        for t in terms:
            if not (t in c.replaced_terms or any(p in c.replaced for p in index.holders(t, before))):
                continue
            if self.held(t, before, exclude=c.summary_key):
                continue  # something else in the context holds it: not the summary's job
            c.candidates += 1
            if t in c.summary_terms:
                c.held += 1
            elif len(c.examples) < 10:
                c.examples.append(t)
            if c.offline_terms is not None and t in c.offline_terms:
                c.offline_held += 1

    def compactions(self) -> tuple[SummaryRecall, ...]:
        out = list(self.closed)
        if self.open is not None:
            out.append(self.open.close())
        return tuple(out)
