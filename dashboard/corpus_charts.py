"""Pure plotly builders for the Corpus page (no Streamlit; tested on their JSON).

Session names and paths come from transcripts and file systems, so every one
that reaches a hover label or an axis is HTML-escaped (plotly renders a subset
of HTML there).

>>> import pandas as pd
>>> fig = tokens_figure({"tokens_before": 100, "tokens_after": 60})
>>> [list(t.y) for t in fig.data]
[[100, 60]]
"""

from __future__ import annotations

import html
from typing import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .theme import AFTER_COLOUR, BEFORE_COLOUR, FORMAT_COLOURS, STATUS_COLOURS, WORSE_COLOUR

FORMAT_PALETTE = FORMAT_COLOURS
_MARGIN = {"l": 10, "r": 10, "t": 60, "b": 40}


def _esc(value) -> str:
    return html.escape(str(value), quote=True)


def format_colours(formats) -> dict[str, str]:
    return {name: FORMAT_PALETTE[i % len(FORMAT_PALETTE)] for i, name in enumerate(sorted(formats))}


def reduction_bins(frame: pd.DataFrame, *, bin_pct: float = 5.0) -> pd.DataFrame:
    """Sessions per reduction bin and format, counted here so a million sessions send a few hundred numbers."""
    ok = frame[frame["error"].isna()]
    if ok.empty:
        return pd.DataFrame(columns=["format", "low", "sessions"])
    values = ok["reduction_pct"].astype(float)
    low = bin_pct * np.floor(min(0.0, values.min()) / bin_pct)
    high = bin_pct * (np.floor(values.max() / bin_pct) + 1)
    edges = np.arange(low, high + bin_pct / 2, bin_pct)
    rows = []
    for name in sorted(ok["format"].unique()):
        counts, _ = np.histogram(values[ok["format"] == name], bins=edges)
        rows += [{"format": name, "low": float(e), "sessions": int(c)} for e, c in zip(edges[:-1], counts)]
    return pd.DataFrame(rows)


