"""Pure plotly figure builders for the dashboard's other charts (no Streamlit; tested on their JSON).

The timeline has its own module (``timeline.py``). No transcript text reaches
these charts: they show counts, sizes and benchmark figures.

>>> fig = status_bar_figure({"kept": 3, "expired": 1})
>>> list(fig.data[0].y)
[3, 1, 0, 0]
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go

from pruner.model import ROLES, STATUSES

from .theme import (AFTER_COLOUR, BEFORE_COLOUR, CACHE_MISS_COLOUR, PRUNER_COLOUR, REFERENCE_COLOUR, ROLE_COLOURS,
                    STATUS_COLOURS, TRUNCATION_COLOUR, WORKLOAD_COLOURS)


RECORDED_COLOUR = "#000000"


def context_figure(totals: pd.DataFrame, *, sampled: bool = False, recorded: Sequence[tuple[int, int]] = (),
                   compactions: Sequence[int] = ()) -> go.Figure:
    """Tokens the model receives at each turn, before and after pruning (not a running total).

    ``recorded``: (turn, tokens) the provider recorded as sent: the context the model really had, drawn
    beside the whole conversation; ``compactions``: the turns of the session's recorded compactions.
    """
    fig = go.Figure()
    whole = "whole conversation, " if compactions else ""
    for stage, colour, dash in (("before", BEFORE_COLOUR, "dash"), ("after", AFTER_COLOUR, "solid")):
        rows = totals[totals[stage].notna()] if stage in totals else totals.iloc[0:0]
        if rows.empty:
            continue  # e.g. the pruned context of a long session not computed yet
        fig.add_trace(go.Scatter(x=rows["turn"].tolist(), y=[int(v) for v in rows[stage]],
                                 mode="lines+markers" if len(rows) <= 200 else "lines",
                                 name=f"{whole}{stage} pruning (tiktoken)" if whole else f"{stage} pruning",
                                 line={"color": colour, "dash": dash},
                                 hovertemplate="turn %{x}: %{y:,} tokens<extra>" + stage + "</extra>"))
    if recorded:
        fig.add_trace(go.Scatter(x=[t for t, _ in recorded], y=[n for _, n in recorded], mode="lines",
                                 name="recorded: what the model was sent (provider's count)",
                                 line={"color": RECORDED_COLOUR, "width": 1.5},
                                 hovertemplate="turn %{x}: %{y:,} tokens sent<extra>recorded</extra>"))
    # one legend entry for the compactions, not a label on each line: two compactions a few turns apart ran
    # their labels together ("recorded compactionrecorded compaction") over the title
    for turn in compactions:
        fig.add_vline(x=turn, line={"color": RECORDED_COLOUR, "width": 1, "dash": "dot"})
    if compactions:
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", hoverinfo="skip",
                                 name=f"recorded compaction{'s' if len(compactions) != 1 else ''} (dotted, turn "
                                      + ", ".join(f"{t:,}" for t in compactions) + ")",
                                 line={"color": RECORDED_COLOUR, "width": 1, "dash": "dot"}))
    note = " (sampled turns)" if sampled else ""
    # the legend under the axis: above the plot it wrapped into the title at 1366 px
    fig.update_layout(title={"text": "Context size at each turn" + note}, height=380,
                      xaxis={"title": {"text": "turn"}}, yaxis={"title": {"text": "tokens in the context"}},
                      legend={"orientation": "h", "y": -0.22, "yanchor": "top", "x": 0},
                      margin={"l": 10, "r": 10, "t": 50, "b": 40})
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


def loading_figure(text: str, *, height: int = 80) -> go.Figure:
    """A small empty chart with a message, shown while the first session of a visit is prepared."""
    fig = go.Figure()
    fig.update_layout(height=height, margin={"l": 0, "r": 0, "t": 0, "b": 0},
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
    colours = [BEFORE_COLOUR, AFTER_COLOUR, CACHE_MISS_COLOUR]
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
    xaxis: dict[str, Any] = {"title": {"text": x_title}, "type": "log" if log_x else "linear"}
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
                      yaxis={"title": {"text": y_title}, "type": "log" if log_y else "linear",
                             **({"dtick": 1} if log_y else {})},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
                      margin={"l": 10, "r": 10, "t": 60, "b": 40})
    return fig


# ---------------------------------------------------------------- benchmark charts

_RUN_DASH = {"committed": "solid", "your run": "dot"}


def _sizes_axis(values, title: str) -> dict:
    """A log axis labelled only at the measured values (no 2-5-10 minor labels, no overlapping ticks)."""
    ticks = sorted({int(v) for v in values})
    return {"title": {"text": title}, "type": "log", "tickmode": "array", "tickvals": ticks,
            "ticktext": [f"{v:,}" for v in ticks], "minor": {"showgrid": False, "ticks": ""}}


def reduction_figure(by_size: pd.DataFrame, reference: Mapping[str, tuple[str, float, float]]) -> go.Figure:
    """Token reduction by workload and size, one line per run, over the reference's published range."""
    fig = go.Figure()
    if by_size.empty:
        return fig
    lo_x, hi_x = float(by_size["turns"].min()), float(by_size["turns"].max())
    for workload, (their, lo, hi) in reference.items():
        if workload not in set(by_size["workload"]):
            continue
        colour = WORKLOAD_COLOURS.get(workload, "#888888")
        fig.add_trace(go.Scatter(
            x=[lo_x, hi_x, hi_x, lo_x, lo_x], y=[lo, lo, hi, hi, lo], fill="toself", mode="lines",
            line={"width": 0}, fillcolor=colour, opacity=0.18, name=f"reference, {their} (published)",
            legendgroup=f"ref-{workload}", hovertemplate=f"reference ({their}), published: {lo:.1f}–{hi:.1f} %"
                                                         "<extra></extra>"))
    for (run, workload), rows in by_size.groupby(["run", "workload"], sort=True):
        rows = rows.sort_values("turns")
        fig.add_trace(go.Scatter(
            x=rows["turns"].tolist(), y=rows["reduction_pct"].tolist(), mode="lines+markers",
            name=f"{workload} ({run})", line={"color": WORKLOAD_COLOURS.get(workload), "dash": _RUN_DASH.get(run)},
            customdata=rows[["messages_before"]].to_numpy().tolist(),
            hovertemplate=f"{workload} ({run})<br>%{{x:,}} turns (%{{customdata[0]:,}} messages): "
                          "%{y:.1f} %<extra></extra>"))
    fig.update_layout(title={"text": "Token reduction by workload and size"}, height=480,
                      xaxis=_sizes_axis(by_size["turns"], "turns"), yaxis={"title": {"text": "reduction %"}},
                      legend={"orientation": "h", "y": -0.22, "yanchor": "top", "x": 0},
                      margin={"l": 10, "r": 10, "t": 50, "b": 40})
    return fig


