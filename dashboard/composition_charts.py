"""Pure plotly builders for what fills the context and for a session's chains (no Streamlit; tested on
their JSON spec).

``composition_figure`` stacks a ``pruner.replay.composition.Composition``: one area per kind over the
requests, each kind's share at the last request in its legend entry; tools beyond the largest few are
one "other tools" area. ``chains_figure`` draws each chain (the main conversation, each subagent) as
its own lane of requests. Tool and chain names come from transcripts: every one is HTML-escaped.

>>> from pruner.replay.composition import Composition
>>> c = Composition("full", "main", (0, 1), (1, 1), ("user", "file reads"), ((10, 0), (10, 30)))
>>> [t.name for t in composition_figure(c).data]
['user (25.0 % at the end)', 'file reads (75.0 % at the end)']
"""

from __future__ import annotations

import html
from typing import Sequence

import pandas as pd
import plotly.graph_objects as go

from pruner.replay.composition import (ASSISTANT, DOCUMENTS, FILE_READS, PLACEHOLDERS, SUMMARIES, SYSTEM,
                                       TOOL_PREFIX, USER, Composition)

from .theme import KIND_COLOURS, OTHER_TOOLS_COLOUR, TOOL_COLOURS  # the kinds' and tools' palettes

assert set(KIND_COLOURS) == {SYSTEM, USER, ASSISTANT, FILE_READS, DOCUMENTS, SUMMARIES, PLACEHOLDERS}
OTHER_TOOLS = "other tools"
#: Tools drawn on their own; the rest are one area (a session may call dozens of MCP tools).
TOP_TOOLS = len(TOOL_COLOURS)


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def grouped(comp: Composition, top_tools: int = TOP_TOOLS) -> tuple[list[str], list[list[int]]]:
    """The kinds to draw and their tokens per request: the ``top_tools`` tools that sent most on their
    own, the others summed into ``OTHER_TOOLS`` (placed after the last tool)."""
    sent = comp.sent()
    tools = [k for k in comp.kinds if k.startswith(TOOL_PREFIX)]
    keep = set(sorted(tools, key=lambda k: (-sent[k], k))[:top_tools])
    last_tool = tools[-1] if tools else None
    names: list[str] = []
    columns: list[list[int]] = []
    other: list[int] | None = None
    for i, kind in enumerate(comp.kinds):
        column = [row[i] for row in comp.tokens]
        if kind in keep or not kind.startswith(TOOL_PREFIX):
            names.append(kind)
            columns.append(column)
        else:
            other = column if other is None else [a + b for a, b in zip(other, column)]
        if kind == last_tool and other is not None:
            names.append(OTHER_TOOLS)
            columns.append(other)
    return names, columns


def _colour(kind: str, tool_order: int) -> str:
    if kind in KIND_COLOURS:
        return KIND_COLOURS[kind]
    if kind == OTHER_TOOLS:
        return OTHER_TOOLS_COLOUR
    return TOOL_COLOURS[tool_order % len(TOOL_COLOURS)]


def composition_figure(comp: Composition, *, title: str = "", top_tools: int = TOP_TOOLS,
                       height: int = 460) -> go.Figure:
    """Tokens per kind at each request, stacked; each kind's share at the last request in the legend."""
    names, columns = grouped(comp, top_tools)
    last = [c[-1] if c else 0 for c in columns]
    total = sum(last)
    fig = go.Figure()
    tool_order = 0
    x = list(comp.requests)
    for name, column, end in zip(names, columns, last):
        if not any(column):
            continue
        colour = _colour(name, tool_order)
        if name.startswith(TOOL_PREFIX):
            tool_order += 1
        share = 100 * end / total if total else 0.0
        label = f"{_esc(name)} ({share:.1f} % at the end)"
        fig.add_trace(go.Scatter(x=x, y=column, name=label, stackgroup="kinds", mode="lines",
                                 line={"color": colour, "width": 0.5}, fillcolor=colour,
                                 hovertemplate="request %{x:,}: %{y:,} tokens<extra>" + _esc(name) + "</extra>"))
    fig.update_layout(
        title={"text": _esc(title) or f"What fills the context under {_esc(comp.strategy)}", "font": {"size": 14}},
        height=height, margin={"l": 60, "r": 10, "t": 50, "b": 10}, hovermode="x unified",
        xaxis={"title": {"text": "request (model call)", "standoff": 4}, "rangemode": "tozero"},
        yaxis={"title": {"text": "tokens in the context"}, "rangemode": "tozero"},
        legend={"orientation": "h", "x": 0, "xanchor": "left", "y": -0.3, "yanchor": "top", "font": {"size": 11}})
    return fig


def chains_figure(requests: pd.DataFrame, *, order: Sequence[str] = (), height: int | None = None) -> go.Figure:
    """Each chain's requests on its own lane, top to bottom in ``order`` (the session's chains; others after,
    by first request), x the request number across the session; a marker's area grows with the request's
    dollars. ``requests``: chain, request, context, dollars (NaN: no usage recorded)."""
    fig = go.Figure()
    present = list(dict.fromkeys(requests["chain"])) if len(requests) else []
    chains = [c for c in order if c in present] + [c for c in present if c not in order]
    biggest = float(requests["dollars"].max()) if len(requests) and requests["dollars"].notna().any() else 0.0
    for k, chain in enumerate(chains):
        part = requests[requests["chain"] == chain]
        dollars = part["dollars"].fillna(0.0)
        sizes = [8 + 14 * (d / biggest) ** 0.5 if biggest else 9 for d in dollars]
        label = _esc(chain)
        fig.add_trace(go.Scatter(
            x=part["request"].tolist(), y=[label] * len(part), mode="markers", name=label, showlegend=False,
            marker={"size": sizes, "color": TOOL_COLOURS[k % len(TOOL_COLOURS)] if k else KIND_COLOURS[ASSISTANT],
                    "line": {"width": 0.5, "color": "#333333"}},
            customdata=[[int(c), float(d)] for c, d in zip(part["context"].fillna(0), dollars)],
            hovertemplate=f"<b>{label}</b> · request %{{x:,}}<br>context %{{customdata[0]:,}} tokens<br>"
                          "$%{customdata[1]:,.4f}<extra></extra>"))
    fig.update_layout(height=height or 90 + 38 * max(len(chains), 1), margin={"l": 10, "r": 10, "t": 40, "b": 40},
                      title={"text": "Each chain's requests over the session (marker area: dollars)",
                             "font": {"size": 14}},
                      xaxis={"title": {"text": "request (model call, across every chain)"}, "rangemode": "tozero"},
                      yaxis={"autorange": "reversed", "automargin": True, "type": "category"})
    return fig
