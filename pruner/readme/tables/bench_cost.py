"""The README's cost table: the default ``pruner bench`` run's replay of every strategy, in dollars."""

from __future__ import annotations

from typing import Any

from . import register_table

SHORT = {"full": "full", "truncate": "truncate", "prune_every_request": "prune every request",
         "cache_aware_prune": "cache-aware prune", "compact": "compact", "prune_then_compact": "prune then compact",
         "clear_tool_uses": "clear_tool_uses"}


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:+.1f}%"


def _best(aware: list[dict[str, Any]]) -> str:
    known = [v["vs_full_pct"] for v in aware if v["vs_full_pct"] is not None]
    return f"{min(known):+.1f}%" if known else "n/a"


@register_table("bench-cost", source="sample_sessions/bench/results.json", command="pruner bench")
def render(results: dict[str, Any]) -> str:
    rows = [r for r in results["rows"] if r.get("cost")]
    if not rows:
        return "(this results file has no cost columns: run `pruner bench` again)"
    m = results["meta"]["cost"]
    names = list(rows[0]["cost"])
    out = [f"Dollars per session ({m['model']} list prices, {m['prices']}; {m['provider']} prompt cache). A `*` "
           "marks the cheapest strategy that could have run. `infeasible from request K` marks one whose "
           f"context exceeds the {m['context_window']:,}-token window at request K: the API refuses that "
           "request, so the strategy could not have run; its dollars (in brackets) count only the requests "
           "before K, and it is never ranked.", "",
           "| workload | turns | " + " | ".join(SHORT.get(n, n) for n in names) + " | cache-aware vs full |",
           "|---|---:|" + "---:|" * len(names) + "---:|"]
    for r in rows:
        cost = r["cost"]
        ran = [n for n in names if cost[n].get("feasible", True)]
        best = min(ran, key=lambda n: (cost[n]["dollars"], names.index(n))) if ran else None
        cells = []
        for n in names:
            c = cost[n]
            if c.get("feasible", True):
                cell = f"${c['dollars']:,.2f}" + ("*" if n == best else "")
            else:
                cell = f"(${c['dollars']:,.2f}) infeasible from request {c['infeasible_from']:,}"
            cells.append(cell)
        full = cost["full"]["dollars"]
        both = cost["full"].get("feasible", True) and cost["cache_aware_prune"].get("feasible", True)
        vs = 100 * (cost["cache_aware_prune"]["dollars"] - full) / full if full and both else None
        out.append(f"| {r['workload']} | {r['turns']:,} | " + " | ".join(cells) + f" | {_pct(vs)} |")
    s = results["summary"].get("cost", {})
    dearer = s.get("pruning_dearer_than_full", [])
    every = [d for d in dearer if d["strategy"] == "prune_every_request"]
    spread = f" (by {min(d['pct'] for d in every):+.0f}% to {max(d['pct'] for d in every):+.0f}%)" if every else ""
    comparable = sum(1 for r in rows if r["cost"]["full"].get("feasible", True))
    out += ["", f"Pruning before every request costs more than sending everything in {len(every)} of {comparable} "
                f"configurations where sending everything could run{spread}."]
    aware = s.get("cache_aware_prune", [])
    within = s.get("cache_aware_within_1pct_of_full", {})
    if aware:
        beats = {p: sum(1 for v in aware if (v[f"vs_{p}_pct"] or 0) < 0) for p in ("full", "prune_every_request",
                                                                               "clear_tool_uses")}
        lost = max(v["facts_missing_max"] for v in aware)
        out += ["", f"cache_aware_prune costs at most 1% more than full in {within.get('count')}/{within.get('of')} "
                    f"configurations; it is cheaper than full in {beats['full']}, than prune_every_request in "
                    f"{beats['prune_every_request']} and than clear_tool_uses in {beats['clear_tool_uses']} of "
                    f"{len(aware)} (best {_best(aware)} against full); at worst "
                    f"{lost} fact{'s' if lost != 1 else ''} a later message needs missing from a context."]
    worst = {n: max(r["cost"][n]["facts_missing_max"] for r in rows) for n in names}
    out += ["", "Facts a later message needs that were missing from a context, at worst: "
                + ", ".join(f"{SHORT.get(n, n)} {worst[n]}" for n in names) + "."]
    timed = [r for r in rows if r.get("replay_s") is not None]
    if timed:
        big = max(timed, key=lambda r: (r["workload"] == "tool_agent", r["turns"]))
        requests = big["cost"]["full"]["requests"]
        prunes = 1000 * big["replay_s"] / big["prune_ms"]
        out += ["", f"Replaying {big['workload']} at {big['turns']:,} turns ({big['messages_before']:,} messages, "
                    f"{requests:,} requests) under all {len(names)} strategies took {big['replay_s']:.1f} s, "
                    f"as long as {prunes:.0f} prunes of the whole session ({big['prune_ms']:.0f} ms each in the "
                    "same run)."]
    return "\n".join(out)