def reduction_histogram(frame: pd.DataFrame, *, bin_pct: float = 5.0) -> go.Figure:
    """How many sessions reach each token reduction, stacked by format."""
    bins = reduction_bins(frame, bin_pct=bin_pct)
    fig = go.Figure()
    colours = format_colours(bins["format"].unique())
    for name in sorted(colours):
        rows = bins[bins["format"] == name]
        fig.add_trace(go.Bar(x=(rows["low"] + bin_pct / 2).tolist(), y=rows["sessions"].tolist(), width=bin_pct,
                             name=_esc(name), marker={"color": colours[name]},
                             hovertemplate=f"%{{x}}% ± {bin_pct / 2:g}: %{{y:,}} sessions<extra>" + _esc(name)
                             + "</extra>"))
    fig.update_layout(title={"text": "Token reduction across sessions"}, barmode="stack", bargap=0, height=360,
                      xaxis={"title": {"text": f"reduction % (tokens removed), in {bin_pct:g}-point bins"}},
                      yaxis={"title": {"text": "sessions"}},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"}, margin=_MARGIN)
    return fig


def format_figure(per_format: pd.DataFrame) -> go.Figure:
    """Token-weighted reduction per format, with the session count on each bar."""
    colours = format_colours(per_format["format"])
    fig = go.Figure(go.Bar(
        x=[_esc(f) for f in per_format["format"]], y=per_format["reduction_pct"].tolist(),
        marker={"color": [colours[f] for f in per_format["format"]]},
        text=[f"{n:,} session{'s' if n != 1 else ''}" for n in per_format["sessions"]], textposition="auto",
        customdata=list(zip(per_format["tokens_before"].astype(int).tolist(),
                            per_format["tokens_after"].astype(int).tolist())),
        hovertemplate="%{x}: %{y:.1f}% fewer tokens<br>%{customdata[0]:,} → %{customdata[1]:,}<extra></extra>"))
    fig.update_layout(title={"text": "Reduction by format (all its tokens)"}, height=360,
                      yaxis={"title": {"text": "reduction %"}}, margin=_MARGIN)
    return fig


def rule_figure(per_rule: pd.DataFrame) -> go.Figure:
    """Messages each rule decided, coloured by the status its decisions carry."""
    colours = [STATUS_COLOURS.get(s, BEFORE_COLOUR) for s in per_rule["status"]]
    fig = go.Figure(go.Bar(
        x=per_rule["messages"].tolist(), y=[_esc(r) for r in per_rule["rule"]], orientation="h",
        marker={"color": colours}, customdata=[_esc(s) for s in per_rule["status"]],
        hovertemplate="%{y}: %{x:,} messages %{customdata}<extra></extra>"))
    fig.update_layout(title={"text": "Messages per rule"}, height=360, margin=_MARGIN,
                      xaxis={"title": {"text": "messages"}}, yaxis={"autorange": "reversed"})
    return fig


def tokens_figure(totals: Mapping[str, int]) -> go.Figure:
    """All tokens of the corpus before and after pruning."""
    fig = go.Figure(go.Bar(x=["before", "after"], y=[totals["tokens_before"], totals["tokens_after"]],
                           marker={"color": [BEFORE_COLOUR, AFTER_COLOUR]},
                           hovertemplate="%{x}: %{y:,} tokens<extra></extra>"))
    fig.update_layout(title={"text": "Tokens in total"}, height=360, yaxis={"title": {"text": "tokens"}},
                      margin=_MARGIN)
    return fig


def dollars_figure(totals: pd.DataFrame) -> go.Figure:
    """What the corpus costs under each replayed strategy (``replay_totals``)."""
    fig = go.Figure(go.Bar(
        x=[_esc(n) for n in totals["strategy"]], y=totals["dollars"].tolist(),
        marker={"color": [BEFORE_COLOUR if n == "full" else AFTER_COLOUR for n in totals["strategy"]]},
        customdata=totals["input_tokens"].astype(int).tolist(),
        hovertemplate="%{x}: $%{y:,.2f}<br>%{customdata:,} input tokens<extra></extra>"))
    fig.update_layout(title={"text": "Dollars per strategy (replay)"}, height=360, margin=_MARGIN,
                      yaxis={"title": {"text": "USD"}})
    return fig


def extremes_figure(rows: pd.DataFrame, *, title: str) -> go.Figure:
    """One bar per session (its reduction); ``customdata`` carries the session id for a click."""
    labels = [_esc(f"{f} #{int(d)}" if pd.notna(d) and int(n or 1) > 1 else f)
              for f, d, n in zip(rows["file"], rows["dialogue"], rows["dialogues"].fillna(1))]
    fig = go.Figure(go.Bar(
        x=rows["reduction_pct"].astype(float).tolist(), y=labels, orientation="h",
        marker={"color": [WORSE_COLOUR if r < 0 else AFTER_COLOUR for r in rows["reduction_pct"]]},
        customdata=list(zip(rows["session_id"].tolist(), rows["tokens_before"].astype(int).tolist(),
                            rows["tokens_after"].astype(int).tolist())),
        hovertemplate="%{y}: %{x:.1f}%<br>%{customdata[1]:,} → %{customdata[2]:,} tokens"
                      "<br>click to open in the Session explorer<extra></extra>"))
    fig.update_layout(title={"text": title}, height=60 + 28 * max(len(rows), 3), margin=_MARGIN,
                      xaxis={"title": {"text": "reduction %"}}, yaxis={"autorange": "reversed"},
                      clickmode="event+select")
    return fig


def clicked_session(event) -> str | None:
    """The session id of the first clicked bar in a Streamlit plotly selection event."""
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):
        return None
    for point in points or ():
        custom = point.get("customdata") if isinstance(point, dict) else None
        if isinstance(custom, dict):
            custom = [custom.get("0", custom.get(0))]
        if isinstance(custom, (list, tuple)) and custom and isinstance(custom[0], str):
            return custom[0]
    return None
