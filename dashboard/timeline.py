"""The timeline: every message at its turn, in its role's lane, in its status colour; no status hides another.

A pure plotly builder (no Streamlit), tested through its JSON spec. It draws
one of two views of the turns in ``x_range``:

* **exact marks**, one per message, when they fit: in every lane, neighbouring
  marks are at least ``MIN_GAP_PX`` apart at the plot's width, so no mark covers
  another;
* **bins** otherwise: the range is cut into at most ``MAX_BINS`` stretches of
  turns, and each (stretch, lane) cell is a bar split by status in proportion
  to its counts, every present status getting at least ``MIN_SHARE`` of the
  bar so a single removed message among hundreds still shows. The hover gives
  the exact counts; clicking a bar zooms into its stretch, down to exact marks.

Transcript text never reaches the chart except message ids and decision
reasons in hover labels, and those are HTML-escaped: plotly renders a subset of
HTML (links included) in hover text, and a transcript is untrusted input.

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
import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from pruner.model import ROLES, STATUSES

from .theme import (CUT_COLOUR, RECORDED_CUT_COLOUR, STATUS_COLOURS, STATUS_SYMBOLS, SUMMARISED_COLOUR, SUMMARISED_FILL,
                    SUMMARISED_SYMBOL, status_label)

#: The plot's width in pixels that the fit test assumes (the wide layout's main column, a little less).
PLOT_WIDTH_PX = 1_100
#: Exact marks only when neighbours in a lane are at least this far apart (marks are 9-11 px wide,
#: so two marks this close overlap by half at most and both stay visible).
MIN_GAP_PX = 5.0
#: ...and only up to this many marks (beyond it the figure would be slow to send and draw).
MAX_EXACT_MARKS = 6_000
#: At most this many bins across the plot.
MAX_BINS = 100
#: A status present in a bin gets at least this share of the bar.
MIN_SHARE = 0.12
#: A lane's bar is this tall (lanes are 1 apart).
BAND = 0.8
#: Exact marks draw with WebGL above this many.
WEBGL_THRESHOLD = 1_500
#: At most this many arrows point at the selected message (a popular original can have hundreds).
MAX_INCOMING_ARROWS = 40
#: Hover reasons are cut to this many characters (the inspector shows the full text).
HOVER_REASON_CHARS = 90
#: ``customdata[0]`` of a bin (a message position is never negative).
BIN_MARK = -1

# Exact marks send compact per-point data: ``customdata`` is ``[position, tokens]`` (plain
# ints, so a click carries them back as JSON numbers; the turn is the x slot rounded) and
# ``text`` is the role, plus the rule and a shortened reason when they differ inside the
# trace; a rule and reason shared by every mark of a trace go once into ``meta``.
_HOVER_HEAD = "<b>#%{customdata[0]}</b> · turn %{x:.0f} · %{customdata[1]:,} tokens<br>"
TIMELINE_HOVER = _HOVER_HEAD + "%{text}<extra>%{fullData.name}</extra>"
TIMELINE_HOVER_SHARED = _HOVER_HEAD + "%{text} | rule: %{meta[0]}<br>%{meta[1]}<extra>%{fullData.name}</extra>"
# A bin: customdata is [BIN_MARK, first turn, last turn, kept, expired, duplicate, restored,
# first position, last position, x0, x1]; text is the lane's role.
BIN_HOVER = ("<b>%{text}</b> · turns %{customdata[1]}–%{customdata[2]} (messages #%{customdata[7]}–"
             "#%{customdata[8]})<br>kept %{customdata[3]:,} · expired %{customdata[4]:,} · duplicate "
             "%{customdata[5]:,} · restored %{customdata[6]:,}<br><i>click to zoom in</i><extra></extra>")


@dataclass(frozen=True)
class TimelineView:
    """What the timeline shows: the x range (in slots, i.e. turns) and whether it is binned."""

    x0: float
    x1: float
    binned: bool
    bin_width: float  # in turns; 0 for exact marks
    marks: int  # messages inside the range

    def describe(self) -> str:
        """One sentence for the caption under the chart."""
        first, last = turns_shown(self.x0, self.x1)
        span = f"turn {first:,}" if first == last else f"turns {first:,}–{last:,}"
        if not self.binned:
            return f"Showing {span}: one mark per message ({self.marks:,})."
        width = (f"{self.bin_width:,.0f} turn{'s' if self.bin_width != 1 else ''}" if self.bin_width >= 1
                 else f"{self.bin_width:.2g} of a turn")
        return (f"Showing {span} in bins of {width} ({self.marks:,} messages): each bar is split by status in "
                f"proportion to its counts, and a status present in a bin always shows. Hover for the counts; "
                f"click a bar to zoom in.")


def turns_shown(x0: float, x1: float) -> tuple[int, int]:
    """The first and last turn whose slot (turn ± half a turn) the range ``x0``–``x1`` reaches: never reversed.

    >>> turns_shown(-0.5, 10.5), turns_shown(1651.6, 1651.81), turns_shown(1637.5, 1658.5)
    ((0, 10), (1652, 1652), (1638, 1658))
    """
    first = max(0, math.floor(x0 + 0.5))
    last = max(first, math.ceil(x1 - 0.5))
    return first, last


def zoom_to(bin_range: tuple[float, float], current: tuple[float, float]) -> tuple[float, float]:
    """The range a click on a bin zooms to: the whole turns it covers (so the axis keeps turn ticks),
    unless that is no narrower than what is shown (one long turn): then the bin itself.

    >>> zoom_to((1651.6, 1651.81), (1637.5, 1658.5))
    (1651.5, 1652.5)
    >>> zoom_to((1651.6, 1651.81), (1651.5, 1652.5))
    (1651.6, 1651.81)
    """
    first, last = turns_shown(*bin_range)
    whole = (first - 0.5, last + 0.5)
    return whole if whole[1] - whole[0] < current[1] - current[0] - 1e-9 else (float(bin_range[0]),
                                                                                 float(bin_range[1]))


def full_range(frame: pd.DataFrame) -> tuple[float, float]:
    """The x range of the whole session: half a turn either side of its first and last turn."""
    if frame.empty:
        return -0.5, 0.5
    return float(frame["turn"].min()) - 0.5, float(frame["turn"].max()) + 0.5


def _inside(frame: pd.DataFrame, x0: float, x1: float) -> pd.DataFrame:
    slots = frame["slot"].to_numpy()
    return frame[(slots >= x0) & (slots <= x1)]


def fits(frame: pd.DataFrame, x0: float, x1: float, *, width_px: float = PLOT_WIDTH_PX) -> bool:
    """Whether every message in ``[x0, x1]`` can be drawn as its own mark without covering another."""
    if len(frame) > MAX_EXACT_MARKS:
        return False
    if len(frame) < 2:
        return True
    px_per_turn = width_px / max(x1 - x0, 1e-9)
    slots, lanes = frame["slot"].to_numpy(dtype=float), frame["lane"].to_numpy()
    order = np.lexsort((slots, lanes))
    slots, lanes = slots[order], lanes[order]
    same_lane = lanes[1:] == lanes[:-1]
    if not same_lane.any():
        return True
    return float(np.diff(slots)[same_lane].min()) * px_per_turn >= MIN_GAP_PX


def plan_view(frame: pd.DataFrame, x_range: tuple[float, float] | None = None, *,
              width_px: float = PLOT_WIDTH_PX) -> TimelineView:
    """Exact marks if they fit in ``x_range`` (default: the whole session), else bins."""
    lo, hi = full_range(frame)
    x0, x1 = x_range if x_range is not None else (lo, hi)
    x0, x1 = max(float(x0), lo), min(float(x1), hi)
    if x1 <= x0:
        x0, x1 = lo, hi
    inside = _inside(frame, x0, x1)
    if fits(inside, x0, x1, width_px=width_px):
        return TimelineView(x0=x0, x1=x1, binned=False, bin_width=0.0, marks=len(inside))
    turns = x1 - x0
    # Whole turns per bin while there are enough turns; within a few long turns, fractions of one.
    bin_width = float(math.ceil(turns / MAX_BINS)) if turns >= MAX_BINS / 4 else turns / MAX_BINS
    return TimelineView(x0=x0, x1=x1, binned=True, bin_width=bin_width, marks=len(inside))


def bin_counts(frame: pd.DataFrame, view: TimelineView) -> pd.DataFrame:
    """One row per non-empty (bin, lane): the bin's x edges, turns, positions and a count per status."""
    inside = _inside(frame, view.x0, view.x1)
    columns = ["bin", "lane", "x0", "x1", "first_turn", "last_turn", "first_position", "last_position",
               *STATUSES]
    if inside.empty or not view.binned:
        return pd.DataFrame(columns=columns)
    nbins = max(1, math.ceil((view.x1 - view.x0) / view.bin_width - 1e-9))
    bins = np.clip(((inside["slot"].to_numpy() - view.x0) / view.bin_width).astype(int), 0, nbins - 1)
    grouped = inside.assign(bin=bins).groupby(["bin", "lane"], sort=True)
    out = grouped.agg(first_turn=("turn", "min"), last_turn=("turn", "max"),
                      first_position=("position", "min"), last_position=("position", "max"))
    counts = inside.assign(bin=bins).groupby(["bin", "lane", "status"]).size().unstack("status", fill_value=0)
    out = out.join(counts.reindex(columns=list(STATUSES), fill_value=0)).reset_index()
    out["x0"] = view.x0 + out["bin"] * view.bin_width
    out["x1"] = np.minimum(out["x0"] + view.bin_width, view.x1)
    return out[columns].astype({s: int for s in STATUSES})


