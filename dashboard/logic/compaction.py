"""The compaction page's calls into ``pruner.compaction``, memoised per user.

Nothing here decides where to cut or what to summarise: ``plan_compaction``,
``compact`` and ``compare_recorded`` do. This module picks their inputs (the
session as loaded, or its pruned version), keeps the results between reruns,
and makes sure an API key typed into the page never leaves the user's session
state: it is passed straight to the summariser and scrubbed from any error text.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd
import streamlit as st

from pruner import Session, message_tokens

from pruner.compaction import (CompactionSettings, OfflineSummarizer, OpenAISummarizer, compact, compare_recorded,
                               plan_compaction)

from pruner.errors import PrunerError

from .. import analysis, cache, session_state, tables, ui

log = logging.getLogger("pruner.dashboard")

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
class CompactInput:
    key: tuple  # what was compacted: ("raw", session key) or ("pruned", session key, PruneConfig)
    session: Session
    frame: pd.DataFrame  # timeline frame; positions index ``session.messages``
    use_usage: bool  # provider usage describes the unpruned prompt only


@dataclass(frozen=True)
class PlanView:
    key: tuple  # what the frame shows: the compaction input's key and the encoding
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
    force: bool = False
    keep_recent_tokens: int = 0
    context_window: int = 0
    counted_with: str = ""  # the token encoding of the frame's counts
    kept_tokens: int = 0  # tokens of the messages kept verbatim (the explorer's count)
    first_kept_tokens: int = 0  # tokens of the first of them (where the keep-recent budget ended)
    replaced: tuple[int, ...] = ()  # positions the summary replaces (history and a split turn's start)
    earlier: tuple[int, ...] = ()  # positions a compaction the session records already replaced

    @property
    def over(self) -> bool:
        return self.context_tokens > self.threshold

    def trigger_sentence(self) -> str:
        """Whether compaction triggers, stated from the numbers (a preview forced below the threshold says so)."""
        what = ("the provider's count at the last request, plus its reply and the messages after it"
                if self.context_source == "usage" else f"the messages counted with {self.counted_with}")
        limit = (f"the threshold {self.threshold:,} (window {self.context_window:,} − reserve "
                 f"{self.context_window - self.threshold:,})")
        if self.over:
            return f"Compaction triggers: the trigger counts {self.context_tokens:,} tokens ({what}), above {limit}."
        if self.force:
            return (f"The trigger counts {self.context_tokens:,} tokens ({what}), not above {limit}: the agent "
                    "would not compact yet. The cut is previewed because “Compact even when under the threshold” "
                    "is on.")
        return f"Nothing compacts: the trigger counts {self.context_tokens:,} tokens ({what}), not above {limit}."

    def budget_sentence(self) -> str:
        """When the keep-recent budget ends inside one message bigger than the budget: what happened."""
        if self.cut_index is None or not self.first_kept_tokens or self.first_kept_tokens < self.keep_recent_tokens:
            return ""
        return (f"The keep-recent budget ({self.keep_recent_tokens:,} tokens) ends inside message #{self.cut_index:,}, "
                f"which alone is {self.first_kept_tokens:,} tokens: a message is never split, so it is kept whole and "
                f"{self.kept_tokens:,} tokens stay verbatim ({self.kept_tokens - self.keep_recent_tokens:,} over the "
                "budget). Lower the budget below it to summarise it too.")


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


#: The compaction page's own URL parameters (never the API key).
PAGE_KEYS = ("window", "reserve", "keep", "pruned", "force", "summariser", "base_url", "sum_model")
_WHOLE = {"window": "context_window", "reserve": "reserve_tokens", "keep": "keep_recent_tokens"}
_FLAGS = {"pruned": "pruned_first", "force": "force"}


def settings_from_link(applied: PreviewSettings, params: dict[str, str]) -> tuple[PreviewSettings, list[str]]:
    """``applied`` with the link's window, reserve, keep-recent and flags; a sentence per unusable value.

    >>> settings_from_link(PreviewSettings(), {"window": "50000", "force": "0"})[0].context_window
    50000
    >>> settings_from_link(PreviewSettings(), {"keep": "lots"})[1]
    ["the link's keep must be a whole number of tokens, not 'lots'"]
    """
    changes: dict[str, Any] = {}
    problems: list[str] = []
    for name, field in _WHOLE.items():
        if name in params:
            value = params[name]
            if value.isdigit() and int(value) <= 10_000_000:
                changes[field] = int(value)
            else:
                problems.append(f"the link's {name} must be a whole number of tokens, not {value!r}")
    for name, field in _FLAGS.items():
        if name in params:
            if params[name] in ("0", "1"):
                changes[field] = params[name] == "1"
            else:
                problems.append(f"the link's {name} must be 0 or 1, not {params[name]!r}")
    return replace(applied, **changes), problems


def settings_params(preview: PreviewSettings) -> dict[str, str]:
    """The URL parameters that reopen ``preview``."""
    return {"window": str(preview.context_window), "reserve": str(preview.reserve_tokens),
            "keep": str(preview.keep_recent_tokens), "pruned": str(int(preview.pruned_first)),
            "force": str(int(preview.force))}


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
        return PlanView(key=(compact_input.key, encoding), frame=compact_input.frame,
                        cut_index=cut.index if cut else None,
                        split_turn=bool(cut and cut.split_turn), trigger_reason=p.trigger.reason,
                        cut_reason=cut.reason if cut else "", context_tokens=p.trigger.context_tokens,
                        threshold=p.trigger.threshold, context_source=p.trigger.source,
                        summarised=len(p.to_summarize), prefix=len(p.turn_prefix), kept=len(p.kept),
                        recorded_cut=_latest_recorded_cut(compact_input.session), force=preview.force,
                        keep_recent_tokens=preview.keep_recent_tokens, context_window=preview.context_window,
                        counted_with=encoding, replaced=p.to_summarize + p.turn_prefix,
                        earlier=p.window.already_compacted,
                        **_kept_tokens(compact_input.frame, cut.index if cut else None))
    return cache.memoised("compaction_plan", (compact_input.key, preview, encoding), build)


def _kept_tokens(frame: pd.DataFrame, cut: int | None) -> dict[str, int]:
    if cut is None or not len(frame):
        return {"kept_tokens": 0, "first_kept_tokens": 0}
    kept = frame[frame["position"] >= cut]
    first = kept[kept["position"] == cut]["tokens"]
    return {"kept_tokens": int(kept["tokens"].sum()), "first_kept_tokens": int(first.iloc[0]) if len(first) else 0}


def token_basis(plan_view: PlanView) -> str:
    """What "Context now" counts, next to the explorer's tiktoken figure, and what the threshold is compared with."""
    counted = int(plan_view.frame["tokens"].sum()) if len(plan_view.frame) else 0
    if plan_view.context_source == "usage":
        return (f"The recorded context is the provider's count at the last request (its input and cache tokens: the "
                f"system prompt, tool definitions and formatting the transcript does not hold are in it); the trigger "
                f"adds its reply and an estimate of the messages after it, and compares that with the threshold. "
                f"The cut's keep-recent budget and the result below count the conversation with "
                f"{plan_view.counted_with}, as the explorer does ({counted:,} tokens).")
    return (f"Context now is the messages counted with tiktoken, as the explorer counts ({counted:,} tokens"
            f"{', without the placeholders pruning sends' if 'pruned' in str(plan_view.key[0][0]) else ''}); the "
            "session records no provider usage, so the threshold is compared with this count.")


