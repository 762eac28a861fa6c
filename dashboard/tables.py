"""Pure pandas frame builders for the dashboard (no Streamlit, no pruning logic).

The pages ask the library for a session, its decisions and token counts, and
these functions arrange them into frames the charts and tables show.

>>> from pruner import Message, Session, prune, get_counter, message_tokens
>>> s = Session.of([Message(id="u1", role="user", content="hi"),
...                 Message(id="a1", role="assistant", content="hello")])
>>> r = prune(s)
>>> frame = messages_frame(s, r.decisions, [message_tokens(m, get_counter()) for m in s.messages])
>>> list(frame["status"])
['kept', 'kept']
>>> len(filter_messages(frame, roles=["user"]))
1
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Mapping, Sequence

import pandas as pd

from pruner.model import ROLES, STATUSES, Decision, Session, canonical_json

from .theme import STATUS_MARKS

PREVIEW_CHARS = 120

MESSAGE_COLUMNS = ["position", "id", "turn", "role", "status", "rule", "reason", "related",
                   "related_position", "tokens", "tool", "preview", "content", "slot", "lane"]
#: What the message table shows (``content`` stays hidden; it is there for search).
TABLE_COLUMNS = ["position", "turn", "role", "status", "rule", "tokens", "tool", "id", "preview", "reason"]
DECISION_COLUMNS = ["position", "id", "turn", "role", "status", "rule", "reason", "related", "tokens"]


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """One line of at most ``limit`` characters (whitespace collapsed; only the start of a long text is read)."""
    flat = " ".join(text[: 4 * limit].split())
    if len(flat) <= limit and len(text) > 4 * limit:  # mostly whitespace at the start: read it all
        flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _tool_label(message) -> str:
    if message.tool_calls:
        return ", ".join(c.name for c in message.tool_calls)
    return message.tool_name or ""


def _searchable(message) -> str:
    """Content plus the tool calls' names and arguments, so a search finds a call by its argument."""
    if not message.tool_calls:
        return message.content
    calls = " ".join(f"{c.name} {canonical_json(c.arguments)}" for c in message.tool_calls)
    return f"{message.content} {calls}"


def messages_frame(session: Session, decisions: Iterable[Decision] | None,
                   tokens: Sequence[int]) -> pd.DataFrame:
    """One row per message of ``session``, in order, with its decision and size.

    ``decisions`` are matched by message id; a message without one counts as
    kept. ``slot`` is the x position on the timeline (the turn, spread over
    ``[turn - 0.45, turn + 0.45]`` in message order so messages of one turn do
    not overlap) and ``lane`` the y position (the role's index in ``ROLES``).
    """
    if len(tokens) != len(session.messages):
        raise ValueError("tokens must have one count per message")
    by_id = {d.id: d for d in (decisions or ())}
    position_of = {m.id: i for i, m in enumerate(session.messages)}
    per_turn = Counter(m.turn for m in session.messages)
    seen_in_turn: Counter[int] = Counter()
    rows = []
    for i, m in enumerate(session.messages):
        d = by_id.get(m.id)
        k = seen_in_turn[m.turn]
        seen_in_turn[m.turn] += 1
        n = per_turn[m.turn]
        related = d.related if d is not None else None
        rows.append({
            "position": i, "id": m.id, "turn": m.turn, "role": m.role,
            "status": d.status if d is not None else "kept",
            "rule": d.rule if d is not None else "",
            "reason": d.reason if d is not None else "",
            "related": related or "",
            "related_position": position_of.get(related, -1) if related else -1,
            "tokens": int(tokens[i]), "tool": _tool_label(m), "preview": preview(m.content),
            "content": _searchable(m),
            "slot": m.turn + 0.9 * ((k + 0.5) / n - 0.5),
            "lane": ROLES.index(m.role) if m.role in ROLES else len(ROLES),
        })
    return pd.DataFrame(rows, columns=MESSAGE_COLUMNS)


