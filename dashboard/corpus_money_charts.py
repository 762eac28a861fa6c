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
    """Dollars per day, one stacked bar segment per group (project or model); totals above the bars."""
    fig = go.Figure()
    groups = sorted(frame["group"].unique()) if len(frame) else []
    for i, g in enumerate(groups):
        part = frame[frame["group"] == g]
        fig.add_bar(x=part["day"], y=part["dollars"], name=_esc(g),
                    marker_color=FORMAT_PALETTE[i % len(FORMAT_PALETTE)], text=[money(v) for v in part["dollars"]],
                    textposition="inside",
                    hovertemplate=f"{_esc(g)}<br>%{{x}}: %{{text}}<extra></extra>")
    totals = frame.groupby("day", as_index=False)["dollars"].sum() if len(frame) else frame
    if len(totals):
        fig.add_scatter(x=totals["day"], y=totals["dollars"], mode="text", text=[money(v) for v in totals["dollars"]],
                        textposition="top center", showlegend=False, hoverinfo="skip")
    fig.update_layout(barmode="stack", title=title, margin=_MARGIN, yaxis_title="USD", xaxis_type="category",
                      yaxis_tickprefix="$", yaxis_tickformat=",.2f", legend_title_text="")
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
    """One point per strategy: dollars against context recall (the recording marked); strategies not
    feasible everywhere drawn hollow. Without recall measured, the x axis is the strategy."""
    has_recall = points["recall"].notna().any()
    fig = go.Figure()
    for recording, part in points.groupby("recording"):
        x = part["recall"] if has_recall else part["strategy"]
        fig.add_scatter(
            x=x, y=part["dollars"], mode="markers+text",
            text=[f"{_esc(n)} {money(v)}" for n, v in zip(part["strategy"], part["dollars"])],
            textposition="top center", name="the recording" if recording else "strategies",
            marker={"size": 14, "symbol": ["star" if recording else ("circle" if f else "circle-open")
                                           for f in part["feasible"]],
                    "color": FORMAT_PALETTE[1] if recording else FORMAT_PALETTE[0]},
            customdata=list(zip(part["strategy"], part["feasible_sessions"], part["sessions"])),
            hovertemplate="%{customdata[0]}: %{text}, feasible in %{customdata[1]:,} of %{customdata[2]:,} "
                          "sessions<extra></extra>")
    fig.update_layout(title="What each strategy would have cost" + (" and kept" if has_recall else ""),
                      margin=_MARGIN, yaxis_title="USD", yaxis_tickprefix="$", yaxis_tickformat=",.2f",
                      xaxis_title="context recall" if has_recall else "strategy")
    if has_recall:
        fig.update_xaxes(tickformat=".1%")
    return fig