def prune_time_figure(by_size: pd.DataFrame) -> go.Figure:
    """Prune time against size: x is the turns (one tick per measured size, so labels never collide)."""
    fig = go.Figure()
    for (run, workload), rows in by_size.groupby(["run", "workload"], sort=True):
        rows = rows.sort_values("turns")
        fig.add_trace(go.Scatter(
            x=rows["turns"].tolist(), y=rows["prune_ms"].tolist(), mode="lines+markers",
            name=f"{workload} ({run})", line={"color": WORKLOAD_COLOURS.get(workload), "dash": _RUN_DASH.get(run)},
            customdata=rows[["messages_before", "ms_per_1000_messages"]].to_numpy().tolist(),
            hovertemplate=f"{workload} ({run})<br>%{{x:,}} turns, %{{customdata[0]:,.0f}} messages: %{{y:,.1f}} ms"
                          "<br>%{customdata[1]:.2f} ms per 1,000 messages<extra></extra>"))
    fig.update_layout(title={"text": "Prune time against size (passes only)"},
                      height=440, xaxis=_sizes_axis(by_size["turns"], "turns") if len(by_size) else {},
                      yaxis={"title": {"text": "ms, median of the timing runs (log scale)"}, "type": "log",
                             "dtick": 1},  # powers of ten only: no 2-5 minor labels
                      legend={"orientation": "h", "y": -0.22, "yanchor": "top", "x": 0},
                      margin={"l": 10, "r": 10, "t": 50, "b": 40})
    return fig