def filter_messages(frame: pd.DataFrame, *, statuses: Iterable[str] | None = None,
                    roles: Iterable[str] | None = None, rules: Iterable[str] | None = None,
                    turns: tuple[int, int] | None = None, text: str = "",
                    changed_only: bool = False) -> pd.DataFrame:
    """The rows matching every given filter (an empty or ``None`` filter matches all).

    ``rules`` may include ``""`` for messages no rule touched; ``text`` is a
    case-insensitive substring of the content (or tool calls) or the id;
    ``changed_only`` keeps the messages whose status is not ``kept``.
    """
    mask = pd.Series(True, index=frame.index)
    if statuses:
        mask &= frame["status"].isin(list(statuses))
    if roles:
        mask &= frame["role"].isin(list(roles))
    if rules:
        mask &= frame["rule"].isin(list(rules))
    if turns is not None:
        lo, hi = turns
        mask &= frame["turn"].between(lo, hi)
    if changed_only:
        mask &= frame["status"] != "kept"
    if text:
        needle = text.casefold()
        mask &= (frame["content"].str.casefold().str.contains(needle, regex=False)
                 | frame["id"].str.casefold().str.contains(needle, regex=False))
    return frame[mask]


#: What the message table can be sorted by (across every matching row, not one page).
SORT_COLUMNS = ("position", "turn", "tokens", "status", "role", "rule", "id")


def sort_messages(frame: pd.DataFrame, column: str, *, descending: bool = False) -> pd.DataFrame:
    """Every row ordered by ``column`` (ties in position order), before the table is cut into pages."""
    if column not in SORT_COLUMNS:
        raise ValueError(f"cannot sort by {column!r}")
    keys = [column] if column == "position" else [column, "position"]
    return frame.sort_values(keys, ascending=[not descending] + [True] * (len(keys) - 1), kind="stable")