def recorded_rows(session: Session, preview: PreviewSettings) -> list[dict]:
    if not session.metadata.get("recorded_compactions"):
        return []
    encoding = session_state.settings().encoding
    return cache.memoised("recorded", (id(session), preview, encoding),
                          lambda: compare_recorded(session, preview.library(encoding)))


def redact(text: str, secret: str) -> str:
    """``text`` with every occurrence of ``secret`` replaced (a key must never be echoed)."""
    return text.replace(secret, "***") if secret else text


#: The app's endpoint defaults: short, so a silent server holds the page for seconds, not minutes.
DEFAULT_TIMEOUT_S, DEFAULT_RETRIES = 15.0, 0
_JOB = "cmp_job"
_BACKOFF_S = 1.0


@dataclass(frozen=True)
class SummarizerChoice:
    kind: str = "offline"  # "offline" | "endpoint"
    base_url: str = ""
    model: str = ""
    timeout_s: float = DEFAULT_TIMEOUT_S
    retries: int = DEFAULT_RETRIES

    def longest_wait_s(self) -> float:
        """The longest one compaction can wait for the endpoint: every attempt's timeout plus the waits between."""
        return (1 + self.retries) * self.timeout_s + sum(min(_BACKOFF_S * 2 ** a, 20.0) for a in range(self.retries))


def _summarizer(choice: SummarizerChoice, api_key: str):
    # The library checks the base URL (a ConfigurationError naming the setting) before any request.
    return OpenAISummarizer(base_url=choice.base_url or None, model=choice.model or "gpt-4o-mini", api_key=api_key,
                            timeout=choice.timeout_s, max_retries=choice.retries, backoff_seconds=_BACKOFF_S,
                            key_name="the key typed into the API key field")


def dashboard_error(text: str, *, api_key: str) -> str:
    """An endpoint error as a dashboard user reads it: no key, no environment variable they did not set."""
    text = redact(text, api_key)
    if api_key:  # the key was typed, not read from the environment
        text = text.replace("check OPENAI_API_KEY", "check the key typed into the API key field")
        text = text.replace("set the OPENAI_API_KEY variable", "type one into the API key field")
    return text


