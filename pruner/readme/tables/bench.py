"""The README's benchmark table: the default ``pruner bench`` run, per workload across its sizes."""

from __future__ import annotations

from typing import Any

from . import register_table


def _range(values: list[float | None], unit: str = "%") -> str:
    """``lo–hi`` with one decimal, the unit once at the end; ``n/a`` when nothing was measured."""
    measured = [v for v in values if v is not None]
    if not measured:
        return "n/a"
    lo, hi = min(measured), max(measured)
    return f"{lo:.1f}{unit}" if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f}–{hi:.1f}{unit}"


def _turns(n: int) -> str:
    return f"{n:,}"


@register_table("bench", source="sample_sessions/bench/results.json", command="pruner bench")
def render(results: dict[str, Any]) -> str:
    rows, summary, sizes = results["rows"], results["summary"], results["meta"]["sizes"]
    by_workload: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_workload.setdefault(r["workload"], []).append(r)
    span = f"{_turns(min(sizes))} → {_turns(max(sizes))} turns" if len(sizes) > 1 else f"{_turns(sizes[0])} turns"
    out = [f"| workload | reduction ({span}) | oracle's reduction | % of oracle | tagged facts kept | idempotent "
           "| truncation to the same budget loses | prune ms per 1,000 messages |",
           "|---|---|---|---|---|---|---|---|"]
    for w, rs in by_workload.items():
        n = len(rs)
        kept = sum(1 for r in rs if r["tagged_facts_preserved"])
        idem = sum(1 for r in rs if r["idempotent"])
        lost = sum(r["truncation_tagged_facts_missing"] for r in rs)
        out.append(f"| {w} | {_range([r['reduction_pct'] for r in rs])} "
                   f"| {_range([r['oracle_reduction_pct'] for r in rs])} "
                   f"| {_range([r['pct_of_oracle'] for r in rs])} | {kept}/{n} | {idem}/{n} "
                   f"| {lost} tagged fact{'s' if lost != 1 else ''} "
                   f"| {_range([r['ms_per_1000_messages'] for r in rs], '')} |")
    n = summary["configurations"]
    lost = summary["untagged_facts_lost"]
    out += ["", f"SUMMARY: {n} configurations, tagged facts preserved in {summary['tagged_facts_preserved']['count']}"
                f"/{n}, idempotent in {summary['idempotent']['count']}/{n}. Of {summary['untagged_facts']} facts "
                f"referred to only in paraphrase, {lost} {'was' if lost == 1 else 'were'} lost; no deterministic "
                "pass can see such references."]
    chat = [r for r in rows if r["workload"] == "plain_chat"]
    if chat:
        r = max(chat, key=lambda r: r["turns"])
        gap = r["tokens_after"] - r["oracle_tokens_after"]
        more = r["messages_after"] - r["oracle_messages_after"]
        if gap > 0:
            out += ["", f"plain_chat at {_turns(r['turns'])} turns keeps {gap:,} tokens more than the oracle: "
                        f"{r['placeholder_tokens']:,} of them ({100 * r['placeholder_tokens'] / gap:.1f}%) are "
                        f"placeholders, and {gap - r['placeholder_tokens']:,} are the {more} "
                        f"message{'s' if more != 1 else ''} it keeps and the oracle drops."]
    largest = max(rows, key=lambda r: r["messages_before"])
    out += ["", f"Prune time is the median of {results['meta']['timing_runs']} passes-only runs after a warm-up: "
                f"{largest['prune_ms']:,.1f} ms for {largest['workload']} at {_turns(largest['turns'])} turns "
                f"({largest['messages_before']:,} messages)."]
    return "\n".join(out)
