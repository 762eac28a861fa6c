"""Context recall against the ground truth, per benchmark configuration (issue 20's validation).

Generated workloads know what each reply needs: the facts it uses (``REF:key``) and what its tool calls
copy from the context (``copies``: an edited line, the lines a write keeps, a re-run's arguments, a
re-read path, a document id; ``pruner.replay.facts.CopyBook``). Per configuration:

* **Requests**: every request whose reply uses a fact the strategy's context lacks (no carrier of its
  latest version, no summary quoting it) should show a recall loss there (some used term missing). The
  figures: such requests, and how many of them had recall 1 (``unseen``).
* **Order**: ordering the strategies by recall and by the needs missing at the replies should agree,
  ties allowed: a *discordant* pair is one where a strategy misses strictly fewer needs and also has
  lower recall by more than ``RECALL_TIE``. The needs are the facts and the copies whose text holds a
  distinctive term (``reply_needs_missing``): what recall is defined to count. A copy of plain words
  only (``reply_copies_without_terms``: a search for "optional filter index public", a query over
  plain-word tables) is outside that definition, which leaves language out on purpose; the order
  against every need (``reply_needs_missing_all``) is printed beside, as the definition's limit.
* **Why an order disagrees**: each strategy's lost terms are split by the kind of reply they were lost
  at (``reply_kinds``, from the generator's metadata): ``fact`` (a reply that uses a fact), ``reuse``
  (a tool call that reuses an earlier tool result, document or file), ``new`` (a call with new
  arguments: a term it shares with the context is there by chance) and ``text`` (any other reply); and
  copies missing with recall 1 are counted (``reply_copies_unseen``: what the copy needs is gone, yet
  its terms still stand somewhere, e.g. in a summary's list of terms, which holds them without saying
  which value went with which name). The **labelled order** compares the facts alone: recall over the
  ``fact`` replies against facts missing at those replies (``reply_facts_missing``).

>>> figures = {"a": {"context_recall": 1.0, "reply_needs_missing": 0},
...            "b": {"context_recall": 0.9, "reply_needs_missing": 3},
...            "c": {"context_recall": 0.95, "reply_needs_missing": 5},
...            "d": {"context_recall": 0.9505, "reply_needs_missing": 6}}
>>> discordant(figures)
[('b', 'c'), ('b', 'd')]
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ..model import Session

#: The kinds of reply lost terms are split by (see the module docstring), in print order.
REPLY_KINDS = ("fact", "reuse", "new", "text")
_REUSED = ("call:", "chunk:", "file:")  # items whose second appearance means the call reused the first one
_FILE_CALLS = ("edit_file", "write_file")  # they copy lines of a file the context showed


def reply_kinds(session: Session) -> dict[int, str]:
    """Per assistant position of a generated session, the kind of reply (``REPLY_KINDS``), from its ground
    truth: a reply that uses a fact; a call whose result repeats an item an earlier message carried (a
    re-run, a re-read of a file, a fetch of a document already retrieved) or that edits or writes a file;
    a call with new arguments; any other reply. Nothing here reads the text: only the generator's metadata."""
    messages = session.messages
    results = {m.tool_call_id: m for m in messages if m.tool_call_id is not None}
    seen: set[str] = set()
    kinds: dict[int, str] = {}
    for p, m in enumerate(messages):
        md = m.metadata or {}
        if m.role == "assistant":
            if md.get("uses") or md.get("untagged_uses"):
                kinds[p] = "fact"
            elif m.tool_calls:
                items = {str(e).rpartition("@")[0] for c in m.tool_calls if c.id in results
                         for e in (results[c.id].metadata or {}).get("carries", ())}
                reused = any(i.startswith(_REUSED) and i in seen for i in items)
                kinds[p] = "reuse" if reused or any(c.name in _FILE_CALLS for c in m.tool_calls) else "new"
            else:
                kinds[p] = "text"
        for e in (*md.get("carries", ()), *md.get("partial", ())):
            seen.add(str(e).rpartition("@")[0])
    return kinds


def split_by_reply(kinds: Mapping[int, str], positions: Sequence[int], counts: Sequence[int]) -> dict[str, int]:
    """``counts`` (one per request, at reply ``positions``) summed per kind of reply."""
    out = dict.fromkeys(REPLY_KINDS, 0)
    for p, n in zip(positions, counts):
        out[kinds.get(p, "text")] += n
    return out


def reply_fact_figures(fact_checks: Iterable[tuple[Any, ...]]) -> dict[str, Any]:
    """(request, key, missing, recall below 1, what still held the key) checks -> counts."""
    missing = [c for c in fact_checks if c[2]]
    unseen = [c for c in missing if not c[3]]
    held_by: dict[str, int] = {}
    for c in unseen:
        held_by[c[4]] = held_by.get(c[4], 0) + 1
    return {"reply_facts_missing": len(missing), "reply_facts_unseen": len(unseen),
            "reply_facts_unseen_held_by": dict(sorted(held_by.items()))}


