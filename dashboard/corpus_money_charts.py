"""Pure plotly builders for the Corpus page on a logs folder (no Streamlit; tested on their JSON).

Every bar carries its value as text; names from file systems are HTML-escaped.

>>> import pandas as pd
>>> fig = bars(pd.DataFrame({"project": ["a", "b"], "dollars": [12.5, 3.0]}), "project", "Dollars by project")
>>> list(fig.data[0].text)  # bottom to top: the largest is drawn on top
['$3.00', '$12.50']
"""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go

from .corpus_charts import FORMAT_PALETTE
from pruner.money import money

_MARGIN = {"l": 10, "r": 10, "t": 60, "b": 40}


def _esc(value) -> str:
    return html.escape(str(value), quote=True)


def stacked_days(frame: pd.DataFrame, title: str) -> go.Figure:
    """Dollars per day, one stacked bar segment per group (project or model); totals above the bars.

    Days run in calendar order whatever order the groups bring them in, and a segment that is its
    day's whole bill carries no label of its own (the total above says it once).
    """
    fig = go.Figure()
    groups = sorted(frame["group"].unique()) if len(frame) else []
    totals = frame.groupby("day", as_index=False)["dollars"].sum() if len(frame) else frame
    segments = frame.groupby("day")["group"].transform("size") if len(frame) else pd.Series(dtype=int)
    for i, g in enumerate(groups):
        part = frame[frame["group"] == g]
        alone = segments[part.index] == 1
        fig.add_bar(x=part["day"], y=part["dollars"], name=_esc(g),
                    marker_color=FORMAT_PALETTE[i % len(FORMAT_PALETTE)],
                    text=["" if a else money(v) for v, a in zip(part["dollars"], alone)], textposition="inside",
                    customdata=[money(v) for v in part["dollars"]],
                    hovertemplate=f"{_esc(g)}<br>%{{x}}: %{{customdata}}<extra></extra>")
    if len(totals):
        fig.add_scatter(x=totals["day"], y=totals["dollars"], mode="text", text=[money(v) for v in totals["dollars"]],
                        textposition="top center", showlegend=False, hoverinfo="skip")
    days = sorted(str(d) for d in totals["day"]) if len(totals) else []
    fig.update_layout(barmode="stack", title=title, margin=_MARGIN, yaxis_title="USD", yaxis_tickprefix="$",
                      yaxis_tickformat=",.2f", legend_title_text="",
                      xaxis={"type": "category", "categoryorder": "array", "categoryarray": days})
    return fig


def bars(frame: pd.DataFrame, column: str, title: str) -> go.Figure:
    """Horizontal dollars per ``column`` value, largest on top, the value on each bar."""
    ordered = frame.iloc[::-1]
    fig = go.Figure(go.Bar(x=ordered["dollars"], y=[_esc(v) for v in ordered[column]], orientation="h",
                           text=[money(v) for v in ordered["dollars"]], textposition="auto",
                           marker_color=FORMAT_PALETTE[0], hovertemplate="%{y}: %{text}<extra></extra>"))
    fig.update_layout(title=title, margin=_MARGIN, xaxis_title="USD", xaxis_tickprefix="$",
                      xaxis_tickformat=",.2f", height=max(260, 60 + 28 * len(frame)))
    return fig


def causes_figure(causes: pd.DataFrame) -> go.Figure:
    """Re-billed dollars by miss cause, each bar labelled with dollars and share of the bill."""
    shown = causes[causes["dollars"] > 0].sort_values("dollars")
    fig = go.Figure(go.Bar(x=shown["dollars"], y=shown["cause"], orientation="h",
                           text=[f"{money(d)} ({100 * s:.1f} %)" for d, s in zip(shown["dollars"], shown["share"])],
                           textposition="auto", marker_color=FORMAT_PALETTE[5],
                           customdata=shown["misses"],
                           hovertemplate="%{y}: %{text}, %{customdata:,} misses<extra></extra>"))
    fig.update_layout(title="Paid above a cache hit, by miss cause", margin=_MARGIN, xaxis_title="USD",
                      xaxis_tickprefix="$", height=max(260, 60 + 28 * len(shown)))
    return fig


def strategy_figure(points: pd.DataFrame) -> go.Figure:
    """One point per strategy: dollars against context recall (the recording a star); a strategy not
    feasible in every session is hollow. Each point is its own legend entry with its dollars (labels
    beside points ran into each other where strategies cost and kept nearly the same). Without recall
    measured, the x axis is the strategy.

    >>> pts = pd.DataFrame({"strategy": ["as_recorded", "compact"], "dollars": [2.0, 1.5], "sessions": [3, 3],
    ...     "feasible_sessions": [3, 2], "feasible": [True, False], "recall": [1.0, 0.97],
    ...     "recording": [True, False]})
    >>> fig = strategy_figure(pts)
    >>> [(t.name, t.marker.symbol) for t in fig.data]
    [('as_recorded $2.00 (the recording)', 'star'), ('compact $1.50 over 2 of 3, recall 97.0 %', 'circle-open')]
    """
    from .replay_charts import colour

    has_recall = points["recall"].notna().any()
    fig = go.Figure()
    for k, p in enumerate(points.itertuples(index=False)):
        recall = "" if pd.isna(p.recall) else f", recall {100 * p.recall:.1f} %"
        # a sum over fewer sessions than the others says so (it left out those it could not run on)
        some = "" if p.feasible_sessions == p.sessions else f" over {p.feasible_sessions:,} of {p.sessions:,}"
        name = f"{_esc(p.strategy)} {money(p.dollars)}{some}" + (" (the recording)" if p.recording else recall)
        fig.add_scatter(
            x=[p.recall if has_recall else _esc(p.strategy)], y=[p.dollars], mode="markers", name=name,
            marker={"size": 16 if p.recording else 13, "color": colour(p.strategy, k),
                    "symbol": "star" if p.recording else ("circle" if p.feasible else "circle-open"),
                    "line": {"width": 2, "color": colour(p.strategy, k)}},
            customdata=[[_esc(p.strategy), money(p.dollars), p.feasible_sessions, p.sessions]],
            hovertemplate="%{customdata[0]}: %{customdata[1]}, feasible in %{customdata[2]:,} of "
                          "%{customdata[3]:,} sessions<extra></extra>")
    fig.update_layout(title="What each strategy would have cost" + (" and kept" if has_recall else ""),
                      margin=_MARGIN, yaxis_title="USD", yaxis_tickprefix="$", yaxis_tickformat=",.2f",
                      xaxis_title="context recall" if has_recall else "strategy", legend_title_text="")
    if has_recall:
        fig.update_xaxes(tickformat=".1%")
    return fig
