"""What the Replay page answers, shaped from a replay: the cache ledger's misses, what each strategy
lost (context recall), and the cost-against-recall chart. Pure (no Streamlit); the figures carry no
transcript text but the terms and ids the hover shows, HTML-escaped.

The replay's ``ledger`` (one entry per recorded request: request, chain, status, cause, detail,
rebilled_dollars, changed_message_id) and ``recall`` (a report whose strategies list the used terms
each context lacked, with the message that held them) are the money and recall engines' (contracts B
and C); a replay without them gives empty frames.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from .replay_charts import BOUND_COLOUR, colour
from .theme import CACHE_MISS_COLOUR

#: One marker per cause on the overview (misses of the recording).
CAUSE_SYMBOLS = {"first_request": "circle-open", "subagent_start": "star", "model_changed": "hexagram",
                 "compaction": "diamond-open", "ttl_expired": "hourglass", "prefix_changed": "x-thin-open",
                 "lookback_exceeded": "bowtie", "below_minimum": "triangle-up-open",
                 "no_visible_cause": "circle-x-open"}
MISS_COLOUR = CACHE_MISS_COLOUR


def ledger_frame(r: Any) -> pd.DataFrame:
    """One row per recorded request that missed the cache or hit it only partly, in request order."""
    rows = [{"request": e.request, "chain": e.chain, "status": e.status, "cause": e.cause,
             "re-billed": float(e.rebilled_dollars), "detail": e.detail,
             "broke the prefix": getattr(e, "changed_message_id", None) or ""}
            for e in getattr(r, "ledger", None) or () if e.status != "hit"]
    return pd.DataFrame(rows, columns=["request", "chain", "status", "cause", "re-billed", "detail",
                                       "broke the prefix"])


def causes_frame(r: Any) -> pd.DataFrame:
    """Misses and partial hits by cause, with the dollars they re-billed (causes that never happened left out)."""
    frame = ledger_frame(r)
    if frame.empty:
        return pd.DataFrame(columns=["cause", "misses", "partial hits", "re-billed"])
    out = frame.groupby("cause", sort=False).agg(
        misses=("status", lambda s: int((s == "miss").sum())),
        partial=("status", lambda s: int((s == "partial").sum())), rebilled=("re-billed", "sum")).reset_index()
    out = out.rename(columns={"partial": "partial hits", "rebilled": "re-billed"})
    return out.sort_values("re-billed", ascending=False).reset_index(drop=True)


def miss_markers(r: Any, frame: pd.DataFrame) -> list[go.Scatter]:
    """Traces marking the recording's misses on the context chart, one per cause (in the legend)."""
    misses = ledger_frame(r)
    if misses.empty or "as_recorded" not in set(frame["strategy"]):
        return []
    sent = frame[frame["strategy"] == "as_recorded"].set_index("request")["input"]
    traces = []
    for cause, part in misses.groupby("cause", sort=False):
        part = part[part["request"].isin(sent.index)]
        if part.empty:
            continue
        traces.append(go.Scatter(
            x=part["request"].tolist(), y=[int(sent[k]) for k in part["request"]], mode="markers",
            name=f"miss: {cause} ({len(part):,})", legendgroup=f"miss:{cause}",
            marker={"symbol": CAUSE_SYMBOLS.get(cause, "circle-open"), "size": 11, "color": MISS_COLOUR,
                    "line": {"width": 1.5, "color": MISS_COLOUR}},
            text=[html.escape(str(d)) for d in part["detail"]], customdata=part["re-billed"].tolist(),
            hovertemplate="<b>cache " + html.escape(cause) + "</b> · request %{x:,}<br>%{text}<br>re-billed "
                          "$%{customdata:,.4f}<extra></extra>"))
    return traces


def recall_losses(r: Any, strategy: str, request: int) -> list[dict[str, Any]]:
    """The used terms ``strategy``'s context lacked at ``request``, each with the message that held it."""
    report = getattr(r, "recall", None)
    run = report.strategies.get(strategy) if report is not None else None
    if run is None:
        return []
    return [{"term": loss.term, "held by": loss.source_id, "position": loss.source, "chain": loss.chain,
             "left at request": loss.left_at, "sent instead": loss.placeholder or ""}
            for loss in run.losses if loss.request == request]