def reply_copy_figures(copy_checks: Iterable[tuple[Any, ...]]) -> dict[str, int]:
    """(request, item, missing, recall below 1, text holds a term) checks -> counts."""
    checks = list(copy_checks)
    missing = [c for c in checks if c[2]]
    return {"reply_copies_missing": len(missing), "reply_copies_unseen": sum(1 for c in missing if not c[3]),
            "reply_copies_without_terms": sum(1 for c in missing if not c[4])}


#: Recalls closer than this are a tie: the reports print recall to 0.1 percentage point, and at
#: tool_agent 2,000 (about 2,000 used terms) it is two terms, less than one request's reply holds.
RECALL_TIE = 0.001


def needs_missing(f: Mapping[str, Any], *, plain_words: bool = False) -> int:
    """Facts and copies missing at the replies that need them (0 for results without the split); copies
    of plain words only (no distinctive term) count with ``plain_words``."""
    copies = int(f.get("reply_copies_missing", 0))
    if not plain_words:
        copies -= int(f.get("reply_copies_without_terms", 0))
    return int(f.get("reply_facts_missing", 0)) + copies


def discordant(figures: Mapping[str, Mapping[str, Any]], key: str = "reply_needs_missing") -> list[tuple[str, str]]:
    """Pairs (a, b): a misses fewer needs (``key``) than b, yet keeps less of what the replies used
    (by more than ``RECALL_TIE``)."""
    names = sorted(figures)
    out = []
    for a in names:
        for b in names:
            fa, fb = figures[a], figures[b]
            if fa[key] < fb[key] and fa["context_recall"] < fb["context_recall"] - RECALL_TIE:
                out.append((a, b))
    return out


def labelled(figures: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]] | None:
    """Per strategy, recall over the replies that use a fact and the facts missing at them (the labelled
    order's two sides); None when the figures carry no split (results of an earlier version)."""
    out = {}
    for name, f in figures.items():
        used, lost = f.get("used_terms_by_reply"), f.get("terms_missing_by_reply")
        if used is None or lost is None:
            return None
        out[name] = {"reply_facts_missing": f.get("reply_facts_missing", 0),
                     "context_recall": round(1 - lost["fact"] / used["fact"], 6) if used["fact"] else 1.0}
    return out


def _why(cost: Mapping[str, Mapping[str, Any]], pairs: Sequence[tuple[str, str]]) -> dict[str, dict[str, int]]:
    """The lost terms, per kind of reply, of each strategy in a discordant pair."""
    names = sorted({n for p in pairs for n in p})
    return {n: dict(cost[n]["terms_missing_by_reply"]) for n in names if "terms_missing_by_reply" in cost[n]}