def with_status_marks(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each status preceded by its timeline marker ("◆ duplicate"), for tables."""
    return frame.assign(status=frame["status"].map(lambda s: f"{STATUS_MARKS.get(s, '')} {s}".strip()))


def page_count(rows: int, page_size: int) -> int:
    """How many pages ``rows`` rows fill (at least one, so an empty table still has a page)."""
    return max(1, math.ceil(rows / page_size))


def page_of(frame: pd.DataFrame, page: int, page_size: int) -> pd.DataFrame:
    """Rows of the 1-based ``page``; a page past the end is clamped to the last one."""
    page = min(max(1, page), page_count(len(frame), page_size))
    start = (page - 1) * page_size
    return frame.iloc[start:start + page_size]


def decisions_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The decisions as the CSV download holds them."""
    return frame[DECISION_COLUMNS].reset_index(drop=True)


def status_counts(frame: pd.DataFrame) -> dict[str, int]:
    """Messages per status, every status present (zero when none)."""
    counts = frame["status"].value_counts()
    return {s: int(counts.get(s, 0)) for s in STATUSES}


def rule_options(frame: pd.DataFrame) -> list[str]:
    """The rules that occur, sorted, for the rule filter."""
    return sorted(r for r in frame["rule"].unique() if r)


def role_tokens(roles: Sequence[str], tokens: Sequence[int]) -> dict[str, int]:
    """Tokens per role, every role present (zero when none), in ``ROLES`` order."""
    out = {r: 0 for r in ROLES}
    for role, n in zip(roles, tokens):
        out[role] = out.get(role, 0) + int(n)
    return out


def context_frame(samples: Sequence[Mapping]) -> pd.DataFrame:
    """Long frame of the context the model receives at each sampled turn.

    Each sample is ``{"turn": t, "after": {role: tokens}}`` (and optionally
    ``"before"``); the frame has one row per (turn, stage, role).
    """
    rows = []
    for s in samples:
        for stage in ("before", "after"):
            for role, n in (s.get(stage) or {}).items():
                rows.append({"turn": int(s["turn"]), "stage": stage, "role": role, "tokens": int(n)})
    return pd.DataFrame(rows, columns=["turn", "stage", "role", "tokens"])


def context_before_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The unpruned context at every turn (everything up to it), by role, from a messages frame.

    Cheap and exact, so it is shown for every turn even when the pruned
    context is only computed for a sample of turns.
    """
    if frame.empty:
        return pd.DataFrame(columns=["turn", "stage", "role", "tokens"])
    per_turn = frame.groupby(["turn", "role"])["tokens"].sum().unstack("role", fill_value=0)
    turns = range(int(frame["turn"].min()), int(frame["turn"].max()) + 1)
    per_turn = per_turn.reindex(index=turns, columns=list(ROLES), fill_value=0).cumsum()
    long = per_turn.stack().rename("tokens").reset_index()
    long.columns = ["turn", "role", "tokens"]
    long["stage"] = "before"
    return long[["turn", "stage", "role", "tokens"]].astype({"turn": int, "tokens": int})


def context_totals_frame(before: pd.DataFrame, after: Sequence[tuple[int, int]]) -> pd.DataFrame:
    """Total context per turn: ``before`` (a long frame, every turn) beside ``after`` ((turn, tokens) pairs,
    every turn or some); columns ``turn``, ``before``, ``after`` (NaN where not computed)."""
    totals = before.groupby("turn")["tokens"].sum() if len(before) else pd.Series(dtype=float)
    frame = pd.DataFrame({"turn": totals.index.astype(int), "before": totals.to_numpy()})
    if after:
        pairs = pd.DataFrame(list(after), columns=["turn", "after"])
        frame = frame.merge(pairs, on="turn", how="outer")
    else:
        frame["after"] = float("nan")
    return frame.sort_values("turn").reset_index(drop=True)


def context_totals(context: pd.DataFrame) -> pd.DataFrame:
    """Total context tokens per turn: columns ``turn``, ``before``, ``after`` (NaN where not computed)."""
    if context.empty:
        return pd.DataFrame(columns=["turn", "before", "after"])
    wide = context.groupby(["turn", "stage"])["tokens"].sum().unstack("stage")
    wide = wide.reindex(columns=["before", "after"]).reset_index()
    wide.columns.name = None
    return wide


def status_changes(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Messages whose status differs between two frames of the same session (the guide's steps)."""
    merged = before[["position", "id", "turn", "role", "status"]].merge(
        after[["position", "status", "rule", "reason", "related"]], on="position",
        suffixes=("_before", ""))
    changed = merged[merged["status_before"] != merged["status"]]
    return changed.rename(columns={"status_before": "was"})[
        ["position", "turn", "role", "id", "was", "status", "rule", "reason", "related"]].reset_index(drop=True)


def recorded_compactions_frame(rows: Sequence[Mapping]) -> pd.DataFrame:
    """``compare_recorded`` rows flattened: the recorded cut beside the computed one."""
    out = []
    for r in rows:
        rec = r.get("recorded") or {}
        comp = r.get("computed") or {}
        out.append({
            "entry": r.get("entry_id") or "", "at position": r.get("position_index"),
            "recorded first kept #": rec.get("first_kept_index"),
            "recorded first kept id": rec.get("first_kept_message_id") or "",
            "recorded tokens before": rec.get("tokens_before"),
            "computed first kept #": comp.get("first_kept_index"),
            "computed first kept id": comp.get("first_kept_message_id") or "",
            "computed splits a turn": comp.get("split_turn"),
            "computed tokens before": comp.get("tokens_before"),
            "same cut": r.get("same_cut"),
            "why": comp.get("reason") or "",
        })
    return pd.DataFrame(out)


# ---------------------------------------------------------------- benchmark results

BENCH_COLUMNS = ["workload", "turns", "seed", "messages_before", "messages_after", "tokens_before", "tokens_after",
                 "reduction_pct", "oracle_reduction_pct", "pct_of_oracle", "truncation_reduction_pct",
                 "tagged_facts", "tagged_facts_missing", "truncation_tagged_facts_missing", "untagged_facts_lost",
                 "truncation_untagged_facts_lost", "live_items_lost", "truncation_live_items_lost", "idempotent",
                 "prune_ms", "ms_per_1000_messages"]


def bench_rows_frame(rows: Sequence[Mapping]) -> pd.DataFrame:
    """The benchmark rows as a flat frame (nested per-rule counts left out), in run order."""
    frame = pd.DataFrame([{k: v for k, v in r.items() if not isinstance(v, (dict, list))} for r in rows])
    columns = [c for c in BENCH_COLUMNS if c in frame.columns]
    return frame[columns + [c for c in frame.columns if c not in columns]] if len(frame) else frame


def bench_by_size(rows: Sequence[Mapping]) -> pd.DataFrame:
    """Means over seeds for every (workload, turns), sorted; ``config`` labels the pair for bar charts."""
    frame = bench_rows_frame(rows)
    if frame.empty:
        return frame
    numeric = [c for c in frame.columns if c not in ("workload", "turns", "seed")
               and pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])]
    means = frame.groupby(["workload", "turns"], sort=True)[numeric].mean().reset_index()
    means["config"] = means["workload"] + " · " + means["turns"].astype(str)
    return means