def recall_points(r: Any) -> pd.DataFrame:
    """One row per strategy: recall %, dollars, feasible (for the cost-against-recall chart)."""
    rows = []
    for name, run in r.runs.items():
        t = run.totals
        if "context_recall" not in t:
            continue
        rows.append({"strategy": name, "recall %": 100 * float(t["context_recall"]), "dollars": float(t["dollars"]),
                     "feasible": t.get("feasible", True) is not False})
    return pd.DataFrame(rows, columns=["strategy", "recall %", "dollars", "feasible"])


#: The cost-against-recall chart's title: a title (the verdict is above the charts, never over a data point).
COST_RECALL_TITLE = "Cost against recall, per strategy"


def cost_recall_figure(points: pd.DataFrame, *, title: str = "", selected: str | None = None,
                       bound: dict[str, Any] | None = None) -> go.Figure:
    """Dollars against context recall, one point per strategy that could run (the recording ringed; a strategy
    over the window is not plotted: its partial dollars are no amount); a click on a point selects that
    strategy. ``title``: a short title (``COST_RECALL_TITLE``), never the verdict. ``bound``: the
    hindsight bound's point (``strategy``, ``recall %``, ``dollars``), a dark diamond no click selects.

    >>> pts = pd.DataFrame({"strategy": ["as_recorded", "compact"], "recall %": [100.0, 90.0],
    ...                     "dollars": [2.0, 1.0], "feasible": [True, True]})
    >>> [t.name for t in cost_recall_figure(pts).data]
    ['as_recorded', 'compact']
    """
    fig = go.Figure()
    for k, row in enumerate(points.itertuples(index=False)):
        if not row.feasible:
            continue
        name = row.strategy
        recording = name == "as_recorded"
        marker = {"size": 18 if recording else 13, "color": colour(name, k) if row.feasible else "#FFFFFF",
                  "symbol": "star" if recording else "circle",
                  "line": {"width": 3 if name == selected else 1, "color": "#333333" if row.feasible else "#AAAAAA"}}
        fig.add_trace(go.Scatter(
            x=[row[1]], y=[row.dollars], mode="markers+text", name=name, text=[name], textposition="top center",
            marker=marker, customdata=[name],
            hovertemplate=f"<b>{html.escape(name)}</b>{' (the recording)' if recording else ''}"
                          f"{'' if row.feasible else ' — infeasible'}<br>recall %{{x:.1f}} %<br>$%{{y:,.2f}}"
                          "<extra></extra>"))
    if bound is not None:
        label = html.escape(str(bound["strategy"]))
        fig.add_trace(go.Scatter(
            x=[bound["recall %"]], y=[bound["dollars"]], mode="markers+text", name=label, text=[label],
            textposition="bottom center", marker={"size": 15, "color": BOUND_COLOUR, "symbol": "diamond"},
            hovertemplate=f"<b>{label}</b>: the cheapest schedule knowing the whole session<br>recall %{{x:.1f}} %"
                          "<br>$%{y:,.4f}<extra></extra>"))
    fig.update_layout(title={"text": html.escape(title) or COST_RECALL_TITLE, "font": {"size": 13}},
                      height=420, showlegend=False, margin={"l": 70, "r": 20, "t": 50, "b": 50},
                      clickmode="event+select",
                      xaxis={"title": {"text": "context recall (% of the terms the replies used that it still held)"},
                             "ticksuffix": " %"},
                      yaxis={"title": {"text": "USD"}, "tickprefix": "$", "rangemode": "tozero"})
    return fig


def clicked_strategy(event: Any) -> str | None:
    """The strategy a click on the cost-against-recall chart picked, or ``None``."""
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):
        return None
    for point in points or ():
        custom = point.get("customdata") if hasattr(point, "get") else None
        value = custom[0] if isinstance(custom, list) and custom else custom
        if isinstance(value, str):
            return value
    return None
