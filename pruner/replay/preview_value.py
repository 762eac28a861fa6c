"""What one previewed compaction costs and keeps: the Compaction page's dollars and recall.

A preview compacts a session once, at its end (``pruner.compaction.compact``). Two questions:

* **Dollars**, at a model's list prices, in pruner's token count (the result's): the next request
  after compacting reads the unchanged prefix from the cache and writes the rest of the new prompt
  (``cache_rewrite_tokens``), where not compacting reads the whole previous prompt from the cache;
  every later request then reads ``tokens_after`` instead of ``tokens_before``. So compacting pays
  ``extra`` once and saves ``per_request`` after, paying back after ``break_even`` requests. The
  summariser's own call is priced only when it ran offline ($0); an endpoint's model is not priced here.
* **Recall**, as ``pruner.replay.recall`` scores a compaction's summary: the replies kept verbatim
  after the cut used terms (``pruner.replay.terms``) that, before the reply, only the summarised
  messages held; the summary's recall is the share of those it holds. ``None`` when no kept reply
  used such a term (nothing to score it on).

>>> from pruner.model import Message
>>> from pruner.compaction import CompactionSettings, OfflineSummarizer, compact
>>> from pruner.model import Session
>>> s = Session.of([Message(id="u", role="user", content="Fix src/parse.py; keep MAX_DEPTH = 64 " * 30),
...                 Message(id="a", role="assistant", content="ok " * 300),
...                 Message(id="u2", role="user", content="and?"),
...                 Message(id="a2", role="assistant", content="MAX_DEPTH stays in src/parse.py")])
>>> r = compact(s, CompactionSettings(context_window=200, reserve_tokens=10, keep_recent_tokens=20),
...             OfflineSummarizer(), force=True)
>>> score = preview_recall(r)
>>> score.candidates >= 1, score.recall
(True, 1.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .prices import ModelPrice
from ..terms import context_terms, message_text, reply_terms

_PER = 1_000_000


@dataclass(frozen=True)
class PreviewRecall:
    candidates: int  # terms kept replies used that only the summarised messages held before them
    held: int  # of them, in the summary
    missing: tuple[str, ...]  # the first of those the summary lacks

    @property
    def recall(self) -> float | None:
        return round(self.held / self.candidates, 4) if self.candidates else None


def preview_recall(result: Any, *, examples: int = 10) -> PreviewRecall:
    """The summary of ``result`` (a ``CompactionResult``) scored on the replies it kept verbatim."""
    replaced = [*result.to_summarize, *result.turn_prefix]
    kept = list(result.kept)
    replies = [reply_terms(message_text(m)) for m in kept if m.role == "assistant"]
    vocabulary = frozenset(t for terms in replies for t in terms)
    if not replaced or not vocabulary:
        return PreviewRecall(0, 0, ())
    summarised: set[str] = set()
    for m in replaced:
        summarised |= context_terms(message_text(m), vocabulary)
    summary = context_terms(result.summary, vocabulary)
    before: set[str] = set()
    for m in result.pinned:
        before |= context_terms(message_text(m), vocabulary)
    candidates = held = 0
    missing: list[str] = []
    for m in kept:
        if m.role == "assistant":
            for t in sorted(reply_terms(message_text(m))):
                if t in summarised and t not in before:
                    candidates += 1
                    if t in summary:
                        held += 1
                    elif len(missing) < examples and t not in missing:
                        missing.append(t)
        before |= context_terms(message_text(m), vocabulary)
    return PreviewRecall(candidates, held, tuple(missing))


@dataclass(frozen=True)
class PreviewDollars:
    model: str
    next_compacting: float  # the next request's input if it compacts now (prefix read, the rest written)
    next_not_compacting: float  # the same request without compacting (the previous prompt read from the cache)
    per_request: float  # each later request's input, saved
    summariser: float | None  # the summariser call (offline: 0.0; an endpoint: None, not priced here)

    @property
    def extra(self) -> float:
        return self.next_compacting - self.next_not_compacting + (self.summariser or 0.0)

    @property
    def break_even(self) -> int | None:
        """Later requests until compacting has paid for itself (0: at once; None: never)."""
        if self.extra <= 0:
            return 0
        return math.ceil(self.extra / self.per_request) if self.per_request > 0 else None


def preview_dollars(result: Any, price: ModelPrice, *, offline: bool) -> PreviewDollars:
    """The input dollars of the requests around ``result``'s compaction at ``price`` (5-minute writes)."""
    rewrite = min(result.cache_rewrite_tokens, result.tokens_after)
    compacting = ((result.tokens_after - rewrite) * price.cached_input + rewrite * price.write_price("5m")) / _PER
    not_compacting = result.tokens_before * price.cached_input / _PER
    per_request = max(result.tokens_before - result.tokens_after, 0) * price.cached_input / _PER
    return PreviewDollars(price.model, compacting, not_compacting, per_request, 0.0 if offline else None)
