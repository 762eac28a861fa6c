"""Pure plotly builders for the Replay page (no Streamlit; unit-tested on their JSON).

Every chart counts requests (model calls), not turns, on its x axis. Hover text
is built from numbers and strategy names only, plus the events' own sentences,
HTML-escaped (a transcript never reaches a chart).

>>> import pandas as pd
>>> frame = pd.DataFrame({"strategy": ["full", "full"], "request": [0, 1], "turn": [1, 1],
...     "input": [100, 150], "dollars": [0.1, 0.2], "cumulative_dollars": [0.1, 0.3],
...     "cached_share": [0.0, 0.6], "event_kinds": ["", "prune"], "events": ["", "prune: 150 → 90"]})
>>> fig = context_figure(frame, window=120)
>>> [t.name for t in fig.data]
['full', 'full: prune (1)']
"""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go

from .theme import SPARE_STRATEGY_COLOURS as _SPARE
from .theme import STRATEGY_COLOURS, WINDOW_COLOUR  # one colour per strategy, none a status colour
EVENT_SYMBOLS = {"prune": "triangle-down", "compact": "diamond", "truncate": "x", "clear": "square"}
#: The hindsight bound (``pruner.replay.hindsight``): a dashed dark line, its schedule's actions on it.
BOUND_LABEL, BOUND_COLOUR = "best in hindsight", "#3B2F8F"
BOUND_SYMBOLS = {"drop": "line-ns-open", "prune": "triangle-down-open", "compact": "diamond-open",
                 "prune+compact": "star-diamond-open"}
#: Above this many points a trace is drawn with WebGL.
WEBGL_THRESHOLD = 2_000


def colour(strategy: str, order: int = 0) -> str:
    return STRATEGY_COLOURS.get(strategy) or _SPARE[order % len(_SPARE)]


def _scatter(n: int):
    return go.Scattergl if n > WEBGL_THRESHOLD else go.Scatter


def _lines(frame: pd.DataFrame, y: str, hover: str, *, svg: bool = False) -> list:
    traces = []
    for k, (name, part) in enumerate(frame.groupby("strategy", sort=False)):
        traces.append((go.Scatter if svg else _scatter(len(part)))(
            x=part["request"].tolist(), y=part[y].tolist(), mode="lines", name=name, legendgroup=name,
            line={"color": colour(name, k), "width": 2}, customdata=part["turn"].tolist(),
            hovertemplate=f"<b>{html.escape(name)}</b> · request %{{x}} (turn %{{customdata}})<br>{hover}"
                          "<extra></extra>"))
    return traces


def _event_markers(frame: pd.DataFrame, y: str) -> list:
    traces = []
    marked = frame[frame["event_kinds"] != ""]
    for k, (name, part) in enumerate(marked.groupby("strategy", sort=False)):
        kinds = sorted({kind for ks in part["event_kinds"] for kind in ks.split(",") if kind})
        text = [f"{html.escape(e)}<br>this request: ${d:,.4f}" for e, d in zip(part["events"], part["dollars"])]
        traces.append(go.Scatter(
            x=part["request"].tolist(), y=part[y].tolist(), mode="markers",
            name=f"{name}: {', '.join(kinds)} ({len(part):,})", legendgroup=name, showlegend=True,
            marker={"color": colour(name, k), "size": 9, "symbol": EVENT_SYMBOLS.get(kinds[0], "circle"),
                    "line": {"color": "#ffffff", "width": 1}},
            text=text, hovertemplate=f"<b>{html.escape(name)}</b> · request %{{x}}<br>%{{text}}<extra></extra>"))
    return traces


def _layout(fig: go.Figure, title: str, y_title: str, *, selected: int | None = None) -> go.Figure:
    fig.update_layout(title=title, xaxis_title="request (model call)", yaxis_title=y_title, height=440,
                      margin={"l": 60, "r": 20, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.22,
                                                                          "yanchor": "top"},
                      hovermode="closest")
    if selected is not None:
        fig.add_vline(x=selected, line={"color": "#333333", "width": 1, "dash": "dot"})
    return fig


