"""The README's dashboard speed table: issue 21's browser figures, printed and recorded by
``tests/e2e/test_speed_browser.py`` (``PRUNER_UPDATE_SPEED=1``) in real Chromium on this machine."""

from __future__ import annotations

import statistics
from typing import Any

from . import register_table


def _seconds(values: list[float]) -> str:
    return ", ".join(f"{t:.2f}" for t in values) + " s"


def _verdict(figure: dict[str, Any]) -> str:
    target, values = figure["target_s"], figure["seconds"]
    if target is None:
        return ""
    if figure["statistic"] == "median":
        median = statistics.median(values)
        return f"median ≤ {target:g} s: {'met' if median <= target else '**missed**'}"
    met = sum(t <= target for t in values)
    return f"≤ {target:g} s: met by {met} of {len(values)}" if met else f"≤ {target:g} s: **missed**"


def _shown(figure: dict[str, Any]) -> str:
    values = figure["seconds"]
    if figure["statistic"] == "median":
        return (f"median {statistics.median(values):.2f} s over {len(values)} "
                f"({min(values):.2f}–{max(values):.2f})")
    return _seconds(values)


@register_table("dashboard-speed", source="sample_sessions/bench/dashboard_speed.json",
                command="PRUNER_UPDATE_SPEED=1 python -m pytest tests/e2e/test_speed_browser.py -s")
def render(results: dict[str, Any]) -> str:
    """One row per figure, in the order measured, with target and the load when it was taken.

    >>> print(render({"meta": {}, "figures": [{"name": "t", "what": "a tab", "seconds": [2.0, 2.75],
    ...     "statistic": "each", "target_s": 2.5, "load": [1.25, 1.0, 0.5]}]}))
    | in Chromium, 1366 × 768 | seconds | target | 1-minute load |
    |---|---|---|---|
    | a tab | 2.00, 2.75 s | ≤ 2.5 s: met by 1 of 2 | 1.2 |
    """
    out = ["| in Chromium, 1366 × 768 | seconds | target | 1-minute load |", "|---|---|---|---|"]
    for figure in results["figures"]:
        out.append(f"| {figure['what']} | {_shown(figure)} | {_verdict(figure)} | {figure['load'][0]:.1f} |")
    meta = results["meta"]
    if meta.get("browser") or meta.get("streamlit"):
        browser = meta.get("browser", "Chromium").split(" built ")[0]
        out += ["", f"{browser}, Streamlit {meta.get('streamlit', '?')}; benchmarks, not pass/fail timers. "
                    "The browser and the server run on the same 2 cores as the test; the load column says "
                    "how busy the machine was when each figure was taken."]
    return "\n".join(out)
