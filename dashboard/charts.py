"""Pure plotly figure builders for the dashboard (no Streamlit; unit-tested on their JSON).

Transcript text never reaches a chart except message ids and decision reasons
in hover labels, and those are HTML-escaped: plotly renders a subset of HTML
(links included) in hover text, and a transcript is untrusted input.

>>> import pandas as pd
>>> frame = pd.DataFrame({"position": [0], "id": ["u1"], "turn": [1], "role": ["user"],
...     "status": ["kept"], "rule": [""], "reason": [""], "related": [""], "related_position": [-1],
...     "tokens": [3], "slot": [1.0], "lane": [1]})
>>> fig = timeline_figure(frame)
>>> [t.name for t in fig.data][:2]
['kept (1)', 'expired (0)']
"""

from __future__ import annotations

import html
from typing import Iterable, Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go

from pruner.model import ROLES, STATUSES

from .theme import (AFTER_COLOUR, BEFORE_COLOUR, CUT_COLOUR, RECORDED_CUT_COLOUR, ROLE_COLOURS,
                    STATUS_COLOURS, STATUS_SYMBOLS, SUMMARISED_FILL, status_label)

#: Above this many messages the timeline draws with WebGL (``Scattergl``) so it stays smooth.
WEBGL_THRESHOLD = 1_500
#: At most this many arrows point at the selected message (a popular original can have hundreds).
MAX_INCOMING_ARROWS = 40

#: Hover reasons are cut to this many characters (the inspector shows the full text).
HOVER_REASON_CHARS = 90

# The timeline sends the browser compact per-point data: ``customdata`` is
# ``[position, tokens]`` (plain ints, so a click event carries them back as
# JSON numbers; the turn is the x slot rounded) and ``text`` is the role, plus the rule and a shortened
# reason when they differ inside the trace; a rule and reason shared by every
# mark of a trace (all the kept messages, say) go once into ``meta``. That
# keeps a 12,000-message figure a few hundred kB instead of well over 1 MB.
_HOVER_HEAD = "<b>#%{customdata[0]}</b> · turn %{x:.0f} · %{customdata[1]:,} tokens<br>"
TIMELINE_HOVER = _HOVER_HEAD + "%{text}<extra>%{fullData.name}</extra>"
TIMELINE_HOVER_SHARED = _HOVER_HEAD + "%{text} | rule: %{meta[0]}<br>%{meta[1]}<extra>%{fullData.name}</extra>"


def _esc(value) -> str:
    return html.escape(str(value), quote=True)


def _hover_reason(reason: str) -> str:
    """A reason short enough for a hover label, escaped (after cutting, so no entity is split).

    Only ``&``, ``<`` and ``>`` are escaped: outside a tag a quote is inert, and
    reasons quote tool arguments a lot (``&quot;`` would triple their size).
    Separators are ASCII because the figure JSON escapes anything else.
    """
    flat = " ".join(str(reason).split())
    if len(flat) > HOVER_REASON_CHARS:
        flat = flat[: HOVER_REASON_CHARS - 3] + "..."
    return html.escape(flat, quote=False)


def _slot_at(frame: pd.DataFrame, position: int) -> tuple[float, float] | None:
    row = frame[frame["position"] == position]
    if row.empty:
        return None
    return float(row["slot"].iloc[0]), float(row["lane"].iloc[0])


def _cut_x(frame: pd.DataFrame, cut_position: int) -> float | None:
    """The x between the last summarised message and the first kept one."""
    ordered = frame.sort_values("position")
    before = ordered[ordered["position"] < cut_position]
    after = ordered[ordered["position"] >= cut_position]
    if after.empty:
        return None
    if before.empty:
        return float(after["slot"].iloc[0]) - 0.5
    return (float(before["slot"].iloc[-1]) + float(after["slot"].iloc[0])) / 2