def segment_heights(counts: np.ndarray) -> np.ndarray:
    """Bar segment heights (summing to ``BAND`` per row) for per-status ``counts`` (rows x statuses).

    Proportional to the counts, except that a present status gets at least
    ``MIN_SHARE`` of the bar (taken from the others in proportion), so no status hides.
    """
    counts = np.asarray(counts, dtype=float)
    totals = counts.sum(axis=1, keepdims=True)
    shares = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
    present = counts > 0
    small = present & (shares < MIN_SHARE)
    # Statuses below the minimum get exactly the minimum; the rest share what is left in
    # proportion. Shrinking the rest can push another below the minimum, so repeat (at most
    # once per status) until none is.
    heights = shares
    for _ in range(counts.shape[-1] + 1):  # each repeat adds a status to ``small``: it ends in time
        reserved = small.sum(axis=1, keepdims=True) * MIN_SHARE
        big_total = np.where(small, 0.0, shares).sum(axis=1, keepdims=True)
        scale = np.divide(1.0 - reserved, big_total, out=np.zeros_like(big_total), where=big_total > 0)
        heights = np.where(small, MIN_SHARE, shares * scale)
        grown = present & ~small & (heights < MIN_SHARE)
        if not grown.any():
            break
        small |= grown
    return heights * BAND


