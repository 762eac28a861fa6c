"""The clearing family: the best ``clear_tool_uses`` parameters for this session, over a stated grid.

Anthropic documents four parameters of ``clear_tool_uses_20250919`` (trigger, keep,
``clear_at_least``, ``exclude_tools``; https://platform.claude.com/docs/en/build-with-claude/context-editing).
Context editing decides by those rules, not request by request, so its family is the set of
settings, not of schedules: every point of ``GRID`` is replayed with the replay's own
``clear_tool_uses`` strategy, and the cheapest feasible one that meets the recall bar is the bound
(exact over the grid). A point whose trigger the session never reaches clears nothing: it is
``full`` (the empty schedule), priced once.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .bound import Limit, ScheduledAction, saving

if TYPE_CHECKING:  # pragma: no cover
    from ..engine import Replay

#: The grid: trigger (input tokens), keep (tool uses), clear_at_least (tokens), exclude_tools (none, or the
#: session's most called tool). 4 x 3 x 2 x 2 = 48 points; the documented defaults (100,000; 3; 0; none) are one;
#: a session whose peak passes every trigger adds one above its peak (never clearing: full).
TRIGGERS = (25_000, 50_000, 100_000, 150_000)
KEEPS = (1, 3, 8)
AT_LEAST = (0, 10_000)
GRID_TEXT = ("trigger 25k/50k/100k/150k input tokens x keep 1/3/8 tool uses x clear_at_least 0/10k tokens x "
             "exclude_tools none/the most called tool; on a session past every trigger, one above its peak "
             "(never clears)")


def _most_called_tool(replay: "Replay") -> str | None:
    counts: dict[str, int] = {}
    for m in replay.session.messages:
        for c in m.tool_calls:
            counts[c.name] = counts.get(c.name, 0) + 1
    return min(counts, key=lambda k: (-counts[k], k)) if counts else None


def grid(replay: "Replay") -> list[dict[str, Any]]:
    tool = _most_called_tool(replay)
    excludes: list[tuple[str, ...]] = [()] + ([(tool,)] if tool else [])
    return [{"clear_trigger": t, "clear_keep": k, "clear_at_least": a, "clear_exclude_tools": e}
            for t in TRIGGERS for k in KEEPS for a in AT_LEAST for e in excludes]


def clearing_limit(replay: "Replay", min_recall: float, recorded: float) -> Limit:
    from ..engine import replay as run_replay

    started = time.perf_counter()
    from ..requests import price_of

    # The rule the replay applies to clear_tool_uses itself: an aborted request reached no provider.
    providers = {price_of(r).provider for r in replay.requests if r.recorded is None or not r.recorded.aborted}
    if providers - {"anthropic"}:
        return Limit("clearing", None, None, (), min_recall, None, True, None, False, parameters=None,
                     seconds=time.perf_counter() - started, applicable=False,
                     note=f"clear_tool_uses is a feature of the Anthropic API; this session's requests go to "
                          f"{', '.join(sorted(providers - {'anthropic'}))}: not applicable")
    full = replay.runs.get("full")
    peak = full.totals["peak_context"] if full is not None else None
    best: tuple[float, float, int, dict[str, Any], Any, tuple[int, ...]] | None = None
    tried, never_done = 0, False
    points = grid(replay)
    if peak is not None and peak >= max(TRIGGERS):
        # Never clearing (full) is one of the family's settings: a trigger above the session's peak. Left
        # out, a session past every trigger of the grid could have a bound above full.
        points.append({"clear_trigger": peak + 1, "clear_keep": 3, "clear_at_least": 0, "clear_exclude_tools": ()})
    for n, point in enumerate(points):
        never = peak is not None and point["clear_trigger"] >= peak
        if never and never_done:
            continue  # never triggers: it is full, whatever the other parameters; replayed once
        never_done = never_done or never
        settings = replace(replay.settings, clear_trigger_type="input_tokens", **point)
        r = run_replay(replay.session, ["clear_tool_uses"], settings=settings, prices=replay.price_table,
                       summarizer=replay.summarizer, snapshots=False)
        tried += 1
        t = r.runs["clear_tool_uses"].totals
        if not t["feasible"] or t.get("context_recall", 1.0) < min_recall:
            continue
        rows = r.runs["clear_tool_uses"].rows
        key = (t["dollars"], -t.get("context_recall", 1.0), n, point, t,
               tuple(row.request for row in rows if any(e.kind == "clear" for e in row.events)))
        if best is None or key[:3] < best[:3]:
            best = key
    seconds = time.perf_counter() - started
    if best is None:
        return Limit("clearing", None, None, (), min_recall, None, True, None, False, parameters=None,
                     seconds=seconds, note=f"no point of the grid ({GRID_TEXT}) is feasible with context recall "
                                           f">= {min_recall:g}")
    dollars, _, _, point, t, clears = best
    schedule = tuple(ScheduledAction(k, "clear") for k in clears)  # where the winning settings cleared
    parameters = {"trigger": {"type": "input_tokens", "value": point["clear_trigger"]},
                  "keep": {"type": "tool_uses", "value": point["clear_keep"]},
                  "clear_at_least": {"type": "input_tokens", "value": point["clear_at_least"]},
                  "exclude_tools": list(point["clear_exclude_tools"]), "grid": GRID_TEXT, "points_replayed": tried}
    return Limit("clearing", dollars, saving(recorded, dollars), schedule, min_recall, t.get("context_recall"),
                 True, None, True, parameters=parameters, seconds=seconds, lower_bound=dollars)