def context_figure(frame: pd.DataFrame, *, window: int, selected: int | None = None) -> go.Figure:
    """Context size per request for each strategy (provider tokens), the window as a line, and a
    marker wherever a strategy pruned, compacted, truncated or cleared."""
    fig = go.Figure(_lines(frame, "input", "%{y:,} tokens sent") + _event_markers(frame, "input"))
    fig.add_hline(y=window, line={"color": WINDOW_COLOUR, "width": 1.5, "dash": "dash"},
                  annotation_text=f"context window {window:,}", annotation_position="top left")
    return _layout(fig, "Context sent at each request", "tokens (provider's)", selected=selected)


def cost_figure(frame: pd.DataFrame, *, money_label: str = "", selected: int | None = None) -> go.Figure:
    """Cumulative dollars per strategy."""
    fig = go.Figure(_lines(frame, "cumulative_dollars", "$%{y:,.4f} so far")
                    + _event_markers(frame, "cumulative_dollars"))
    return _layout(fig, "Cumulative cost", "USD" + (f" ({money_label})" if money_label else ""),
                   selected=selected)


def cached_share_figure(frame: pd.DataFrame, *, selected: int | None = None) -> go.Figure:
    """The share of each request's input read from the cache."""
    data = frame.assign(cached_pct=100 * frame["cached_share"])
    fig = go.Figure(_lines(data, "cached_pct", "%{y:.1f} % of the input read from the cache"))
    fig.update_yaxes(range=[0, 100])
    return _layout(fig, "Cached share of each request", "% of input read from the cache", selected=selected)


def bench_cost_frame(rows: list[dict]) -> pd.DataFrame:
    """One row per benchmark configuration and priced strategy: workload, turns, strategy, dollars,
    cached share, requests over the window, facts missing at worst."""
    out = []
    for r in rows:
        for name, c in (r.get("cost") or {}).items():
            out.append({"workload": r["workload"], "turns": r["turns"], "seed": r["seed"], "strategy": name,
                        "dollars": c["dollars"], "cached_share": c["cached_share"], "rejected": c["rejected"],
                        "facts_missing_max": c["facts_missing_max"], "feasible": c.get("feasible", True),
                        "infeasible_from": c.get("infeasible_from")})
    return pd.DataFrame(out, columns=["workload", "turns", "seed", "strategy", "dollars", "cached_share", "rejected",
                                      "facts_missing_max", "feasible", "infeasible_from"])


def bench_cost_figure(frame: pd.DataFrame, workload: str, *, money_label: str = "") -> go.Figure:
    """Dollars per strategy against the session's size, for one workload (log scales; mean over seeds)."""
    if "feasible" not in frame:  # rows of a run before feasibility was recorded
        frame = frame.assign(feasible=True)
    part = frame[frame["workload"] == workload].groupby(["strategy", "turns"], sort=False, as_index=False).agg(
        dollars=("dollars", "mean"), rejected=("rejected", "max"), facts=("facts_missing_max", "max"),
        feasible=("feasible", "all"))
    fig = go.Figure()
    for k, (name, p) in enumerate(part.groupby("strategy", sort=False)):
        p = p.sort_values("turns")
        # hollow: the strategy sends a request over the window, so it could not have run; its dollars
        # stop before that request and are not comparable with a whole session's
        feasible = [bool(f) for f in p["feasible"]]
        fig.add_trace(go.Scatter(
            x=p["turns"].tolist(), y=p["dollars"].tolist(), mode="lines+markers", name=name,
            line={"color": colour(name, k), "width": 2},
            marker={"symbol": ["circle" if f else "circle-open" for f in feasible], "size": 8},
            customdata=list(zip(p["rejected"].tolist(), p["facts"].tolist(),
                                ["" if f else "<br>could not run: dollars only until the first request over "
                                 "the window" for f in feasible])),
            hovertemplate=f"<b>{html.escape(name)}</b> · %{{x:,}} turns<br>$%{{y:,.2f}}<br>requests over the window: "
                          "%{customdata[0]:,}<br>facts missing at worst: %{customdata[1]}%{customdata[2]}"
                          "<extra></extra>"))
    # the model is named in the page's caption: a long model id in the axis title ran into the chart title
    sizes = sorted({int(t) for t in part["turns"]})
    fig.update_layout(title=f"Cost per strategy: {workload}", xaxis_title="turns (log)", yaxis_title="USD (log)",
                      height=420, margin={"l": 60, "r": 20, "t": 50, "b": 40},
                      legend={"orientation": "h", "y": -0.25, "yanchor": "top"})
    turns_axis(fig, sizes)
    fig.update_yaxes(type="log", tickprefix="$", dtick=1)  # powers of ten only: no "5 2" minor labels
    return fig