def _esc(value) -> str:
    return html.escape(str(value), quote=True)


def _hover_reason(reason: str) -> str:
    """A reason short enough for a hover label, escaped (after cutting, so no entity is split).

    Only ``&``, ``<`` and ``>`` are escaped: outside a tag a quote is inert, and
    reasons quote tool arguments a lot (``&quot;`` would triple their size).
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


def cut_x(frame: pd.DataFrame, cut_position: int) -> float | None:
    """The x between the last summarised message and the first kept one."""
    ordered = frame.sort_values("position")
    before = ordered[ordered["position"] < cut_position]
    after = ordered[ordered["position"] >= cut_position]
    if after.empty:
        return None
    if before.empty:
        return float(after["slot"].iloc[0]) - 0.5
    return (float(before["slot"].iloc[-1]) + float(after["slot"].iloc[0])) / 2


def _mark_traces(fig: go.Figure, inside: pd.DataFrame, webgl_threshold: int) -> type:
    large = len(inside) > webgl_threshold
    scatter = go.Scattergl if large else go.Scatter
    size = 7 if large else 10
    for status in STATUSES:
        part = inside[inside["status"] == status]
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
    return scatter


def summarised(frame: pd.DataFrame, cut: int | None) -> pd.Series:
    """Which rows a compaction cutting at position ``cut`` replaces with its summary: every message before the
    cut except the leading system messages (kept ahead of the summary). None without a cut.

    >>> frame = pd.DataFrame({"position": [0, 1, 2, 3], "role": ["system", "user", "assistant", "user"]})
    >>> summarised(frame, 3).tolist(), summarised(frame, None).tolist()
    ([False, True, True, False], [False, False, False, False])
    """
    if cut is None or frame.empty:
        return pd.Series(False, index=frame.index)
    ordered = frame.sort_values("position")
    leading = ordered["role"].ne("system").cumsum().eq(0)  # the system messages before any other
    pinned = set(ordered.loc[leading, "position"])
    return (frame["position"] < cut) & ~frame["position"].isin(pinned)


def _summarised_trace(fig: go.Figure, part: pd.DataFrame, scatter: type, size: int, *, earlier: bool = False) -> None:
    """The messages a compaction replaces (or, ``earlier``, that a compaction the session records replaced):
    their own mark and legend entry, never a status's."""
    name, symbol, why = (("compacted before", "square-x-open", "replaced by a compaction the session records")
                         if earlier else ("summarised", SUMMARISED_SYMBOL, "replaced by the summary"))
    x = part["slot"].to_numpy(dtype="float32") if len(part) else [None]
    y = part["lane"].to_numpy(dtype="int8") if len(part) else [None]
    custom = part[["position", "tokens"]].to_numpy(dtype="int32") if len(part) else [[None, None]]
    text = part["role"].map(_esc).to_numpy(dtype=str) if len(part) else [None]
    fig.add_trace(scatter(
        x=x, y=y, mode="markers", name=f"{name} ({len(part):,})", legendgroup=name,
        customdata=custom, text=text, meta=["compaction", why], hovertemplate=TIMELINE_HOVER_SHARED,
        marker={"color": SUMMARISED_COLOUR, "symbol": symbol, "size": size, "line": {"width": 1.5}}))


