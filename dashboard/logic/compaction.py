"""The compaction page's calls into ``pruner.compaction``, memoised per user.

Nothing here decides where to cut or what to summarise: ``plan_compaction``,
``compact`` and ``compare_recorded`` do. This module picks their inputs (the
session as loaded, or its pruned version), keeps the results between reruns,
and makes sure an API key typed into the page never leaves the user's session
state: it is passed straight to the summariser and scrubbed from any error text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from pruner import Session, message_tokens

from pruner.compaction import (CompactionSettings, OfflineSummarizer, OpenAISummarizer, compact, compare_recorded,
                               plan_compaction)

from .. import analysis, cache, session_state, tables

_LIBRARY_DEFAULTS = CompactionSettings()
DEFAULT_KEEP_RECENT = _LIBRARY_DEFAULTS.keep_recent_tokens
_SETTINGS = "cmp_settings"
_OUTCOME = "cmp_outcome"


@dataclass(frozen=True)
class PreviewSettings:
    """The compaction form: the library's settings (its defaults) plus how the preview runs."""

    context_window: int = _LIBRARY_DEFAULTS.context_window
    reserve_tokens: int = _LIBRARY_DEFAULTS.reserve_tokens
    keep_recent_tokens: int = _LIBRARY_DEFAULTS.keep_recent_tokens
    pruned_first: bool = False
    force: bool = True  # a preview: show the cut even below the trigger threshold

    def library(self, encoding: str):
        return CompactionSettings(context_window=self.context_window, reserve_tokens=self.reserve_tokens,
                                  keep_recent_tokens=self.keep_recent_tokens, encoding=encoding)


@dataclass(frozen=True)
class SummarizerChoice:
    kind: str = "offline"  # "offline" | "endpoint"
    base_url: str = ""
    model: str = ""


@dataclass(frozen=True)
class CompactInput:
    key: tuple  # what was compacted: ("raw", session key) or ("pruned", session key, PruneConfig)
    session: Session
    frame: pd.DataFrame  # timeline frame; positions index ``session.messages``
    use_usage: bool  # provider usage describes the unpruned prompt only


@dataclass(frozen=True)
class PlanView:
    frame: pd.DataFrame
    cut_index: int | None
    split_turn: bool
    trigger_reason: str
    cut_reason: str
    context_tokens: int
    threshold: int
    context_source: str
    summarised: int
    prefix: int
    kept: int
    recorded_cut: int | None


@dataclass(frozen=True)
class Outcome:
    key: tuple
    result: Any  # pruner.compaction.CompactionResult
    error: str | None


