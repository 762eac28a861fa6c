"""The benchmark's cost columns: every counterfactual replay strategy, priced, per configuration.

For each generated session (same workload, size and seed as the pruning row) the
replay runs the seven counterfactual strategies under Anthropic's prompt cache at
the default model's list prices (``pruner.replay``), and the row records per
strategy its dollars, cached share, peak context, requests over the window,
prunes and compactions, and the facts a later message needs that were missing
from a context. The SUMMARY says which strategy is cheapest where, where pruning
costs more than sending everything, and where ``cache_aware_prune`` beats
``full``, ``prune_every_request`` and ``clear_tool_uses``, by how much and with
how many facts lost.

>>> from pruner.bench.workloads import generate
>>> figures, seconds = measure(generate("tool_agent", turns=10, seed=0))
>>> sorted(figures) == sorted(STRATEGIES_PRICED), figures["full"]["dollars"] > 0
(True, True)
"""

from __future__ import annotations

import os
import time
from typing import Any, Iterable

from ..model import Session
from ..replay import ReplaySettings, default_prices, replay
from ..replay.settings import DEFAULT_PROVIDER
from . import recall_agreement

#: The strategies the benchmark prices (``as_recorded`` equals ``full`` on a generated session).
STRATEGIES_PRICED = ("full", "truncate", "prune_every_request", "cache_aware_prune", "compact",
                     "prune_then_compact", "clear_tool_uses")
PRUNING = ("prune_every_request", "cache_aware_prune", "prune_then_compact")
PEERS = ("full", "prune_every_request", "clear_tool_uses")  # what cache_aware_prune is compared with


def settings() -> ReplaySettings:
    # Generated workloads record no model: the benchmark names its provider rather than rely on detection.
    return ReplaySettings(provider=DEFAULT_PROVIDER)


def meta() -> dict[str, Any]:
    """What the cost columns were computed with (the money label every figure needs)."""
    s = settings()
    prices = default_prices()
    price = prices.get(s.model_name, s.provider)
    return {"provider": s.provider, "model": price.model, "prices": prices.label,
            "usd_per_mtok": {"input": price.input, "cached_input": price.cached_input,
                             "cache_write_5m": price.cache_write_5m, "output": price.output},
            "context_window": price.context_window, "strategies": list(STRATEGIES_PRICED),
            "note": "no recorded usage: our own token counts (tiktoken o200k_base) and the cache model alone; "
                    "a strategy with a request over the window is infeasible from there (the API refuses it): its "
                    "dollars stop before it and it is never ranked"}


def measure(session: Session) -> tuple[dict[str, dict[str, Any]], dict[str, float]]:
    """Per strategy its cost figures, and the seconds each replay took (timings, kept apart)."""
    r = replay(session, STRATEGIES_PRICED, settings=settings(), snapshots=False)
    figures, seconds = {}, {}
    kinds = recall_agreement.reply_kinds(session)
    positions = [q.position for q in r.requests]
    used_by_reply = recall_agreement.split_by_reply(kinds, positions, r.recall.used_per_request)
    for name, run in r.runs.items():
        t = run.totals
        figures[name] = {
            "dollars": round(t["dollars"], 4), "cached_share": round(t["cached_share"], 4),
            "peak_context": t["peak_context"], "rejected": t["rejected"], "prunes": t["prunes"],
            "compactions": len(t["compactions"]), "facts_missing_max": t["facts_missing_max"] or 0,
            "requests_missing_facts": t["requests_missing_facts"] or 0, "requests": t["requests"],
            "context_recall": t["context_recall"], "used_terms": t["used_terms"],
            "terms_missing": t["terms_missing"],
            **recall_agreement.reply_fact_figures(r.recall.strategies[name].fact_checks),
            **recall_agreement.reply_copy_figures(r.recall.strategies[name].copy_checks),
            "used_terms_by_reply": used_by_reply,
            "terms_missing_by_reply": recall_agreement.split_by_reply(kinds, positions,
                                                                      r.recall.strategies[name].per_request),
        }
        if not t["feasible"]:  # absent: feasible (the committed results of earlier runs stay comparable)
            figures[name].update(feasible=False, infeasible_from=t["infeasible_from"])
        seconds[name] = round(run.seconds, 3)
    return figures, seconds


def _pct(a: float, b: float) -> float | None:
    return round(100 * (a - b) / b, 1) if b else None


