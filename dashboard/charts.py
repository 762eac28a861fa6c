"""Pure plotly figure builders for the dashboard's other charts (no Streamlit; tested on their JSON).

The timeline has its own module (``timeline.py``). No transcript text reaches
these charts: they show counts, sizes and benchmark figures.

>>> fig = status_bar_figure({"kept": 3, "expired": 1})
>>> list(fig.data[0].y)
[3, 1, 0, 0]
"""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go

from pruner.model import ROLES, STATUSES

from .theme import AFTER_COLOUR, BEFORE_COLOUR, ROLE_COLOURS, STATUS_COLOURS


def context_figure(totals: pd.DataFrame, *, sampled: bool = False) -> go.Figure:
    """Tokens the model receives at each turn, before and after pruning (not a running total)."""
    fig = go.Figure()
    for stage, colour, dash in (("before", BEFORE_COLOUR, "dash"), ("after", AFTER_COLOUR, "solid")):
        rows = totals[totals[stage].notna()] if stage in totals else totals.iloc[0:0]
        if rows.empty:
            continue  # e.g. the pruned context of a long session not computed yet
        fig.add_trace(go.Scatter(x=rows["turn"].tolist(), y=[int(v) for v in rows[stage]],
                                 mode="lines+markers" if len(rows) <= 200 else "lines",
                                 name=f"{stage} pruning", line={"color": colour, "dash": dash},
                                 hovertemplate="turn %{x}: %{y:,} tokens<extra>" + stage + "</extra>"))
    note = " (sampled turns)" if sampled else ""
    fig.update_layout(title={"text": "Context size at each turn" + note}, height=340,
                      xaxis={"title": {"text": "turn"}}, yaxis={"title": {"text": "tokens in the context"}},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
                      margin={"l": 10, "r": 10, "t": 60, "b": 40})
    return fig


def composition_figure(context: pd.DataFrame, *, stage: str = "after") -> go.Figure:
    """What the context at each turn is made of, by role (stacked areas)."""
    part = context[context["stage"] == stage]
    fig = go.Figure()
    for role in ROLES:
        rows = part[part["role"] == role].sort_values("turn")
        if rows.empty or not rows["tokens"].any():
            continue
        fig.add_trace(go.Scatter(x=rows["turn"].tolist(), y=rows["tokens"].tolist(), name=role,
                                 stackgroup="roles", mode="lines", line={"color": ROLE_COLOURS[role], "width": 0.5},
                                 hovertemplate="turn %{x}: %{y:,} tokens<extra>" + role + "</extra>"))
    fig.update_layout(title={"text": f"Context composition by role ({stage} pruning)"}, height=340,
                      xaxis={"title": {"text": "turn"}}, yaxis={"title": {"text": "tokens"}},
                      legend={"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"},
                      margin={"l": 10, "r": 10, "t": 50, "b": 40})
    return fig


def loading_figure(text: str) -> go.Figure:
    """A small empty chart with a message, shown while the first session of a visit is prepared."""
    fig = go.Figure()
    fig.update_layout(height=80, margin={"l": 0, "r": 0, "t": 0, "b": 0},
                      xaxis={"visible": False}, yaxis={"visible": False},
                      annotations=[{"text": text, "showarrow": False, "xref": "paper", "yref": "paper",
                                    "x": 0.5, "y": 0.5}])
    return fig


def status_bar_figure(counts: Mapping[str, int], *, title: str = "Messages per status") -> go.Figure:
    """One bar per status in the status colours."""
    fig = go.Figure(go.Bar(x=list(STATUSES), y=[counts.get(s, 0) for s in STATUSES],
                           marker={"color": [STATUS_COLOURS[s] for s in STATUSES]},
                           hovertemplate="%{x}: %{y:,}<extra></extra>"))
    fig.update_layout(title={"text": title}, height=260, margin={"l": 10, "r": 10, "t": 50, "b": 30})
    return fig


def compaction_tokens_figure(before: int, after: int, cache_invalidated: int) -> go.Figure:
    """Tokens before and after compaction, and how many lose their prompt-cache hit."""
    labels = ["before", "after", "re-processed (cache miss)"]
    values = [before, after, cache_invalidated]
    colours = [BEFORE_COLOUR, AFTER_COLOUR, STATUS_COLOURS["expired"]]
    fig = go.Figure(go.Bar(x=labels, y=values, marker={"color": colours},
                           hovertemplate="%{x}: %{y:,} tokens<extra></extra>"))
    fig.update_layout(title={"text": "Compaction: context tokens"}, height=280,
                      margin={"l": 10, "r": 10, "t": 50, "b": 30})
    return fig


def line_by_group_figure(frame: pd.DataFrame, *, x: str, y: str, group: str, title: str,
                         x_title: str, y_title: str, log_x: bool = False, log_y: bool = False,
                         error: str | None = None, dash_by: Mapping[str, str] | None = None,
                         colours: Mapping[str, str] | None = None) -> go.Figure:
    """One line per ``group`` value of ``y`` against ``x`` (the benchmark charts)."""
    fig = go.Figure()
    for name in sorted(frame[group].astype(str).unique()):
        rows = frame[frame[group].astype(str) == name].sort_values(x)
        err = None
        if error and error in rows:
            err = {"type": "data", "array": rows[error].tolist(), "visible": True}
        fig.add_trace(go.Scatter(
            x=rows[x].tolist(), y=rows[y].tolist(), mode="lines+markers", name=name, error_y=err,
            line={"dash": (dash_by or {}).get(name, "solid"),
                  **({"color": colours[name]} if colours and name in colours else {})},
            hovertemplate=f"{name}<br>{x_title} %{{x}}: %{{y:,.4g}}<extra></extra>"))
    xaxis = {"title": {"text": x_title}, "type": "log" if log_x else "linear"}
    if log_x and len(frame):  # label the measured sizes, not plotly's 2-5-10 log ticks
        xaxis |= {"tickmode": "array", "tickvals": sorted(frame[x].unique().tolist()),
                  "ticktext": [f"{v:,.0f}" for v in sorted(frame[x].unique().tolist())]}
    fig.update_layout(title={"text": title}, height=360, xaxis=xaxis,
                      yaxis={"title": {"text": y_title}, "type": "log" if log_y else "linear"},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
                      margin={"l": 10, "r": 10, "t": 60, "b": 40})
    return fig


def grouped_bar_figure(frame: pd.DataFrame, *, x: str, ys: Sequence[str], names: Sequence[str],
                       colours: Sequence[str], title: str, y_title: str, log_y: bool = False) -> go.Figure:
    """Bars of several columns side by side for each ``x`` value."""
    fig = go.Figure()
    for col, name, colour in zip(ys, names, colours):
        fig.add_trace(go.Bar(x=frame[x].astype(str).tolist(), y=frame[col].tolist(), name=name,
                             marker={"color": colour}, hovertemplate="%{x}: %{y:,.4g}<extra>" + name + "</extra>"))
    fig.update_layout(title={"text": title}, barmode="group", height=360,
                      yaxis={"title": {"text": y_title}, "type": "log" if log_y else "linear"},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
                      margin={"l": 10, "r": 10, "t": 60, "b": 40})
    return fig
