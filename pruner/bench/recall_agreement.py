"""Context recall against the ground truth, per benchmark configuration (issue 20's validation).

Generated workloads know which facts each message refers to. Two checks, per configuration:

* **Requests**: every request whose reply refers to a fact (``REF:key``) that the strategy's context
  lacks (``pruner.replay.facts``: no carrier of its latest version, no summary quoting it) should show
  a recall loss there (some used term missing). The figures: such requests, and how many of them had
  recall 1 (``unseen``: the reply's terms were all still held, e.g. another fact's message spells the
  same value).
* **Order**: ordering the strategies by recall and by facts missing (``requests_missing_facts``: requests
  at which a fact some later message needs is missing) should agree, ties allowed: a *discordant* pair
  is one where a strategy misses strictly fewer facts and also has strictly lower recall.

>>> figures = {"a": {"context_recall": 1.0, "requests_missing_facts": 0},
...            "b": {"context_recall": 0.9, "requests_missing_facts": 3},
...            "c": {"context_recall": 0.95, "requests_missing_facts": 5}}
>>> discordant(figures)
[('b', 'c')]
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping


def reply_fact_figures(fact_checks: Iterable[tuple]) -> dict[str, Any]:
    """(request, key, missing, recall below 1, what still held the key) checks -> counts."""
    missing = [c for c in fact_checks if c[2]]
    unseen = [c for c in missing if not c[3]]
    held_by: dict[str, int] = {}
    for c in unseen:
        held_by[c[4]] = held_by.get(c[4], 0) + 1
    return {"reply_facts_missing": len(missing), "reply_facts_unseen": len(unseen),
            "reply_facts_unseen_held_by": dict(sorted(held_by.items()))}


def discordant(figures: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Pairs (a, b): a misses fewer facts than b, yet keeps less of what the replies used."""
    names = sorted(figures)
    out = []
    for a in names:
        for b in names:
            fa, fb = figures[a], figures[b]
            if fa["requests_missing_facts"] < fb["requests_missing_facts"] and \
                    fa["context_recall"] < fb["context_recall"]:
                out.append((a, b))
    return out


def summarise(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Agreement over every configuration with cost columns."""
    per_config = []
    for r in rows:
        cost = r.get("cost") or {}
        if not cost or any("context_recall" not in f for f in cost.values()):
            continue
        pairs = discordant(cost)
        per_config.append({
            "workload": r["workload"], "turns": r["turns"], "seed": r["seed"],
            "reply_facts_missing": sum(f.get("reply_facts_missing", 0) for f in cost.values()),
            "reply_facts_unseen": sum(f.get("reply_facts_unseen", 0) for f in cost.values()),
            "unseen_held_by": _add(f.get("reply_facts_unseen_held_by", {}) for f in cost.values()),
            "discordant": [list(p) for p in pairs],
            "recall": {name: f["context_recall"] for name, f in cost.items()},
        })
    n = len(per_config)
    return {
        "configurations": n,
        "order_agrees": sum(1 for c in per_config if not c["discordant"]),
        "reply_facts_missing": sum(c["reply_facts_missing"] for c in per_config),
        "reply_facts_unseen": sum(c["reply_facts_unseen"] for c in per_config),
        "requests_agree": sum(1 for c in per_config if not c["reply_facts_unseen"]),
        "unseen_held_by": _add(c["unseen_held_by"] for c in per_config),
        "per_config": per_config,
    }


def _add(counts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            out[k] = out.get(k, 0) + v
    return dict(sorted(out.items()))


def summary_lines(summary: Mapping[str, Any]) -> list[str]:
    """The recall part of the benchmark's SUMMARY, as sentences."""
    if not summary or not summary.get("configurations"):
        return []
    n = summary["configurations"]
    out = [f"context recall vs facts missing: strategies ordered alike in {summary['order_agrees']}/{n} "
           "configurations (ties allowed); requests whose reply needs a missing fact: "
           f"{summary['reply_facts_missing']}, of them {summary['reply_facts_unseen']} with recall 1 "
           f"(all of a configuration's show a loss in {summary['requests_agree']}/{n}); at those with recall 1 the "
           "value the reply wrote still stood in the context, in: "
           + (", ".join(f"{k} {v}" for k, v in summary.get("unseen_held_by", {}).items()) or "none")]
    for c in summary["per_config"]:
        if c["discordant"] or c["reply_facts_unseen"]:
            what = []
            if c["discordant"]:
                what.append("discordant " + ", ".join(f"{a}<{b}" for a, b in c["discordant"]))
            if c["reply_facts_unseen"]:
                what.append(f"{c['reply_facts_unseen']} of {c['reply_facts_missing']} fact-missing replies at recall 1")
            out.append(f"  {c['workload']} {c['turns']:,}: " + "; ".join(what))
    out.append("recall per strategy:      " + "; ".join(
        f"{c['workload']} {c['turns']:,}: " + " ".join(f"{k} {100 * v:.1f}%" for k, v in c["recall"].items())
        for c in summary["per_config"]))
    return out