def summarise(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Which strategy is cheapest where; where pruning costs more than full; cache_aware_prune vs its peers."""
    rows = [r for r in rows if r.get("cost")]
    cheapest, dearer, versus = [], [], []
    within = compared = 0
    for r in rows:
        cost = r["cost"]
        where = {"workload": r["workload"], "turns": r["turns"], "seed": r["seed"]}
        feasible = [s for s in STRATEGIES_PRICED if cost[s].get("feasible", True)]
        infeasible = [s for s in STRATEGIES_PRICED if s not in feasible]
        if feasible:
            best = min(feasible, key=lambda s: (cost[s]["dollars"], STRATEGIES_PRICED.index(s)))
            cheapest.append({**where, "strategy": best, "dollars": cost[best]["dollars"],
                             "full": cost["full"]["dollars"], **({"infeasible": infeasible} if infeasible else {})})
        full_ran = cost["full"].get("feasible", True)
        for s in PRUNING if full_ran else ():  # full could not have run: nothing to compare its dollars with
            if not cost[s].get("feasible", True):
                continue
            if cost[s]["dollars"] > cost["full"]["dollars"]:
                dearer.append({**where, "strategy": s, "dollars": cost[s]["dollars"],
                               "full": cost["full"]["dollars"], "pct": _pct(cost[s]["dollars"],
                                                                            cost["full"]["dollars"])})
        aware = cost["cache_aware_prune"]
        if full_ran:
            compared += 1
            within += aware["dollars"] <= 1.01 * cost["full"]["dollars"]
        ran = aware.get("feasible", True)
        versus.append({**where, "dollars": aware["dollars"], "facts_missing_max": aware["facts_missing_max"],
                       **{f"vs_{p}_pct": _pct(aware["dollars"], cost[p]["dollars"])
                          if ran and cost[p].get("feasible", True) else None for p in PEERS},
                       **{f"{p}_facts_missing_max": cost[p]["facts_missing_max"] for p in PEERS}})
    return {"cheapest": cheapest, "pruning_dearer_than_full": dearer, "cache_aware_prune": versus,
            "cache_aware_within_1pct_of_full": {"count": within, "of": compared},
            "recall": recall_agreement.summarise(rows)}


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The cost part of the SUMMARY, as sentences."""
    if not summary or not summary.get("cheapest"):
        return []
    out = ["cheapest strategy:        " + "; ".join(
        f"{c['workload']} {c['turns']:,}: {c['strategy']} ${c['dollars']:,.2f} "
        + (f"(full ${c['full']:,.2f})" if "full" not in c.get("infeasible", ())
           else f"(full could not run: ${c['full']:,.2f} before its first request over the window)")
        + (f", not ranked (infeasible: a request over the window): {', '.join(c['infeasible'])}"
           if c.get("infeasible") else "")
        for c in summary["cheapest"])]
    dearer = summary["pruning_dearer_than_full"]
    out.append("pruning dearer than full: " + ("; ".join(
        f"{d['workload']} {d['turns']:,} {d['strategy']} {d['pct']:+.1f}%" for d in dearer) or "nowhere"))
    w = summary["cache_aware_within_1pct_of_full"]
    out.append(f"cache_aware_prune:        within 1% of full (or cheaper) in {w['count']}/{w['of']} (where full "
               "could run); vs full, prune_every_request, clear_tool_uses (facts missing at worst: its own / "
               "theirs; n/a: one of the two could not run):")
    for v in summary["cache_aware_prune"]:
        out.append(f"  {v['workload']} {v['turns']:,}: ${v['dollars']:,.2f}, "
                   + ", ".join(f"{_signed(v[f'vs_{p}_pct'])} vs {p}" for p in PEERS)
                   + f"; facts missing {v['facts_missing_max']} / "
                   + "/".join(str(v[f"{p}_facts_missing_max"]) for p in PEERS))
    out += recall_agreement.summary_lines(summary.get("recall") or {})
    return out


def _signed(pct: float | None) -> str:
    return "n/a" if pct is None else f"{pct:+.1f}%"


def timed(session: Session) -> tuple[dict[str, dict[str, Any]], dict[str, float], float]:
    started = time.perf_counter()
    figures, seconds = measure(session)
    return figures, seconds, round(time.perf_counter() - started, 3)


#: The configuration whose replay is timed with and without recall (issue 20: the 2,000-turn tool_agent).
RECALL_COST_AT = ("tool_agent", 2000)


def times_recall(session: Session) -> bool:
    md = session.metadata or {}
    return (md.get("workload"), md.get("turns")) == RECALL_COST_AT


#: Timed replays of each kind, alternating (the best of them is quoted: other jobs only ever add time).
RECALL_COST_RUNS = 2


def recall_cost(session: Session, runs: int = RECALL_COST_RUNS) -> dict[str, Any]:
    """The same replay (every priced strategy, no snapshots) without recall and with it, alternating,
    ``runs`` times each: the best CPU seconds (``time.process_time``: this process only, so less disturbed
    by other jobs than the wall clock) and the best wall seconds of each, and the load average when it
    ran (timings: they belong to the run, not the code)."""
    out: dict[str, Any] = {"workload": RECALL_COST_AT[0], "turns": RECALL_COST_AT[1],
                           "strategies": len(STRATEGIES_PRICED), "runs": runs}
    for _ in range(runs):
        for label, recall in (("without", False), ("with", True)):
            wall, cpu = time.perf_counter(), time.process_time()
            replay(session, STRATEGIES_PRICED, settings=settings(), snapshots=False, recall=recall)
            cpu, wall = round(time.process_time() - cpu, 3), round(time.perf_counter() - wall, 3)
            out[f"cpu_s_{label}"] = min(cpu, out.get(f"cpu_s_{label}", cpu))
            out[f"wall_s_{label}"] = min(wall, out.get(f"wall_s_{label}", wall))
    out["load_average"] = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    out["cpus"] = os.cpu_count() or 1
    return out