def _compact(compact_input: CompactInput, preview: PreviewSettings, choice: SummarizerChoice, encoding: str,
             api_key: str):
    """(result, error): the chosen summariser's compaction, or the offline one with the reason it was used."""
    settings = preview.library(encoding)
    options: dict[str, Any] = dict(force=preview.force, use_usage=compact_input.use_usage)
    if choice.kind != "endpoint":
        return compact(compact_input.session, settings, OfflineSummarizer(), **options), None
    try:
        summarizer = _summarizer(choice, api_key)
        result = compact(compact_input.session, settings, summarizer, on_error="fallback", **options)
        return result, (dashboard_error(result.error, api_key=api_key) if result.error else None)
    except Exception as exc:  # a setting the endpoint cannot take (a garbage base URL, say): still summarise offline
        if isinstance(exc, PrunerError):
            reason = ui.for_dashboard(exc)
        else:
            log.warning("endpoint summariser failed: %s", type(exc).__name__)
            reason = f"the endpoint could not be called ({type(exc).__name__}: {exc})"
        result = compact(compact_input.session, settings, OfflineSummarizer(), **options)
        return result, dashboard_error(reason, api_key=api_key)


@st.cache_resource(show_spinner=False)
def _workers() -> ThreadPoolExecutor:
    """Threads that wait for endpoints, so a page can stop waiting (cancel) while a request is out."""
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="pruner-summarizer")


@dataclass(frozen=True)
class Job:
    key: tuple
    future: Future
    started: float
    longest_wait_s: float


def start_compaction(compact_input: CompactInput, preview: PreviewSettings, choice: SummarizerChoice, *,
                     api_key: str) -> Job:
    """Compact in a worker thread (the page polls it); an endpoint failure falls back to the offline summary."""
    encoding = session_state.settings().encoding
    key = (compact_input.key, preview, choice, encoding)
    future = _workers().submit(_compact, compact_input, preview, choice, encoding, api_key)
    job = Job(key=key, future=future, started=time.monotonic(),
              longest_wait_s=choice.longest_wait_s() if choice.kind == "endpoint" else 0.0)
    st.session_state[_JOB] = job
    return job


def running_job() -> Job | None:
    return st.session_state.get(_JOB)


def finish(job: Job) -> Outcome:
    """The finished job's outcome, kept for the page (the job is forgotten)."""
    result, error = job.future.result()
    outcome = Outcome(key=job.key, result=result, error=error)
    st.session_state[_OUTCOME] = outcome
    st.session_state.pop(_JOB, None)
    return outcome


def cancel(compact_input: CompactInput, preview: PreviewSettings, choice: SummarizerChoice) -> None:
    """Stop waiting for the endpoint: the offline summary of the same cut is shown, and the request is
    left to time out on its own (its answer is ignored)."""
    job = st.session_state.pop(_JOB, None)
    if job is not None:
        job.future.cancel()
    encoding = session_state.settings().encoding
    result, _ = _compact(compact_input, preview, SummarizerChoice(), encoding, "")
    st.session_state[_OUTCOME] = Outcome(key=(compact_input.key, preview, choice, encoding), result=result,
                                         error="cancelled: you stopped waiting for the endpoint")


def run_compaction(loaded, compact_input: CompactInput, preview: PreviewSettings, choice: SummarizerChoice,
                   *, api_key: str) -> Outcome:
    """Compact and wait for it (what the page does, without the polling)."""
    return finish(start_compaction(compact_input, preview, choice, api_key=api_key))


def outcome_for(loaded, preview: PreviewSettings, choice: SummarizerChoice) -> Outcome | None:
    """The last compaction, if it was made for the current input, settings and summariser."""
    outcome = st.session_state.get(_OUTCOME)
    if outcome is None:
        return None
    encoding = session_state.settings().encoding
    input_key = compaction_input(loaded, preview).key
    return outcome if outcome.key == (input_key, preview, choice, encoding) else None


def endpoint_hint(error: str) -> str:
    if error.startswith("cancelled"):
        return "Compact again to retry, or raise the timeout in the endpoint settings."
    if "API key" in error or "401" in error:
        return "Type the key into the **API key** field (any text for a local server without keys)."
    if "base URL" in error:
        return "Give the **Base URL** as an http:// or https:// address, such as http://localhost:8000/v1."
    if "connect" in error or "404" in error or "timeout" in error or "timed out" in error:
        return "Check the **Base URL** and **Model**, that the server is running, and the timeout."
    return "Check the endpoint settings, or use the offline summariser."


def compacted_frame(result) -> pd.DataFrame:
    """The compacted conversation as a table (plain text previews)."""
    counter = analysis.token_counter(session_state.settings().encoding)
    compacted = result.compacted
    frame = tables.messages_frame(compacted, None, [message_tokens(m, counter) for m in compacted.messages])
    return frame[["position", "turn", "role", "tokens", "id", "preview"]]