def baselines_frame(by_size: pd.DataFrame) -> pd.DataFrame:
    """Long frame: reduction % and tagged facts missing for pruner, oracle and truncation per config."""
    rows = []
    for _, r in by_size.iterrows():
        for method, red, missing in (("pruner", "reduction_pct", "tagged_facts_missing"),
                                     ("oracle", "oracle_reduction_pct", None),
                                     ("truncation", "truncation_reduction_pct", "truncation_tagged_facts_missing")):
            rows.append({"config": r["config"], "workload": r["workload"], "turns": int(r["turns"]),
                         "method": method, "reduction_pct": r.get(red),
                         "tagged_facts_missing": r.get(missing) if missing else 0.0})
    return pd.DataFrame(rows, columns=["config", "workload", "turns", "method", "reduction_pct",
                                       "tagged_facts_missing"])


def _range(stats: Mapping | None, digits: int = 1) -> str:
    if not stats or stats.get("min") is None:
        return "n/a"
    return (f"{stats['min']:.{digits}f} – {stats['max']:.{digits}f} "
            f"(mean {stats['mean']:.{digits}f})")


def bench_summary_frame(summary: Mapping) -> pd.DataFrame:
    """The computed SUMMARY as a table: one row per workload, ranges as 'min – max (mean)'."""
    rows = []
    for name, w in (summary.get("per_workload") or {}).items():
        rows.append({"workload": name, "token reduction %": _range(w.get("reduction_pct")),
                     "oracle reduction %": _range(w.get("oracle_reduction_pct")),
                     "% of oracle": _range(w.get("pct_of_oracle")),
                     "ms per 1,000 messages": _range(w.get("ms_per_1000_messages"), 2),
                     "facts lost by truncation": w.get("truncation_tagged_facts_missing")})
    return pd.DataFrame(rows)


def bench_headline(summary: Mapping) -> dict[str, str]:
    """'N/M' strings for the summary's counted checks."""
    def count(key):
        value = summary.get(key) or {}
        return f"{value.get('count', 0)}/{value.get('of', 0)}"
    return {"tagged facts preserved": count("tagged_facts_preserved"), "idempotent": count("idempotent"),
            "untagged facts lost": f"{summary.get('untagged_facts_lost', 0)}/{summary.get('untagged_facts', 0)}",
            "configurations": str(summary.get("configurations", 0))}


