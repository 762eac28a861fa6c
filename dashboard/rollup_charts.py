"""The Corpus page's roll-up over time (week or month) as a chart: a pure plotly builder, tested on its spec.

Bars: the dollars billed per period, each with its value; a line on a second axis: the cache-read share
of the period's input tokens (a gap where the table does not know it). Periods run in time order, as
categories (a week is named by its Monday).

>>> import pandas as pd
>>> fig = rollup_figure(pd.DataFrame({"period": ["2026-03", "2026-04"], "billed": [3.0, 12.5],
...                                   "cache_read_share": [0.9, None], "best": ["-", "cache_aware"],
...                                   "sessions": [2, 5]}), "month")
>>> list(fig.data[0].text), list(fig.data[1].y)
(['$3.00', '$12.50'], [90.0, None])
"""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go

from pruner.money import money

_MARGIN = {"l": 10, "r": 10, "t": 60, "b": 40}


def rollup_figure(frame: pd.DataFrame, by: str) -> go.Figure:
    periods = [str(p) for p in frame["period"]]
    hover = [f"{html.escape(p)}: {money(b)} over {n:,} sessions; best: {html.escape(str(best))}"
             for p, b, n, best in zip(periods, frame["billed"], frame["sessions"], frame["best"])]
    fig = go.Figure()
    fig.add_bar(x=periods, y=list(frame["billed"]), name="billed", text=[money(v) for v in frame["billed"]],
                textposition="auto", customdata=hover, hovertemplate="%{customdata}<extra></extra>")
    shares = [None if s is None or pd.isna(s) else round(100 * float(s), 1) for s in frame["cache_read_share"]]
    fig.add_scatter(x=periods, y=shares, name="cache read %", mode="lines+markers", yaxis="y2",
                    connectgaps=False, hovertemplate="%{x}: %{y:.1f} % of input tokens read from cache<extra></extra>")
    fig.update_layout(title=f"Dollars billed by {by}, and the cache-read share", margin=_MARGIN,
                      yaxis={"title": "USD", "tickprefix": "$", "tickformat": ",.2f"},
                      yaxis2={"title": "cache read %", "overlaying": "y", "side": "right", "range": [0, 100],
                              "showgrid": False},
                      xaxis={"type": "category", "categoryorder": "array", "categoryarray": periods},
                      legend={"orientation": "h"})
    return fig
