"""Compaction beside pruning, and beside what a recording agent actually did.

``preview_pipeline`` runs prune -> compact and reports what each step saves.
``compare_recorded`` puts each compaction recorded in a session (Pi sessions
carry them in ``metadata["recorded_compactions"]``) beside the cut this project
would choose for the same history with the same settings.

>>> from pruner.model import Message, Session
>>> s = Session.of([Message(id=f"m{i}", role="user" if i % 2 == 0 else "assistant",
...                         content=f"message number {i} " * 20) for i in range(8)])
>>> p = preview_pipeline(s, settings=CompactionSettings(keep_recent_tokens=100), force=True)
>>> p.original_tokens >= p.pruned_tokens >= p.compacted_tokens
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..model import Session
from ..engine.prune import PruneConfig, PruneResult, prune
from ..tokens import get_counter
from .base import Summarizer
from .compact import CompactionResult, compact, plan_compaction
from .cut import _index_ok
from .settings import CompactionSettings


@dataclass(frozen=True)
class PipelinePreview:
    """Tokens of the original, the pruned and the pruned-then-compacted session."""

    original_tokens: int
    pruned_tokens: int  # kept messages plus the placeholders the export sends
    compacted_tokens: int  # compacted session plus placeholders still needed by kept calls
    prune: PruneResult
    compaction: CompactionResult

    def steps(self) -> list[dict[str, Any]]:
        """One row per step: tokens after it and tokens it saved."""
        return [
            {"step": "original", "tokens": self.original_tokens, "saved": 0},
            {"step": "prune", "tokens": self.pruned_tokens, "saved": self.original_tokens - self.pruned_tokens},
            {"step": "compact", "tokens": self.compacted_tokens,
             "saved": self.pruned_tokens - self.compacted_tokens},
        ]


def preview_pipeline(session: Session, prune_config: PruneConfig | None = None,
                     settings: CompactionSettings | None = None, summarizer: Summarizer | None = None, *,
                     force: bool = False, on_error: str = "raise") -> PipelinePreview:
    """Prune ``session``, then compact the kept messages; report the tokens after each step.

    Provider-reported usage is ignored for the compaction step: it describes the
    prompt before pruning, so the trigger uses an estimate of the pruned context.
    """
    settings = settings or CompactionSettings()
    pruned = prune(session, prune_config)
    compaction = compact(pruned.kept, settings, summarizer, force=force, on_error=on_error, use_usage=False,
                         validate=False)
    counter = get_counter(settings.encoding)
    answered = {m.tool_call_id for m in compaction.compacted.messages if m.tool_call_id}
    still_needed = sum(counter.count(text) for cid, text in pruned.placeholders.items()
                       if cid not in answered and any(c.id == cid for m in compaction.compacted.messages
                                                      for c in m.tool_calls))
    return PipelinePreview(original_tokens=pruned.stats.tokens_before, pruned_tokens=pruned.stats.tokens_after,
                           compacted_tokens=compaction.tokens_after + still_needed, prune=pruned,
                           compaction=compaction)


def compare_recorded(session: Session, settings: CompactionSettings | None = None) -> list[dict[str, Any]]:
    """Each recorded compaction beside the cut this project computes for the same history.

    For the entry at ``position_index`` p, the history is ``session.messages[:p]``
    with the earlier recorded compactions applied; the computed cut uses
    ``settings`` and is forced (the recording agent had already decided to compact).
    Rows: ``{"entry_id", "position_index", "recorded": {first_kept_index,
    first_kept_message_id, tokens_before}, "computed": {first_kept_index,
    first_kept_message_id, split_turn, tokens_before, context_tokens,
    would_trigger, reason}, "same_cut"}``.
    """
    settings = settings or CompactionSettings()
    entries = session.metadata.get("recorded_compactions") if isinstance(session.metadata, Mapping) else None
    if not isinstance(entries, list):
        return []
    rows = []
    n = len(session.messages)
    for k, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            continue
        pos = entry.get("position_index")
        recorded = {"first_kept_index": entry.get("first_kept_index"),
                    "first_kept_message_id": entry.get("first_kept_message_id"),
                    "tokens_before": entry.get("tokens_before")}
        row: dict[str, Any] = {"entry_id": entry.get("entry_id"), "position_index": pos, "recorded": recorded,
                               "computed": None, "same_cut": None}
        if _index_ok(pos, n + 1):
            earlier = [e for e in entries[:k] if isinstance(e, Mapping) and _index_ok(e.get("position_index"), pos)]
            history = Session(messages=session.messages[:pos], name=session.name,
                              source_format=session.source_format,
                              metadata={**session.metadata, "recorded_compactions": earlier})
            plan = plan_compaction(history, settings, force=True, validate=False)
            cut = plan.cut
            row["computed"] = {
                "first_kept_index": cut.index if cut else None,
                "first_kept_message_id": cut.message_id if cut else None,
                "split_turn": bool(cut and cut.split_turn),
                "tokens_before": plan.tokens(plan.window.context()),
                "context_tokens": plan.trigger.context_tokens,
                "would_trigger": plan.trigger.context_tokens > settings.threshold,
                "reason": cut.reason if cut else plan.trigger.reason,
            }
            row["same_cut"] = (cut is not None and cut.message_id is not None
                               and cut.message_id == recorded["first_kept_message_id"])
        rows.append(row)
    return rows
