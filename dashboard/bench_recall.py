"""The Benchmarks page's context recall (issue 20): each strategy's recall against the session's size
beside its dollars, and how far recall agrees with the generated ground truth. Pure builders (no
Streamlit), tested through their spec.

>>> rows = [{"workload": "w", "turns": t, "seed": 0, "cost": {"full": {"dollars": 1.0 * t,
...          "context_recall": 1.0, "reply_facts_missing": 0}}} for t in (50, 200)]
>>> [round(y) for y in recall_figure(recall_frame(rows), "w").data[0].y]
[100, 100]
"""

from __future__ import annotations

import html
from typing import Any, Mapping

import pandas as pd
import plotly.graph_objects as go

from dashboard.replay_charts import colour, turns_axis

COLUMNS = ["workload", "turns", "seed", "strategy", "recall_pct", "dollars", "feasible", "facts_missing",
           "needs_missing"]


def recall_frame(rows: list[dict]) -> pd.DataFrame:
    """One row per configuration and strategy with a recall figure: recall in percent, dollars, whether
    it could run, the facts and the needs (facts and copies holding a term) its contexts missed at the
    replies that used them."""
    out = []
    for r in rows:
        for name, c in (r.get("cost") or {}).items():
            if "context_recall" not in c:
                continue
            copies = c.get("reply_copies_missing", 0) - c.get("reply_copies_without_terms", 0)
            out.append({"workload": r["workload"], "turns": r["turns"], "seed": r["seed"], "strategy": name,
                        "recall_pct": 100 * c["context_recall"], "dollars": c["dollars"],
                        "feasible": c.get("feasible", True), "facts_missing": c.get("reply_facts_missing", 0),
                        "needs_missing": c.get("reply_facts_missing", 0) + copies})
    return pd.DataFrame(out, columns=COLUMNS)


def recall_figure(frame: pd.DataFrame, workload: str) -> go.Figure:
    """Context recall per strategy against the session's size, for one workload (mean over seeds); an
    infeasible strategy's points are hollow (a request over the window: it could not have run)."""
    part = frame[frame["workload"] == workload].groupby(["strategy", "turns"], sort=False, as_index=False).agg(
        recall=("recall_pct", "mean"), dollars=("dollars", "mean"), feasible=("feasible", "all"),
        needs=("needs_missing", "max"))
    fig = go.Figure()
    for k, (name, p) in enumerate(part.groupby("strategy", sort=False)):
        p = p.sort_values("turns")
        fig.add_trace(go.Scatter(
            x=p["turns"].tolist(), y=p["recall"].tolist(), mode="lines+markers", name=name,
            line={"color": colour(name, k), "width": 2},
            marker={"symbol": ["circle" if f else "circle-open" for f in p["feasible"]], "size": 8},
            customdata=list(zip(p["dollars"].tolist(), p["needs"].tolist(),
                                ["" if f else " (could not run: a request over the window)" for f in p["feasible"]])),
            hovertemplate=f"<b>{html.escape(name)}</b> · %{{x:,}} turns<br>recall %{{y:.1f}} %<br>"
                          "$%{customdata[0]:,.2f}%{customdata[2]}<br>needs missing at the replies: "
                          "%{customdata[1]:,}<extra></extra>"))
    sizes = sorted({int(t) for t in part["turns"]})
    low = min([*part["recall"].tolist(), 100.0])
    fig.update_layout(title=f"Context recall per strategy: {workload}", xaxis_title="turns (log)",
                      yaxis_title="recall (%)", height=420, margin={"l": 60, "r": 20, "t": 50, "b": 40},
                      legend={"orientation": "h", "y": -0.25, "yanchor": "top"})
    turns_axis(fig, sizes)
    fig.update_yaxes(range=[max(0.0, low - 2), 100.5], ticksuffix=" %")
    return fig


def agreement_frame(recall: Mapping[str, Any]) -> pd.DataFrame:
    """The SUMMARY's validation of recall against the ground truth, one check a row (empty for results
    without it)."""
    n = recall.get("configurations") or 0
    if not n:
        return pd.DataFrame(columns=["check", "agrees", "of"])
    rows = [("every request whose reply needs a missing fact shows a recall loss there (configurations)",
             recall["requests_agree"], n),
            ("… the requests themselves", recall["reply_facts_missing"] - recall["reply_facts_unseen"],
             recall["reply_facts_missing"]),
            ("strategies ordered alike by recall and by the needs missing (facts, copies holding a term)",
             recall["order_agrees"], n)]
    if "order_agrees_all_needs" in recall:
        rows.append(("… counting the copies of plain words too (which recall cannot see)",
                     recall["order_agrees_all_needs"], n))
    if recall.get("labelled_configurations"):
        rows.append(("facts alone: recall at the replies that use one against facts missing there",
                     recall["labelled_order_agrees"], recall["labelled_configurations"]))
    return pd.DataFrame(rows, columns=["check", "agrees", "of"])