def _bin_traces(fig: go.Figure, frame: pd.DataFrame, view: TimelineView) -> None:
    cells = bin_counts(frame, view)
    counts = cells[list(STATUSES)].to_numpy(dtype=float) if len(cells) else np.zeros((0, len(STATUSES)))
    heights = segment_heights(counts) if len(cells) else counts
    bases = (cells["lane"].to_numpy(dtype=float) - BAND / 2)[:, None] + np.cumsum(heights, axis=1) - heights \
        if len(cells) else heights
    centers = ((cells["x0"] + cells["x1"]) / 2).to_numpy(dtype=float) if len(cells) else np.zeros(0)
    widths = ((cells["x1"] - cells["x0"]) * 0.92).to_numpy(dtype=float) if len(cells) else np.zeros(0)
    custom = np.column_stack([
        np.full(len(cells), BIN_MARK), cells["first_turn"], cells["last_turn"], counts,
        cells["first_position"], cells["last_position"], cells["x0"], cells["x1"]]).astype(float) \
        if len(cells) else np.zeros((0, 11))
    roles = np.array([ROLES[int(lane)] if int(lane) < len(ROLES) else "other" for lane in cells["lane"]],
                     dtype=str) if len(cells) else np.array([], dtype=str)
    for k, status in enumerate(STATUSES):
        present = counts[:, k] > 0
        total = int(counts[:, k].sum())
        if not present.any():
            fig.add_trace(go.Bar(x=[None], y=[None], name=status_label(status, 0), legendgroup=status,
                                 marker={"color": STATUS_COLOURS[status]}, hoverinfo="skip"))
            continue
        fig.add_trace(go.Bar(
            x=centers[present], y=heights[present, k], base=bases[present, k], width=widths[present],
            name=status_label(status, total), legendgroup=status, customdata=custom[present],
            text=roles[present], textposition="none", hovertemplate=BIN_HOVER,
            marker={"color": STATUS_COLOURS[status], "line": {"width": 0}}))


def _turn_ticks(x0: float, x1: float) -> dict:
    """Whole-turn ticks only (a turn is never 1.5), about ten of them; inside one turn, where no
    whole turn is in range, its fractions (the messages of one long turn)."""
    if math.floor(x1) < math.ceil(x0):
        return {"tickmode": "auto", "nticks": 6, "tickformat": ",.2f"}
    span = max(x1 - x0, 1.0)
    raw = span / 10
    step = max(1, int(10 ** math.floor(math.log10(raw))) if raw >= 1 else 1)
    for factor in (1, 2, 5, 10):
        if step * factor >= raw:
            step *= factor
            break
    return {"tickmode": "linear", "tick0": 0, "dtick": step, "tickformat": ",d"}