def default_settings(total_tokens: int) -> PreviewSettings:
    """Library defaults; for a session too small to reach them, keep about its newest third."""
    if total_tokens >= 2 * DEFAULT_KEEP_RECENT:
        return PreviewSettings()
    keep = max(50, (total_tokens // 3) // 50 * 50)
    return PreviewSettings(keep_recent_tokens=keep)


def applied_settings(loaded, compact_input: CompactInput | None) -> PreviewSettings:
    saved = st.session_state.get(_SETTINGS, {}).get(loaded.key)
    if saved is not None:
        return saved
    analysed = analysis.analyse(loaded, session_state.settings())
    return default_settings(int(analysed.result.stats.tokens_before))


def apply_settings(loaded, settings: PreviewSettings) -> None:
    st.session_state.setdefault(_SETTINGS, {})[loaded.key] = settings


def compaction_input(loaded, preview: PreviewSettings) -> CompactInput:
    """The session to compact: as loaded, or pruned with the explorer's current settings."""
    prune_settings = session_state.settings()
    analysed = analysis.analyse(loaded, prune_settings)
    if not preview.pruned_first:
        frame = tables.messages_frame(loaded.session, None, analysed.frame["tokens"].tolist())
        return CompactInput(key=("raw", loaded.key), session=loaded.session, frame=frame, use_usage=True)

    def build() -> CompactInput:
        kept = analysed.result.kept
        kept_rows = analysed.frame[analysed.frame["status"].isin(["kept", "restored"])]
        frame = tables.messages_frame(kept, analysed.result.decisions, kept_rows["tokens"].tolist())
        return CompactInput(key=("pruned", loaded.key, prune_settings), session=kept, frame=frame,
                            use_usage=False)
    return cache.memoised("compaction_input", (loaded.key, prune_settings), build)


def _latest_recorded_cut(session: Session) -> int | None:
    entries = session.metadata.get("recorded_compactions") if hasattr(session.metadata, "get") else None
    if not isinstance(entries, list):
        return None
    for entry in reversed(entries):
        index = entry.get("first_kept_index") if isinstance(entry, dict) else None
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(session.messages):
            return index
    return None


def plan(loaded, compact_input: CompactInput, preview: PreviewSettings) -> PlanView:
    """The cut for these settings (cheap: nothing is summarised)."""
    encoding = session_state.settings().encoding

    def build() -> PlanView:
        p = plan_compaction(compact_input.session, preview.library(encoding), force=preview.force,
                            use_usage=compact_input.use_usage)
        cut = p.cut
        return PlanView(frame=compact_input.frame, cut_index=cut.index if cut else None,
                        split_turn=bool(cut and cut.split_turn), trigger_reason=p.trigger.reason,
                        cut_reason=cut.reason if cut else "", context_tokens=p.trigger.context_tokens,
                        threshold=p.trigger.threshold, context_source=p.trigger.source,
                        summarised=len(p.to_summarize), prefix=len(p.turn_prefix), kept=len(p.kept),
                        recorded_cut=_latest_recorded_cut(compact_input.session))
    return cache.memoised("compaction_plan", (compact_input.key, preview, encoding), build)


def recorded_rows(session: Session, preview: PreviewSettings) -> list[dict]:
    if not session.metadata.get("recorded_compactions"):
        return []
    encoding = session_state.settings().encoding
    return cache.memoised("recorded", (id(session), preview, encoding),
                          lambda: compare_recorded(session, preview.library(encoding)))


def redact(text: str, secret: str) -> str:
    """``text`` with every occurrence of ``secret`` replaced (a key must never be echoed)."""
    return text.replace(secret, "***") if secret else text


def run_compaction(loaded, compact_input: CompactInput, preview: PreviewSettings, choice: SummarizerChoice,
                   *, api_key: str) -> Outcome:
    """Compact with the chosen summariser; an endpoint failure falls back to the offline summary."""
    encoding = session_state.settings().encoding
    if choice.kind == "endpoint":
        summarizer = OpenAISummarizer(base_url=choice.base_url or None, model=choice.model or "gpt-4o-mini",
                                      api_key=api_key, timeout=60.0, max_retries=1)
    else:
        summarizer = OfflineSummarizer()
    result = compact(compact_input.session, preview.library(encoding), summarizer, force=preview.force,
                     on_error="fallback", use_usage=compact_input.use_usage)
    error = redact(result.error, api_key) if result.error else None
    outcome = Outcome(key=(compact_input.key, preview, choice, encoding), result=result, error=error)
    st.session_state[_OUTCOME] = outcome
    return outcome


def outcome_for(loaded, preview: PreviewSettings, choice: SummarizerChoice) -> Outcome | None:
    """The last compaction, if it was made for the current input, settings and summariser."""
    outcome = st.session_state.get(_OUTCOME)
    if outcome is None:
        return None
    encoding = session_state.settings().encoding
    input_key = compaction_input(loaded, preview).key
    return outcome if outcome.key == (input_key, preview, choice, encoding) else None


def endpoint_hint(error: str) -> str:
    if "API key" in error or "401" in error:
        return "Type the key into the **API key** field (any text for a local server without keys)."
    if "connect" in error or "404" in error or "timeout" in error:
        return "Check the **Base URL** and **Model**, and that the server is running."
    return "Check the endpoint settings, or use the offline summariser."


def compacted_frame(result) -> pd.DataFrame:
    """The compacted conversation as a table (plain text previews)."""
    counter = analysis.token_counter(session_state.settings().encoding)
    compacted = result.compacted
    frame = tables.messages_frame(compacted, None, [message_tokens(m, counter) for m in compacted.messages])
    return frame[["position", "turn", "role", "tokens", "id", "preview"]]