def baselines_wide(baselines: pd.DataFrame, value: str) -> pd.DataFrame:
    """One row per config (in workload, size order), one column per method, for grouped bars."""
    order = list(dict.fromkeys(baselines["config"]))
    wide = baselines.pivot(index="config", columns="method", values=value).reindex(order)
    wide.columns.name = None
    return wide.reset_index()


def cost_findings_frame(summary: dict) -> pd.DataFrame:
    """The benchmark's cost findings as one row per workload and size: the cheapest strategy and its
    dollars beside full's, cache_aware_prune against its peers, and where pruning cost more than full.

    >>> f = cost_findings_frame({"cheapest": [{"workload": "w", "turns": 50, "strategy": "compact",
    ...     "dollars": 1.0, "full": 2.0}], "pruning_dearer_than_full": [], "cache_aware_prune": []})
    >>> row = f.iloc[0]
    >>> row["cheapest"], float(row["its dollars"]), float(row["full dollars"]), float(row["saves vs full %"])
    ('compact', 1.0, 2.0, 50.0)
    """
    if not summary or not summary.get("cheapest"):
        return pd.DataFrame()
    cache_aware = {(v["workload"], v["turns"]): v for v in summary.get("cache_aware_prune") or ()}
    dearer: dict = {}
    for d in summary.get("pruning_dearer_than_full") or ():
        dearer.setdefault((d["workload"], d["turns"]), []).append(f"{d['strategy']} {d['pct']:+.1f} %")
    rows = []
    for c in summary["cheapest"]:
        key = (c["workload"], c["turns"])
        v = cache_aware.get(key)
        infeasible = list(c.get("infeasible") or ())
        # full that could not run (a request over the window) has dollars only up to that request:
        # no saving is measured against that partial bill
        full = c["full"] if "full" not in infeasible else None
        rows.append({"workload": c["workload"], "turns": c["turns"], "cheapest": c["strategy"],
                     "its dollars": c["dollars"], "full dollars": full,
                     "saves vs full %": round(100 * (1 - c["dollars"] / full), 1) if full else None,
                     "cache_aware_prune dollars": v["dollars"] if v else None,
                     "cache_aware_prune vs full %": v.get("vs_full_pct") if v else None,
                     "pruning dearer than full": "; ".join(dearer.get(key, [])),
                     "could not run": ", ".join(infeasible)})
    return pd.DataFrame(rows)


def cost_findings_table(frame: pd.DataFrame):
    """``cost_findings_frame`` as the page shows it: money, thousands and percentages formatted, a dash
    where there is no figure (full could not run, or no strategy cost more than full).

    >>> f = cost_findings_frame({"cheapest": [{"workload": "w", "turns": 1000, "strategy": "compact",
    ...     "dollars": 35.2, "full": 19.3, "infeasible": ["full"]}]})
    >>> html = cost_findings_table(f).to_html()
    >>> "$35.20" in html, "$19.30" in html, "1,000" in html, ">full<" in html
    (True, False, True, True)
    """
    shown = frame.rename(columns={"its dollars": "its $", "full dollars": "full $", "saves vs full %": "saves vs full",
                                  "cache_aware_prune dollars": "cache_aware_prune $",
                                  "cache_aware_prune vs full %": "… vs full"})
    money = "${:,.2f}".format
    figures = ["turns", "its $", "full $", "saves vs full", "cache_aware_prune $", "… vs full"]
    return (shown.style.hide(axis="index")
            .format({"turns": "{:,}".format, "its $": money, "full $": money, "cache_aware_prune $": money,
                     "saves vs full": "{:.1f}\u00a0%".format, "… vs full": "{:+.1f}\u00a0%".format}, na_rep="—")
            .format(lambda text: text.replace(" %", "\u00a0%") if text else "—",
                    subset=["pruning dearer than full", "could not run"])
            .set_properties(subset=figures, **{"white-space": "nowrap"}))  # a figure is never split over lines
