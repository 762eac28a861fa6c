"""The Replay page's logic: run the replay for a session and settings, and shape what the page shows.

Nothing here imports Streamlit's widgets or draws anything; the page
(``app_pages/replay.py``) calls these with a ``Session`` and a ``ReplayChoice``
and renders the frames and rows they return, so the page survives any change
to how sessions are loaded.

>>> from pruner.bench.workloads import generate
>>> r = run(generate("tool_agent", turns=8, seed=0), ReplayChoice(strategies=("full", "truncate")))
>>> frame = requests_frame(r)
>>> sorted(frame["strategy"].unique()), int(frame["request"].max()) == len(r.requests) - 1
(['full', 'truncate'], True)
>>> clamp(5, +1, 6), clamp(0, -1, 6)
(5, 0)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from pruner import Session
from pruner.replay import ReplaySettings, default_prices, replay, strategy_names
from pruner.replay.calibration import from_replay
from pruner.replay.detect import detect
from pruner.replay.engine import Replay
from pruner.replay.prices import PriceTable
from pruner.replay.wire import TokenBook
from pruner.replay.settings import DEFAULT_MODELS

#: Sessions up to this many requests x messages keep every request's context (instant stepping).
SNAPSHOT_LIMIT = 3_000_000
KIND_LABELS = {"placeholder": "placeholder: the result was left out", "compaction_summary": "compaction summary"}


@dataclass(frozen=True)
class ReplayChoice:
    """The settings form's values (hashable: the cache key)."""

    provider: str = "anthropic"
    model: str = DEFAULT_MODELS["anthropic"]
    strategies: tuple[str, ...] = ()
    context_window: int | None = None
    ttl: str = "5m"
    reserve_tokens: int = 16_384
    keep_recent_tokens: int = 20_000
    clear_trigger: int = 100_000
    clear_keep: int = 3
    inherit_cold: bool = True
    # The user's edits to the model's prices (USD per million tokens), or None to keep the table's.
    input_price: float | None = None
    cached_price: float | None = None
    write_price: float | None = None
    output_price: float | None = None

    def names(self) -> list[str]:
        return list(self.strategies) or strategy_names()

    def settings(self) -> ReplaySettings:
        return ReplaySettings(provider=self.provider, model=self.model, context_window=self.context_window,
                              ttl=self.ttl, reserve_tokens=self.reserve_tokens,
                              keep_recent_tokens=self.keep_recent_tokens, clear_trigger=self.clear_trigger,
                              clear_keep=self.clear_keep, inherit_cold=self.inherit_cold)

    def prices(self) -> PriceTable:
        """The shipped table, with the user's edits to this model's row (then labelled "edited")."""
        table = default_prices()
        edits = {k: v for k, v in (("input", self.input_price), ("cached_input", self.cached_price),
                                   ("cache_write_5m", self.write_price), ("output", self.output_price))
                 if v is not None}
        if not edits:
            return table
        row = table.get(self.model, self.provider)
        if self.write_price is not None and row.cache_write_1h is not None:
            edits["cache_write_1h"] = row.cache_write_1h * (self.write_price / (row.cache_write_5m or row.input))
        return table.with_model(replace(row, **edits))


def choice_for(session: Session, previous: ReplayChoice | None) -> ReplayChoice:
    """The settings for a newly loaded session: the provider and model it records (prices as in the
    table), the previous choice's strategies and knobs."""
    provider, model, _ = detect(session, default_prices())
    base = previous or ReplayChoice()
    return replace(base, provider=provider, model=model, input_price=None, cached_price=None, write_price=None,
                   output_price=None)


def models(provider: str) -> list[str]:
    return default_prices().names(provider)


def run(session: Session, choice: ReplayChoice) -> Replay:
    """The replay the page shows (``ConfigurationError`` on settings the library refuses)."""
    snapshots = len(session.messages) * (1 + sum(1 for m in session.messages if m.role == "assistant")) \
        <= SNAPSHOT_LIMIT
    return replay(session, choice.names(), settings=choice.settings(), prices=choice.prices(), snapshots=snapshots)


