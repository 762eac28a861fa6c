"""Streamlit pieces more than one page draws: the zoomable timeline, compact metrics, a sticky panel.

The figures themselves are built by the pure modules (``timeline.py``,
``charts.py``); here they meet the visitor's session state (the zoom range,
the selected message) and the page layout.
"""

from __future__ import annotations

from typing import Callable, Iterable

import pandas as pd
import streamlit as st

from . import cache, timeline as tl
from .ui import compact_number

ss = st.session_state


def _range_key(key: str) -> str:
    return f"{key}_range"


def zoom_range(key: str) -> tuple[float, float] | None:
    """The x range the timeline ``key`` is zoomed to (``None``: the whole session)."""
    return ss.get(_range_key(key))


def set_zoom(key: str, x_range: tuple[float, float] | None) -> None:
    ss[_range_key(key)] = x_range


def _on_select(key: str, on_position: Callable[[int], None] | None, shown: tuple[float, float]) -> None:
    event = ss.get(key)
    x_range = tl.selected_bin(event)
    if x_range is not None:
        set_zoom(key, tl.zoom_to(x_range, shown))
        return
    position = tl.selected_position(event)
    if position is not None and on_position is not None:
        on_position(position)


def _zoom_out(key: str, frame: pd.DataFrame) -> None:
    current = zoom_range(key)
    lo, hi = tl.full_range(frame)
    if current is None:
        return
    x0, x1 = current
    middle, half = (x0 + x1) / 2, max(x1 - x0, 1.0) * 2
    x0, x1 = max(lo, middle - half), min(hi, middle + half)
    set_zoom(key, None if (x0, x1) == (lo, hi) else (x0, x1))


def timeline(frame: pd.DataFrame, *, key: str, cache_key, selected: int | None = None,
             highlight: Iterable[int] = (), cut: int | None = None, recorded_cut: int | None = None,
             split_turn: bool = False, width_px: float = tl.PLOT_WIDTH_PX, height: int = 400,
             on_position: Callable[[int], None] | None = None, describe: bool = True,
             summarised: Iterable[int] | None = None, earlier: Iterable[int] = ()) -> tl.TimelineView:
    """The timeline of ``frame`` with its zoom controls; clicking a bin zooms in, a mark calls ``on_position``.

    ``cache_key`` must identify ``frame`` (session and settings): the figure is
    built once per process for it, the zoom range and the selection.
    """
    x_range = zoom_range(key)
    highlight = tuple(highlight)
    summarised = None if summarised is None else tuple(summarised)
    earlier = tuple(earlier)
    view = tl.plan_view(frame, x_range, width_px=width_px)
    fig = cache.shared("timeline", (cache_key, key, x_range, selected, highlight, cut, recorded_cut, split_turn,
                                    width_px, height, summarised, earlier),
                       lambda: tl.timeline_figure(frame, x_range=x_range, selected=selected, highlight=highlight,
                                                  cut=cut, recorded_cut=recorded_cut, split_turn=split_turn,
                                                  revision=str(cache_key), width_px=width_px, height=height,
                                                  summarised_positions=summarised, earlier=earlier))
    st.plotly_chart(fig, key=key, on_select=lambda: _on_select(key, on_position, (view.x0, view.x1)),
                    selection_mode="points",
                    config={"displaylogo": False, "modeBarButtonsToRemove": ["select2d", "lasso2d"]})
    if not describe and x_range is None:  # the caller has no room for the line under the chart
        return view
    left, right = st.columns([5, 2], vertical_alignment="center")
    left.caption(view.describe())
    if x_range is not None:
        c1, c2 = right.columns(2)
        c1.button("Zoom out", key=f"{key}_out", on_click=_zoom_out, args=(key, frame), width="stretch")
        c2.button("Whole session", key=f"{key}_all", on_click=set_zoom, args=(key, None), width="stretch")
    return view


def before_after(before: int, after: int) -> tuple[str, str]:
    """A metric's compact value ("137k → 94k") and the exact figures for its tooltip."""
    return f"{compact_number(before)} → {compact_number(after)}", f"{before:,} → {after:,}"


def sticky(key: str, *, top_rem: float = 3.75) -> None:
    """Keep the column holding the container ``key`` in view while the page scrolls (master-detail).

    ``st.container(key=...)`` marks its element with the class ``st-key-<key>``;
    the rule makes the enclosing column sticky and scrollable on its own.
    """
    st.html(f"""<style>
div[data-testid="stColumn"]:has(div.st-key-{key}) {{
  position: sticky; top: {top_rem}rem; align-self: flex-start;
  max-height: calc(100vh - {top_rem + 0.5}rem); overflow-y: auto;
}}
</style>""")