def turns_axis(fig: go.Figure, sizes: list[int]) -> None:
    """A log x axis of session sizes, one labelled tick per size (the Benchmarks page's charts)."""
    fig.update_xaxes(type="log", tickmode="array", tickvals=sizes, ticktext=[f"{v:,}" for v in sizes],
                     minor={"showgrid": False, "ticks": ""})


# ---------------------------------------------------------------- the Replay page's overview (one legend)

#: Above this many requests a strategy's line is thinned for the overview (every event and its request
#: before kept, so every drop still shows); markers likewise. The stepper and tables show every request.
MAX_LINE_POINTS, MAX_MARKERS = 600, 100  # 300 runs of min and max: about one per 2.5 px of the plot


def thin(frame: pd.DataFrame, limit: int = MAX_LINE_POINTS, y: str = "input") -> pd.DataFrame:
    """At most about ``limit`` rows per strategy: the requests cut into ``limit // 2`` runs, and of each
    run the rows of its lowest and highest ``y``, so every peak and every drop (a prune, a compaction)
    is drawn where it is; the first and the last row always. A chart some 900 pixels wide draws no
    more than this, and the browser draws it in a fraction of the time.

    (Keeping every event's row as well, as before, kept nearly every row of a strategy that acts at
    most requests: 38,000 points on the 2,000-turn sample.)

    >>> import pandas as pd
    >>> f = pd.DataFrame({"strategy": ["s"] * 10, "request": range(10),
    ...                   "input": [1, 5, 2, 8, 3, 9, 1, 7, 2, 6]})
    >>> thin(f, limit=4)["request"].tolist()
    [0, 3, 5, 6, 9]
    """
    parts = []
    for _, part in frame.groupby("strategy", sort=False):
        n = len(part)
        if n <= limit:
            parts.append(part)
            continue
        runs = max(1, limit // 2)
        values = part[y].to_numpy() if y in part else pd.Series(range(n)).to_numpy()
        keep = [False] * n
        keep[0] = keep[-1] = True
        for r in range(runs):
            lo, hi = r * n // runs, (r + 1) * n // runs
            if hi <= lo:
                continue
            window = values[lo:hi]
            keep[lo + int(window.argmin())] = True
            keep[lo + int(window.argmax())] = True
        parts.append(part[keep])
    return pd.concat(parts) if parts else frame


def _thin_markers(frame: pd.DataFrame) -> pd.DataFrame:
    marked = frame[frame["event_kinds"] != ""]
    out = []
    for _, part in marked.groupby("strategy", sort=False):
        stride = -(-len(part) // MAX_MARKERS)
        out.append(part.iloc[::stride] if stride > 1 else part)
    return pd.concat(out) if out else marked


def _marker_traces(frame: pd.DataFrame, y: str, *, row: int) -> list:
    """Event markers in their strategy's legend group, out of the legend (the symbols are in the caption)."""
    traces = []
    for trace in _event_markers(frame, y):
        trace.showlegend = False
        traces.append((trace, row))
    return traces


def bound_traces(bound: pd.DataFrame, marks: pd.DataFrame | None = None) -> list:
    """The hindsight bound on the cumulative-cost chart: its cumulative dollars as a dashed line (thinned as
    the strategies' are), and each action of its schedule (drop, prune, compact) marked at its request,
    at most ``MAX_MARKERS`` per action; all in one legend group, so one legend click hides them.

    >>> import pandas as pd
    >>> b = pd.DataFrame({"strategy": ["best in hindsight"] * 3, "request": [0, 1, 2], "turn": [1, 2, 3],
    ...                   "cumulative_dollars": [0.1, 0.15, 0.2]})
    >>> m = pd.DataFrame({"request": [1], "action": ["compact"], "cumulative_dollars": [0.15]})
    >>> [(t.name, list(t.x)) for t in bound_traces(b, m)]
    [('best in hindsight', [0, 1, 2]), ('best in hindsight: compact (1)', [1])]
    """
    if bound.empty:
        return []
    line = thin(bound, y="cumulative_dollars")
    traces = [go.Scatter(
        x=line["request"].tolist(), y=line["cumulative_dollars"].tolist(), mode="lines", name=BOUND_LABEL,
        legendgroup=BOUND_LABEL, line={"color": BOUND_COLOUR, "width": 2.5, "dash": "dash"},
        customdata=line["turn"].tolist(),
        hovertemplate=f"<b>{BOUND_LABEL}</b> · request %{{x}} (turn %{{customdata}})<br>$%{{y:,.4f}} so far, "
                      "the cheapest schedule knowing the whole session<extra></extra>")]
    for action, part in (marks if marks is not None else pd.DataFrame(columns=["action"])).groupby(
            "action", sort=False):
        stride = -(-len(part) // MAX_MARKERS)
        shown = part.iloc[::stride] if stride > 1 else part
        traces.append(go.Scatter(
            x=shown["request"].tolist(), y=shown["cumulative_dollars"].tolist(), mode="markers",
            name=f"{BOUND_LABEL}: {html.escape(str(action))} ({len(part):,})", legendgroup=BOUND_LABEL,
            showlegend=False, marker={"color": BOUND_COLOUR, "size": 10, "line": {"width": 1.5},
                                      "symbol": BOUND_SYMBOLS.get(str(action), "circle-open")},
            hovertemplate=f"<b>{BOUND_LABEL}</b> · request %{{x}}<br>{html.escape(str(action))} here"
                          "<extra></extra>"))
    return traces


def overview_figure(frame: pd.DataFrame, *, window: int, money_label: str = "",
                    greyed: dict[str, str] | None = None, context_extra: list | None = None,
                    bound: pd.DataFrame | None = None, bound_marks: pd.DataFrame | None = None) -> go.Figure:
    """Context sent (top) and cumulative cost (bottom) per strategy, sharing the request axis and ONE
    legend of one entry per strategy: a click on an entry hides or shows that strategy in both.

    ``greyed``: strategies drawn grey and dotted with the reason in their hover (infeasible ones);
    ``context_extra``: more traces for the context chart (the recording's cache misses, by cause);
    ``bound`` / ``bound_marks``: the hindsight bound's cumulative dollars and its actions (``bound_traces``),
    drawn on the cost chart.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"strategy": ["full", "full"], "request": [0, 1], "turn": [1, 1],
    ...     "input": [100, 150], "dollars": [0.1, 0.2], "cumulative_dollars": [0.1, 0.3],
    ...     "cached_share": [0.0, 0.6], "event_kinds": ["", "prune"], "events": ["", "prune: 150 → 90"]})
    >>> fig = overview_figure(frame, window=120)
    >>> [t.name for t in fig.data if t.showlegend is not False]
    ['full']
    """
    from plotly.subplots import make_subplots

    greyed = greyed or {}
    lines_frame, markers_frame = thin(frame), _thin_markers(frame)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.09,
                        subplot_titles=("Context sent at each request",
                                        "Cumulative cost" + (f" ({html.escape(money_label)})" if money_label else "")))
    for row, y, hover in ((1, "input", "%{y:,} tokens sent"), (2, "cumulative_dollars", "$%{y:,.2f} so far")):
        for trace in _lines(lines_frame, y, hover, svg=True):
            trace.showlegend = row == 1
            if trace.name in greyed:
                trace.line = {"color": "#BBBBBB", "width": 1.5, "dash": "dot"}
                trace.name = f"{trace.name} (infeasible)"
                trace.hovertemplate = trace.hovertemplate.replace(
                    "<extra></extra>", f"<br>{html.escape(greyed[trace.legendgroup])}<extra></extra>")
            fig.add_trace(trace, row=row, col=1)
        for trace, r in _marker_traces(markers_frame, y, row=row):
            fig.add_trace(trace, row=r, col=1)
    for trace in context_extra or ():
        fig.add_trace(trace, row=1, col=1)
    for trace in bound_traces(bound, bound_marks) if bound is not None else ():
        fig.add_trace(trace, row=2, col=1)
    fig.add_hline(y=window, line={"color": WINDOW_COLOUR, "width": 1.5, "dash": "dash"}, row=1, col=1,
                  annotation_text=f"context window {window:,}", annotation_position="top left")
    fig.update_yaxes(title_text="tokens", tickformat=",~s", row=1, col=1)
    fig.update_yaxes(title_text="USD", tickprefix="$", tickformat=",.2f", row=2, col=1)
    fig.update_xaxes(title_text="request (model call)", tickformat=",d", row=2, col=1)
    fig.update_layout(height=620, margin={"l": 70, "r": 40, "t": 70, "b": 50}, hovermode="closest",
                      modebar={"orientation": "v"}, clickmode="event+select",
                      legend={"orientation": "h", "y": 1.06, "yanchor": "bottom", "x": 0, "xanchor": "left",
                              "title": {"text": "click to hide or show:"}, "itemclick": "toggle",
                              "itemdoubleclick": "toggleothers"})
    return fig


def cached_strip_figure(frame: pd.DataFrame) -> go.Figure:
    """A heat strip per strategy: the share of each request's input read from the cache (0 % white to
    100 % dark blue), so eight strategies never draw eight overlapping lines.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"strategy": ["full", "full", "truncate", "truncate"], "request": [0, 1, 0, 1],
    ...     "turn": [1, 1, 1, 1], "cached_share": [0.0, 0.5, 0.0, 1.0]})
    >>> fig = cached_strip_figure(frame)
    >>> list(fig.data[0].y), [list(r) for r in fig.data[0].z]
    (['full', 'truncate'], [[0.0, 50.0], [0.0, 100.0]])
    """
    names = list(dict.fromkeys(frame["strategy"]))
    wide = frame.pivot_table(index="strategy", columns="request", values="cached_share", sort=False)
    wide = wide.reindex(names)
    z = (100 * wide).round(1).values.tolist()
    fig = go.Figure(go.Heatmap(
        z=z, x=[int(c) for c in wide.columns], y=names, zmin=0, zmax=100, colorscale="Blues",
        colorbar={"title": {"text": "% cached"}, "thickness": 12, "len": 1.0}, xgap=0, ygap=2,
        hovertemplate="<b>%{y}</b> · request %{x:,}<br>%{z:.1f} % of the input read from the cache<extra></extra>"))
    fig.update_layout(title="Cached share of each request's input", height=90 + 28 * len(names),
                      clickmode="event+select",
                      margin={"l": 150, "r": 20, "t": 40, "b": 40}, xaxis_title="request (model call)")
    fig.update_xaxes(tickformat=",d")
    fig.update_yaxes(autorange="reversed")
    return fig