def requests_frame(r: Replay) -> pd.DataFrame:
    """One row per strategy and request: what was sent and billed, cumulative dollars, and events."""
    rows = []
    for name, run_ in r.runs.items():
        total = 0.0
        for row in run_.rows:
            total += row.dollars
            events = "; ".join(f"{e.kind}: {e.tokens_before:,} → {e.tokens_after:,} tokens ({e.detail})"
                               for e in row.events)
            rows.append({"strategy": name, "request": row.request, "turn": row.turn, "tokens": row.tokens,
                         "input": row.input, "cached": row.cached, "written": row.written, "fresh": row.fresh,
                         "output": row.output, "dollars": row.dollars, "cumulative_dollars": total,
                         "cached_share": row.cached_share, "miss": row.miss, "rejected": row.rejected,
                         "event_kinds": ",".join(sorted({e.kind for e in row.events})), "events": events})
    return pd.DataFrame(rows, columns=["strategy", "request", "turn", "tokens", "input", "cached", "written",
                                       "fresh", "output", "dollars", "cumulative_dollars", "cached_share", "miss",
                                       "rejected", "event_kinds", "events"])


def totals_frame(r: Replay) -> pd.DataFrame:
    rows = []
    for name, run_ in r.runs.items():
        t = run_.totals
        rows.append({"strategy": name, "requests": t["billed_requests"], "dollars": round(t["dollars"], 4),
                     "dollars (our own counts)": round(t["dollars_unscaled"], 4),
                     "cached %": round(100 * t["cached_share"], 1), "fresh": t["fresh"], "cached": t["cached"],
                     "written": t["written"], "peak context": t["peak_context"], "over the window": t["rejected"],
                     "prunes": t["prunes"], "compactions": len(t["compactions"]),
                     "truncations": t["truncations"], "clearings": t["clearings"],
                     "facts missing (worst)": t["facts_missing_max"], "what it sends": run_.summary})
    return pd.DataFrame(rows)


def events_frame(r: Replay) -> pd.DataFrame:
    """Every prune, compaction, truncation and clearing: tokens before -> after and what that request cost."""
    rows = []
    for name, run_ in r.runs.items():
        for row, e in run_.events:
            rows.append({"strategy": name, "request": row.request, "turn": row.turn, "event": e.kind,
                         "tokens before": e.tokens_before, "tokens after": e.tokens_after,
                         "removed": e.tokens_before - e.tokens_after, "request dollars": round(row.dollars, 6),
                         "cached": row.cached, "written": row.written, "why": e.detail})
    return pd.DataFrame(rows, columns=["strategy", "request", "turn", "event", "tokens before", "tokens after",
                                       "removed", "request dollars", "cached", "written", "why"])


def calibration_lines(r: Replay) -> list[str]:
    c = from_replay(r)
    return c.lines() if c is not None else []


def clamp(k: int, delta: int, n: int) -> int:
    """Request ``k + delta`` kept within 0 .. n - 1."""
    return min(max(k + delta, 0), max(n - 1, 0))


def request_summary(r: Replay, strategy: str, k: int) -> dict[str, Any]:
    row = r.runs[strategy].rows[k]
    return {"request": k, "turn": row.turn, "messages": row.messages, "tokens": row.tokens, "input": row.input,
            "cached": row.cached, "written": row.written, "fresh": row.fresh, "output": row.output,
            "dollars": row.dollars, "miss": row.miss, "rejected": row.rejected, "window": r.window,
            "events": [f"{e.kind}: {e.tokens_before:,} → {e.tokens_after:,} tokens ({e.detail})" for e in row.events]}


def context_rows(r: Replay, strategy: str, k: int) -> list[dict[str, Any]]:
    """The exact messages sent at request ``k``: position, role, id, what kind, tokens, content, calls."""
    counter = TokenBook(r.settings.prune.encoding)
    rows = []
    for i, m in enumerate(r.context(strategy, k)):
        kind = m.metadata.get("kind") if isinstance(m.metadata, dict) else None
        label = KIND_LABELS.get(kind, "summary recorded in the session" if m.role == "summary" else "")
        calls = "\n".join(f"→ call {c.id}: {c.name}({c.arguments})" for c in m.tool_calls)
        rows.append({"position": i, "role": m.role, "id": m.id, "kind": label, "tokens": counter.tokens(m),
                     "answers": m.tool_call_id or "", "content": m.content, "calls": calls})
    return rows