def summarise(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Agreement over every configuration with cost columns (and the timed replay with and without recall)."""
    rows = list(rows)
    per_config = []
    for r in rows:
        cost = r.get("cost") or {}
        if not cost or any("context_recall" not in f for f in cost.values()):
            continue
        pairs = discordant({n: {**f, "reply_needs_missing": needs_missing(f)} for n, f in cost.items()})
        all_pairs = discordant({n: {**f, "reply_needs_missing": needs_missing(f, plain_words=True)}
                                for n, f in cost.items()})
        fact_side = labelled(cost)
        per_config.append({
            "workload": r["workload"], "turns": r["turns"], "seed": r["seed"],
            "reply_facts_missing": sum(f.get("reply_facts_missing", 0) for f in cost.values()),
            "reply_facts_unseen": sum(f.get("reply_facts_unseen", 0) for f in cost.values()),
            "unseen_held_by": _add(f.get("reply_facts_unseen_held_by", {}) for f in cost.values()),
            "needs_missing": {name: needs_missing(f) for name, f in cost.items()},
            "needs_missing_all": {name: needs_missing(f, plain_words=True) for name, f in cost.items()},
            "copies_missing": {name: f.get("reply_copies_missing", 0) for name, f in cost.items()},
            "copies_unseen": {name: f.get("reply_copies_unseen", 0) for name, f in cost.items()},
            "copies_without_terms": sum(f.get("reply_copies_without_terms", 0) for f in cost.values()),
            "discordant": [list(p) for p in pairs],
            "discordant_all_needs": [list(p) for p in all_pairs],
            "lost_by_reply": _why(cost, [*pairs, *all_pairs]),
            "labelled_discordant": ([list(p) for p in discordant(fact_side, key="reply_facts_missing")]
                                    if fact_side is not None else None),
            "recall": {name: f["context_recall"] for name, f in cost.items()},
        })
    n = len(per_config)
    split = [c for c in per_config if c["labelled_discordant"] is not None]
    return {
        "configurations": n,
        "recall_cost": next((dict(r["recall_cost"]) for r in rows if r.get("recall_cost")), None),
        "order_agrees": sum(1 for c in per_config if not c["discordant"]),
        "order_agrees_all_needs": sum(1 for c in per_config if not c["discordant_all_needs"]),
        "labelled_configurations": len(split),
        "labelled_order_agrees": sum(1 for c in split if not c["labelled_discordant"]),
        "reply_facts_missing": sum(c["reply_facts_missing"] for c in per_config),
        "reply_facts_unseen": sum(c["reply_facts_unseen"] for c in per_config),
        "requests_agree": sum(1 for c in per_config if not c["reply_facts_unseen"]),
        "unseen_held_by": _add(c["unseen_held_by"] for c in per_config),
        "copies_missing": sum(v for c in per_config for v in c["copies_missing"].values()),
        "copies_unseen": sum(v for c in per_config for v in c["copies_unseen"].values()),
        "copies_without_terms": sum(c["copies_without_terms"] for c in per_config),
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
    with_plain = (f", {summary['order_agrees_all_needs']}/{n} counting the copies of plain words too"
                  if "order_agrees_all_needs" in summary else "")
    out = [f"context recall vs the ground truth at each reply (the facts it uses and what its calls copy: an "
           f"edited line, the lines a write keeps, a re-run's arguments, a path, a document id): strategies "
           f"ordered alike by recall and by needs missing in {summary['order_agrees']}/{n} configurations (ties "
           f"allowed: recall within {100 * RECALL_TIE:.1f} pp; needs whose text holds a distinctive term{with_plain}); "
           f"requests whose reply needs a missing fact: {summary['reply_facts_missing']}, of them "
           f"{summary['reply_facts_unseen']} with recall 1 (all of a configuration's show a loss in "
           f"{summary['requests_agree']}/{n})"
           + ("; at those with recall 1 the value the reply wrote still stood in the context, in: "
              + ", ".join(f"{k} {v}" for k, v in summary.get("unseen_held_by", {}).items())
              if summary.get("unseen_held_by") else "")
           + (f"; copies missing: {summary['copies_missing']}, of them {summary['copies_without_terms']} of plain "
              f"words only (no term recall counts), and {summary['copies_unseen']} at a request with recall 1 "
              "(a copy of plain words, or one whose text was gone while its terms stood elsewhere in the context)"
              if "copies_missing" in summary else "")]
    for c in summary["per_config"]:
        every = c.get("discordant_all_needs") or []
        if c["discordant"] or every or c["reply_facts_unseen"]:
            what = []
            for label, pairs, needs in (("discordant", c["discordant"], c["needs_missing"]),
                                        ("counting plain-word copies, discordant", every,
                                         c.get("needs_missing_all", {}))):
                if pairs:
                    what.append(label + " " + ", ".join(
                        f"{a}<{b} (needs missing {needs[a]} vs {needs[b]}, recall {100 * c['recall'][a]:.2f} % vs "
                        f"{100 * c['recall'][b]:.2f} %, copies missing at recall 1 {c['copies_unseen'][a]} vs "
                        f"{c['copies_unseen'][b]})" for a, b in pairs))
            if (c["discordant"] or every) and c.get("lost_by_reply"):
                what.append("terms lost at replies of kind " + "/".join(REPLY_KINDS) + ": " + ", ".join(
                    f"{name} " + "/".join(str(k.get(kind, 0)) for kind in REPLY_KINDS)
                    for name, k in c["lost_by_reply"].items()))
            if c["reply_facts_unseen"]:
                what.append(f"{c['reply_facts_unseen']} of {c['reply_facts_missing']} fact-missing replies at recall 1")
            out.append(f"  {c['workload']} {c['turns']:,}: " + "; ".join(what))
    if summary.get("labelled_configurations"):
        m = summary["labelled_configurations"]
        off = [f"{c['workload']} {c['turns']:,} " + ", ".join(f"{a}<{b}" for a, b in c["labelled_discordant"])
               for c in summary["per_config"] if c["labelled_discordant"]]
        out.append(f"  facts alone, at the replies that use one: recall there and facts missing there order the "
                   f"strategies alike in {summary['labelled_order_agrees']}/{m}"
                   + (" (discordant: " + "; ".join(off) + ")" if off else ""))
    t = summary.get("recall_cost")
    if t:
        load = "/".join(f"{x:.1f}" for x in t["load_average"]) if t.get("load_average") else "unknown"
        out.append(f"cost of recall: {t['workload']} {t['turns']:,} replayed under its {t['strategies']} strategies, "
                   f"without and with recall, best of {t.get('runs', 1)} alternating runs each: "
                   f"CPU {t['cpu_s_without']:.2f} s / {t['cpu_s_with']:.2f} s "
                   f"({_change(t['cpu_s_with'], t['cpu_s_without'])}), wall {t['wall_s_without']:.2f} s / "
                   f"{t['wall_s_with']:.2f} s ({_change(t['wall_s_with'], t['wall_s_without'])}); load average "
                   f"{load} on {t['cpus']} CPUs (budget: +50 %)")
    out.append("recall per strategy:      " + "; ".join(
        f"{c['workload']} {c['turns']:,}: " + " ".join(f"{k} {100 * v:.1f}%" for k, v in c["recall"].items())
        for c in summary["per_config"]))
    return out


def _change(new: float, old: float) -> str:
    return f"{100 * (new - old) / old:+.0f} %" if old else "n/a"
