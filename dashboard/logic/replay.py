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
from typing import Any, Literal

import pandas as pd

from pruner import Session
from pruner.money import money
from pruner.replay import ReplaySettings, default_prices, replay, strategy_names
from pruner.replay.answer import Figures, answer, status_of
from pruner.replay.calibration import from_replay
from pruner.replay.detect import resolve_settings
from pruner.replay.engine import Replay
from pruner.replay.prices import PriceTable
from pruner.replay.wire import TokenBook
from pruner.replay.settings import DEFAULT_MODELS, DEFAULT_PROVIDER

KIND_LABELS = {"placeholder": "placeholder: the result was left out", "compaction_summary": "compaction summary"}


@dataclass(frozen=True)
class ReplayChoice:
    """The settings form's values (hashable: the cache key); the defaults are ``ReplaySettings``'s."""

    provider: str = DEFAULT_PROVIDER
    model: str = DEFAULT_MODELS[DEFAULT_PROVIDER]
    strategies: tuple[str, ...] = ()
    context_window: int | None = ReplaySettings.context_window
    ttl: str = ReplaySettings.ttl
    reserve_tokens: int = ReplaySettings.reserve_tokens
    keep_recent_tokens: int = ReplaySettings.keep_recent_tokens
    clear_trigger: int = ReplaySettings.clear_trigger
    clear_keep: int = ReplaySettings.clear_keep
    inherit_cold: bool = ReplaySettings.inherit_cold
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
        edits: dict[str, Any] = {k: v for k, v in (("input", self.input_price), ("cached_input", self.cached_price),
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
    chosen, _ = resolve_settings(session, ReplaySettings(), default_prices())  # as the replay chooses them
    provider, model = chosen.provider or DEFAULT_PROVIDER, chosen.model_name
    base = previous or ReplayChoice()
    return replace(base, provider=provider, model=model, input_price=None, cached_price=None, write_price=None,
                   output_price=None)


#: The Replay page's own URL parameters (the session's are ``links``'s).
PAGE_KEYS = ("strategies", "provider", "model", "strategy", "request")
#: A replay of more requests than this draws the sections below its charts once the browser drew them
#: (``dashboard/deferred.py``): the 2,000-turn sample has 3,924 requests, the 500-turn one 965.
DEFER_ABOVE_REQUESTS = 1_000


def defers_below(requests: int) -> bool:
    """Whether a replay of ``requests`` requests draws its ledger, stepper and events after its charts."""
    return requests > DEFER_ABOVE_REQUESTS


def choice_from_link(choice: ReplayChoice, params: dict[str, str]) -> tuple[ReplayChoice, list[str]]:
    """``choice`` with what a link names (``strategies=a,b``, ``provider``, ``model``) applied, and a
    sentence for each value the link gives that cannot be used (that value is left as it was)."""
    problems: list[str] = []
    changes: dict[str, Any] = {}
    provider = params.get("provider", choice.provider)
    if provider not in DEFAULT_MODELS:
        problems.append(f"the link's provider {provider!r} is not one of {', '.join(sorted(DEFAULT_MODELS))}")
        provider = choice.provider
    changes["provider"] = provider
    if "model" in params:
        if params["model"] in models(provider):
            changes["model"] = params["model"]
        else:
            problems.append(f"the link's model {params['model']!r} has no price for {provider}")
    elif provider != choice.provider:
        changes["model"] = DEFAULT_MODELS[provider]
    if "strategies" in params:
        named = tuple(n for n in params["strategies"].split(",") if n)
        unknown = [n for n in named if n not in strategy_names()]
        if unknown or not named:
            problems.append(f"the link's strategies name unknown ones ({', '.join(unknown) or 'none given'})")
        else:
            changes["strategies"] = named
    if changes.get("model", choice.model) != choice.model:
        changes |= {"input_price": None, "cached_price": None, "write_price": None, "output_price": None}
    return replace(choice, **changes), problems


def choice_params(choice: ReplayChoice, recorded: ReplayChoice) -> dict[str, str]:
    """The URL parameters that reopen ``choice`` (those that differ from ``recorded``, what the session records)."""
    out = {}
    if choice.provider != recorded.provider:
        out["provider"] = choice.provider
    if choice.model != recorded.model:
        out["model"] = choice.model
    if choice.strategies:
        out["strategies"] = ",".join(choice.strategies)
    return out


def models(provider: str) -> list[str]:
    return default_prices().names(provider)


def run(session: Session, choice: ReplayChoice) -> Replay:
    """The replay the page shows (``ConfigurationError`` on settings the library refuses). The engine
    decides whether to keep every request's context (instant stepping): under its ``SNAPSHOT_LIMIT``."""
    return replay(session, choice.names(), settings=choice.settings(), prices=choice.prices(), snapshots=None)


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


def infeasible(r: Replay) -> dict[str, str]:
    """The strategies that would send a request the API refuses, each with the reason (money engine's
    totals), and those that do not apply to this provider, each saying so (``answer.status_of``: a
    strategy of another provider's API is not "a request over the context window")."""
    out = {}
    for name, run_ in r.runs.items():
        status, why = status_of(run_.totals)
        if status != "comparable":
            out[name] = why
    return out


def figures(r: Replay) -> Figures:
    """Billed, modelled, the band and every saving (the library's ``answer``: the CLI prints the same)."""
    return answer(r)


def totals_frame(r: Replay, regret: list[str] | None = None) -> pd.DataFrame:
    """One row per strategy: the figures that answer "what does it cost and what does it lose" (narrow
    enough for a 1366-pixel screen; ``detail_frame`` has the rest). Every row's dollars are modelled (the
    recording's too: the bill is the figures line's), ``vs modelled`` its cost against the modelled
    recording, ``~`` within the band. ``regret``: each strategy's dollars over the hindsight bound, as text
    in the replay's order (``replay_bound.regret_column``); no column when the bound was not computed."""
    rows = []
    bad = infeasible(r)
    a = answer(r)
    changes = {s.strategy: s.change() + ("" if s.measurable or s.share is None else " ~") for s in a.savings}
    for name, run_ in r.runs.items():
        t = run_.totals
        label = "" if name not in bad else (" (does not apply)" if not t.get("applicable", True) else " (infeasible)")
        row = {"strategy": name + label,
               "dollars": t["dollars_modelled"] if name == a.reference else t["dollars"],
               "vs modelled": "reference" if name == a.reference else changes.get(name, "-"),
               "cached %": 100 * t["cached_share"], "peak context": t["peak_context"],
               "rejected": t["rejected"]}
        if "context_recall" in t:
            row["recall %"] = 100 * float(t["context_recall"])
        row["changes"] = _changes(t)
        rows.append(row)
    frame = pd.DataFrame(rows)
    if regret is not None and not frame.empty:
        frame.insert(3, "regret", regret)
    if bad and not frame.empty:
        # as the CLI prints them: "n/a" where a strategy could not run (over the window, or another provider's
        # feature): its partial dollars are no amount (the caption under the table says "n/a: over the window
        # from request N ($X up to there)", ``Saving.na``)
        def shown(label: str, dollars: float) -> str:
            return "n/a" if label.endswith(GREYED) else money(dollars)
        frame["dollars"] = [shown(lab, d) for lab, d in zip(frame["strategy"], frame["dollars"])]
    return frame


def detail_frame(r: Replay) -> pd.DataFrame:
    """The rest of each strategy's totals: requests billed, tokens by kind, our own counts' dollars."""
    rows = []
    for name, run_ in r.runs.items():
        t = run_.totals
        rows.append({"strategy": name, "billed requests": t["billed_requests"], "fresh": t["fresh"],
                     "cached": t["cached"], "written": t["written"], "dollars (our own counts)": t["dollars_unscaled"],
                     "facts missing (worst)": t["facts_missing_max"]})
    return pd.DataFrame(rows)


def summaries(r: Replay) -> list[tuple[str, str]]:
    """(strategy, what it sends, with the reason first when it is infeasible)."""
    bad = infeasible(r)
    return [(name, ((bad[name] + ". ") if bad.get(name, "").startswith("does not apply") else
                    f"infeasible: {bad[name]}. " if name in bad else "") + run_.summary)
            for name, run_ in r.runs.items()]


def _changes(t: dict) -> str:
    parts = [(t["prunes"], "prune"), (len(t["compactions"]), "compaction"), (t["truncations"], "truncation"),
             (t["clearings"], "clearing")]
    return ", ".join(f"{n:,} {word}{'s' if n != 1 else ''}" for n, word in parts if n) or "none"


#: Column widths (pixels) that fit the strategies table beside the sidebar at 1366 pixels, headers whole, with
#: the regret column: 900 of the 904 the main area has ("rejected", as the CLI's table calls the requests
#: over the window, where "over the window" took 120; a long strategy label or change list ends in "…").
COLUMN_WIDTHS = {"strategy": 175, "dollars": 90, "vs modelled": 100, "regret": 80, "cached %": 80,
                 "peak context": 105, "rejected": 80, "recall %": 80, "changes": 110,
                 "billed requests": 120, "fresh": 95, "cached": 105, "written": 95,
                 "dollars (our own counts)": 170, "facts missing (worst)": 160}


def money_format(dollars: pd.Series) -> str:
    """The column's dollar format, as ``pruner.money.money`` writes the same figures in the verdict: a
    column of sums all under $1 keeps four decimals ($0.0197, not $0.02, which made $0.0197 and $0.0289
    look alike); otherwise cents.

    >>> money_format(pd.Series([0.0197, 0.0289])), money_format(pd.Series([0.5, 42.6]))
    ('$%.4f', 'dollar')
    """
    values = pd.to_numeric(dollars, errors="coerce").abs().dropna()
    return "$%.4f" if len(values) and 0 < values.max() < 1 else "dollar"


def totals_columns(frame: pd.DataFrame) -> dict:
    """Streamlit column formats for the totals tables: money as dollars, counts with thousands separators."""
    import streamlit as st

    money_cols = {"dollars", "dollars (our own counts)"}
    pct = {"cached %", "recall %"}
    out = {}
    for col in frame.columns:
        width: int | Literal["medium"] = COLUMN_WIDTHS.get(col, "medium")
        if col in money_cols and frame[col].dtype == object:  # bracketed: written by money() already
            out[col] = st.column_config.TextColumn(col, width=width)
        elif col in money_cols:
            out[col] = st.column_config.NumberColumn(col, format=money_format(frame[col]), width=width)
        elif col in pct:
            out[col] = st.column_config.NumberColumn(col, format="%.1f %%", width=width)
        elif col in ("strategy", "changes", "vs modelled"):
            out[col] = st.column_config.TextColumn(col, width=width)
        elif col == "regret":
            out[col] = st.column_config.TextColumn(col, width=width, help="Its dollars over the cheapest schedule "
                                                   "found in hindsight (n/a: infeasible, does not apply, or no bound)")
        elif col == "rejected":
            out[col] = st.column_config.NumberColumn(col, format="localized", width=width,
                                                     help="Requests this strategy would send over the context "
                                                          "window (the API refuses them)")
        else:
            out[col] = st.column_config.NumberColumn(col, format="localized", width=width)
    return out


GREYED = ("(infeasible)", "(does not apply)")


def styled_totals(frame: pd.DataFrame):
    """``frame`` with infeasible strategies' rows greyed (the reason is in their "what it sends")."""
    def grey(row):
        return ["color: #9a9a9a" if str(row["strategy"]).endswith(GREYED) else ""] * len(row)
    if not frame["strategy"].str.endswith(GREYED).any():
        return frame
    return frame.style.apply(grey, axis=1)


def aborted_note(r: Replay) -> str:
    """Why the billed requests are fewer than the requests stepped through (the recording's aborted ones)."""
    total = len(r.requests)
    first = next(iter(r.runs.values()), None)
    if first is None:
        return ""
    aborted = sum(1 for row in first.rows if getattr(row, "aborted", False))
    if not aborted:
        return ""
    return (f"{total:,} requests in all; {aborted:,} of them the recording shows aborted (no usage recorded), "
            f"so each strategy is billed for {total - aborted:,} (\"billed requests\" under every figure).")


def nothing_cached_note(r: Replay, frame: pd.DataFrame) -> str:
    """Why every strategy shows 0 % cached, when it does (a session shorter than the cacheable minimum)."""
    if frame.empty or frame["cached"].sum() > 0:
        return ""
    below = int((frame["miss"] == "below_minimum").sum())
    share = f"{below:,} of the {len(frame):,} strategy requests were" if below else "no request was"
    return (f"Nothing is read from the cache under any strategy: {share} below the model's minimum cacheable "
            f"length, the rest first requests. The provider caches only prompts at least that long "
            f"({r.cache_description}).")


def clicked_request(event) -> int | None:
    """The request a click on a Replay chart picked (its point's x), or ``None``."""
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):
        return None
    for point in points or ():
        x = point.get("x") if hasattr(point, "get") else None
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            return int(round(x))
    return None


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
            "aborted": bool(getattr(row, "aborted", False)),
            "events": [f"{e.kind}: {e.tokens_before:,} → {e.tokens_after:,} tokens ({e.detail})" for e in row.events]}


def context_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The table of the messages sent: every column of ``context_rows`` but the text itself."""
    return pd.DataFrame([{k: v for k, v in row.items() if k not in ("content", "calls")} for row in rows])


def context_rows(r: Replay, strategy: str, k: int, book: TokenBook | None = None) -> list[dict[str, Any]]:
    """The exact messages sent at request ``k``: position, role, id, what kind, tokens, content, calls.

    ``book``: token counts kept between requests (one per replay), so a step counts only new messages."""
    counter = book or TokenBook(r.settings.prune.encoding)
    rows = []
    for i, m in enumerate(r.context(strategy, k)):
        kind: Any = m.metadata.get("kind") if isinstance(m.metadata, dict) else None  # any JSON value
        label = KIND_LABELS.get(kind, "summary recorded in the session" if m.role == "summary" else "")
        calls = "\n".join(f"→ call {c.id}: {c.name}({c.arguments})" for c in m.tool_calls)
        rows.append({"position": i, "role": m.role, "id": m.id, "kind": label, "tokens": counter.tokens(m),
                     "answers": m.tool_call_id or "", "content": m.content, "calls": calls})
    return rows