def timeline_figure(frame: pd.DataFrame, *, x_range: tuple[float, float] | None = None,
                    selected: int | None = None, highlight: Iterable[int] = (), cut: int | None = None,
                    recorded_cut: int | None = None, split_turn: bool = False,
                    webgl_threshold: int = WEBGL_THRESHOLD, title: str = "", revision: str = "",
                    width_px: float = PLOT_WIDTH_PX, height: int = 400,
                    summarised_positions: Iterable[int] | None = None, earlier: Iterable[int] = ()) -> go.Figure:
    """The timeline of the turns in ``x_range`` (default: all), exact or binned as ``plan_view`` decides.

    One trace per status, always all four (an absent status shows ``(0)`` in
    the legend), named with its count in the range. ``selected`` (a position)
    gets a ring, an arrow to its related message (removed -> the message that
    replaced it, restored -> the message that needed it) and arrows from the
    messages that point at it. ``highlight`` rings positions (the guide's "what
    changed"). ``cut`` / ``recorded_cut`` draw the compaction cut (first kept
    position) computed here / recorded in the file.
    """
    view = plan_view(frame, x_range, width_px=width_px)
    fig = go.Figure()
    if view.binned:
        _bin_traces(fig, frame, view)
        scatter, size = go.Scatter, 10
    else:
        inside = _inside(frame, view.x0, view.x1)
        replaced = summarised(inside, cut) if summarised_positions is None else \
            inside["position"].isin(set(summarised_positions))
        before = inside["position"].isin(set(earlier)) & ~replaced
        scatter = _mark_traces(fig, inside[~replaced & ~before], webgl_threshold)
        size = 7 if scatter is go.Scattergl else 10
        if cut is not None:
            _summarised_trace(fig, inside[replaced], scatter, size)
        if before.any():
            _summarised_trace(fig, inside[before], scatter, size, earlier=True)
    rings = list(highlight)
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
    if cut is not None and not frame.empty and (cx := cut_x(frame, cut)) is not None:
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": view.x0, "x1": cx, "y0": 0, "y1": 1,
                       "fillcolor": SUMMARISED_FILL, "line": {"width": 0}, "layer": "below"})
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": cx, "x1": cx, "y0": 0, "y1": 1,
                       "line": {"color": CUT_COLOUR, "width": 2}})
        label = "cut (splits a turn)" if split_turn else "cut"
        annotations.append({"x": cx, "y": 1.0, "xref": "x", "yref": "paper", "text": f"{label}: summarised ←  → kept",
                            "showarrow": False, "yanchor": "bottom", "font": {"color": CUT_COLOUR}})
    if recorded_cut is not None and not frame.empty and (rx := cut_x(frame, recorded_cut)) is not None:
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": rx, "x1": rx, "y0": 0, "y1": 1,
                       "line": {"color": RECORDED_CUT_COLOUR, "width": 2, "dash": "dash"}})
        annotations.append({"x": rx, "y": 0.0, "xref": "x", "yref": "paper", "text": "recorded cut",
                            "showarrow": False, "yanchor": "top", "font": {"color": RECORDED_CUT_COLOUR}})
    fig.update_layout(
        # the toolbar stands upright in the right margin, so on hover it never covers the legend above the plot
        title={"text": title} if title else None, height=height,
        margin={"l": 10, "r": 40, "t": 40, "b": 100 if shapes else 40},
        modebar={"orientation": "v"},
        # with a cut, its label stands above the plot: the legend goes under the axis title, where a legend
        # that wraps to a second row cannot run into the label
        legend={"orientation": "h", "yanchor": "top", "y": -0.32, "x": 0} if shapes else
        {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
        xaxis={"title": {"text": "turn"}, "zeroline": False, "range": [view.x0, view.x1],
               **_turn_ticks(view.x0, view.x1)},
        yaxis={"tickmode": "array", "tickvals": list(range(len(ROLES))), "ticktext": list(ROLES),
               "range": [-0.7, len(ROLES) - 0.3], "fixedrange": True},
        annotations=annotations, shapes=shapes, hovermode="closest", clickmode="event+select",
        barmode="overlay", bargap=0, uirevision=revision or None, meta={"binned": view.binned})
    return fig


def _points(event) -> list:
    try:
        return list(event["selection"]["points"] or ())
    except (KeyError, TypeError):
        return []


def _custom(point) -> list | None:
    custom = point.get("customdata") if isinstance(point, dict) else None
    # customdata is sent as a typed array; a point's row may come back as a list, as the
    # {"0": ..., "1": ...} that JSON makes of a typed array, or as a bare number
    if isinstance(custom, dict):
        return [custom.get(str(i), custom.get(i)) for i in range(len(custom))]
    if custom is None:
        return None
    return list(custom) if isinstance(custom, (list, tuple)) else [custom]


def selected_position(event) -> int | None:
    """The message position of the first exact mark in a Streamlit plotly selection event, if any.

    ``event`` is what ``st.plotly_chart(..., on_select=...)`` stores in session
    state: ``{"selection": {"points": [{"customdata": [position, ...], ...}]}}``.
    """
    for point in _points(event):
        custom = _custom(point)
        if custom and custom[0] is not None:
            try:
                position = int(custom[0])
            except (TypeError, ValueError):
                continue
            if position >= 0:
                return position
    return None


def selected_bin(event) -> tuple[float, float] | None:
    """The x range of the first bin in a selection event (to zoom into), if a bin was clicked."""
    for point in _points(event):
        custom = _custom(point)
        if custom and len(custom) >= 11 and custom[0] is not None and float(custom[0]) == BIN_MARK:
            try:
                return float(custom[9]), float(custom[10])
            except (TypeError, ValueError):
                continue
    return None