def facts_lost_figure(wide: pd.DataFrame) -> go.Figure:
    """Tagged facts lost by pruner and by truncation given the same token budget, said in the chart itself."""
    fig = go.Figure()
    for column, name, colour in (("pruner", "pruner", PRUNER_COLOUR),
                                 ("truncation", "truncation to the same budget", TRUNCATION_COLOUR)):
        fig.add_trace(go.Bar(x=wide["config"].astype(str).tolist(), y=wide[column].tolist(), name=name,
                             marker={"color": colour}, hovertemplate="%{x}: %{y:,.4g} facts lost<extra>" + name
                                                                     + "</extra>"))
    fig.update_layout(
        # the explanation is the title's subtitle: as a free annotation it ran into the title
        title={"text": "Tagged facts lost: pruner vs truncation given the same token budget",
               "subtitle": {"text": "Truncation keeps the system prompt and the newest messages that fit in as "
                                    "many tokens as the pruner keeps."}},
        barmode="group", height=400, yaxis={"title": {"text": "tagged facts missing"}},
        legend={"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 1, "xanchor": "right"},
        margin={"l": 10, "r": 10, "t": 100, "b": 40})
    return fig


def scaling_figure(frame: pd.DataFrame) -> go.Figure:
    """``pruner bench --scaling``: ms per 1,000 messages against size (flat means linear cost)."""
    fig = go.Figure(go.Scatter(
        x=frame["messages"].tolist(), y=frame["ms_per_1000_messages"].tolist(), mode="lines+markers",
        name="pruner", line={"color": PRUNER_COLOUR},
        customdata=frame[["turns", "prune_ms"]].to_numpy().tolist(),
        hovertemplate="%{customdata[0]:,} turns, %{x:,} messages: %{customdata[1]:,.1f} ms<br>"
                      "%{y:.2f} ms per 1,000 messages<extra></extra>"))
    fig.update_layout(title={"text": "Prune time per 1,000 messages (passes only; flat = linear)"}, height=360,
                      xaxis=_sizes_axis(frame["messages"], "messages (tool_agent)"),
                      yaxis={"title": {"text": "ms per 1,000 messages"}, "rangemode": "tozero"},
                      margin={"l": 10, "r": 10, "t": 60, "b": 40})
    return fig


def per_turn_figure(bars: pd.DataFrame, turns: int) -> go.Figure:
    """Total time to re-prune after every turn of one conversation, by method (log scale)."""
    colours = [PRUNER_COLOUR, BEFORE_COLOUR, REFERENCE_COLOUR]  # incremental, full prune, the reference
    fig = go.Figure(go.Bar(
        y=bars["method"].tolist(), x=bars["seconds"].tolist(), orientation="h",
        marker={"color": colours[: len(bars)]}, text=[f"{v:,.2f} s ({s})" for v, s in zip(bars["seconds"],
                                                                                        bars["source"])],
        textposition="outside", cliponaxis=False, hovertemplate="%{y}: %{x:,.2f} s<extra></extra>"))
    # labels stand beside their bars, in a right margin wide enough for the longest ("10.00 s (measured)")
    fig.update_layout(title={"text": f"Re-pruning after every turn of {turns:,} turns"},
                      height=300, xaxis={"title": {"text": "seconds in total (log scale)"}, "type": "log", "dtick": 1},
                      yaxis={"autorange": "reversed", "automargin": True},  # the method names stay whole
                      margin={"l": 10, "r": 150, "t": 60, "b": 40})
    return fig