def timeline_figure(frame: pd.DataFrame, *, selected: int | None = None,
                    highlight: Iterable[int] = (), cut: int | None = None,
                    recorded_cut: int | None = None, split_turn: bool = False,
                    webgl_threshold: int = WEBGL_THRESHOLD, title: str = "",
                    revision: str = "") -> go.Figure:
    """Every message as a mark at its turn (x) in its role's lane (y), coloured by status.

    One trace per status, always all four (an absent status shows ``(0)`` in
    the legend), so the legend is the same on every page. ``selected`` (a
    position) gets a ring, an arrow to its related message (removed -> the
    message that replaced it, restored -> the message that needed it) and
    arrows from the messages that point at it. ``highlight`` rings positions
    (the guide's "what changed"). ``cut`` / ``recorded_cut`` draw the
    compaction cut (first kept position) computed here / recorded in the file.
    """
    large = len(frame) > webgl_threshold
    scatter = go.Scattergl if large else go.Scatter
    size = 6 if large else 11
    fig = go.Figure()
    for status in STATUSES:
        part = frame[frame["status"] == status]
        if part.empty:  # keep the legend entry so the four statuses are always explained
            x, y, custom, text, meta, template = [None], [None], [[None, None]], [None], None, TIMELINE_HOVER
        else:
            # numpy arrays for x and y: plotly sends them base64-encoded instead of as JSON numbers
            x, y = part["slot"].to_numpy(dtype="float32"), part["lane"].to_numpy(dtype="int8")
            custom = part[["position", "tokens"]].to_numpy(dtype="int32")
            roles = part["role"].map(_esc)
            rules = part["rule"].map(lambda r: _esc(r) or "none")
            reasons = part["reason"].map(_hover_reason)
            if rules.nunique() == 1 and reasons.nunique() == 1:
                text, template = roles.to_numpy(dtype=str), TIMELINE_HOVER_SHARED
                meta = [rules.iloc[0], reasons.iloc[0]]
            else:
                text = (roles + " | rule: " + rules + "<br>" + reasons).to_numpy(dtype=str)
                meta, template = None, TIMELINE_HOVER
        fig.add_trace(scatter(
            x=x, y=y, mode="markers", name=status_label(status, len(part)), legendgroup=status,
            customdata=custom, text=text, meta=meta, hovertemplate=template,
            marker={"color": STATUS_COLOURS[status], "symbol": STATUS_SYMBOLS[status], "size": size,
                    "line": {"width": 0}}))
    rings = [p for p in highlight]
    if rings:
        pts = [xy for xy in (_slot_at(frame, p) for p in rings) if xy]
        fig.add_trace(scatter(x=[p[0] for p in pts], y=[p[1] for p in pts], mode="markers",
                              name="changed in this step", hoverinfo="skip", showlegend=True,
                              marker={"size": size + 10, "color": CUT_COLOUR, "symbol": "circle-open",
                                      "line": {"width": 2}}))
    annotations = []
    if selected is not None and (here := _slot_at(frame, selected)) is not None:
        fig.add_trace(scatter(x=[here[0]], y=[here[1]], mode="markers", name="selected",
                              hoverinfo="skip", showlegend=False,
                              marker={"size": size + 12, "color": "#000000", "symbol": "circle-open",
                                      "line": {"width": 3}}))
        row = frame[frame["position"] == selected].iloc[0]
        links: list[tuple[int, int, str]] = []  # (from, to, colour)
        if int(row["related_position"]) >= 0:
            links.append((selected, int(row["related_position"]), STATUS_COLOURS.get(row["status"], CUT_COLOUR)))
        incoming = frame[frame["related_position"] == selected].head(MAX_INCOMING_ARROWS)
        links += [(int(p), selected, STATUS_COLOURS.get(s, CUT_COLOUR))
                  for p, s in zip(incoming["position"], incoming["status"])]
        for src, dst, colour in links:
            a, b = _slot_at(frame, src), _slot_at(frame, dst)
            if a and b:
                annotations.append({"x": b[0], "y": b[1], "ax": a[0], "ay": a[1], "xref": "x", "yref": "y",
                                    "axref": "x", "ayref": "y", "showarrow": True, "arrowhead": 3,
                                    "arrowsize": 1.2, "arrowwidth": 2, "arrowcolor": colour, "text": ""})
    shapes = []
    if cut is not None and not frame.empty and (cx := _cut_x(frame, cut)) is not None:
        left = float(frame["slot"].min()) - 0.5
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": left, "x1": cx, "y0": 0, "y1": 1,
                       "fillcolor": SUMMARISED_FILL, "line": {"width": 0}, "layer": "below"})
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": cx, "x1": cx, "y0": 0, "y1": 1,
                       "line": {"color": CUT_COLOUR, "width": 2}})
        label = "cut (splits a turn)" if split_turn else "cut"
        annotations.append({"x": cx, "y": 1.0, "xref": "x", "yref": "paper", "text": f"{label}: summarised ←  → kept",
                            "showarrow": False, "yanchor": "bottom", "font": {"color": CUT_COLOUR}})
    if recorded_cut is not None and not frame.empty and (rx := _cut_x(frame, recorded_cut)) is not None:
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": rx, "x1": rx, "y0": 0, "y1": 1,
                       "line": {"color": RECORDED_CUT_COLOUR, "width": 2, "dash": "dash"}})
        annotations.append({"x": rx, "y": 0.0, "xref": "x", "yref": "paper", "text": "recorded cut",
                            "showarrow": False, "yanchor": "top", "font": {"color": RECORDED_CUT_COLOUR}})
    fig.update_layout(
        title={"text": title} if title else None, height=420, margin={"l": 10, "r": 10, "t": 60, "b": 40},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0, "title": {"text": "status"}},
        xaxis={"title": {"text": "turn"}, "zeroline": False},
        yaxis={"tickmode": "array", "tickvals": list(range(len(ROLES))), "ticktext": list(ROLES),
               "range": [-0.7, len(ROLES) - 0.3], "fixedrange": True},
        annotations=annotations, shapes=shapes, hovermode="closest", clickmode="event+select",
        uirevision=revision or None)
    return fig


def selected_position(event) -> int | None:
    """The message position of the first point in a Streamlit plotly selection event, if any.

    ``event`` is what ``st.plotly_chart(..., on_select=...)`` stores in session
    state: ``{"selection": {"points": [{"customdata": [position, ...], ...}]}}``.
    """
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):
        return None
    for point in points or ():
        custom = point.get("customdata") if isinstance(point, dict) else None
        # customdata is sent as a typed array; a point's row may come back as a list, as the
        # {"0": ..., "1": ...} that JSON makes of a typed array, or as a bare number
        if isinstance(custom, dict):
            custom = [custom.get("0", custom.get(0))]
        elif not isinstance(custom, (list, tuple)):
            custom = [custom]
        if custom and custom[0] is not None:
            try:
                return int(custom[0])
            except (TypeError, ValueError):
                continue
    return None


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
