"""The benchmark: every (workload, size, seed), the pruner beside three baselines.

>>> results = run_benchmark(workloads=("plain_chat",), sizes=(20,), timing_runs=2)
>>> row = results.rows[0]
>>> row["workload"], row["turns"], row["tagged_facts_preserved"], row["idempotent"]
('plain_chat', 20, True, True)
>>> results.summary["configurations"], results.passed
(1, True)

Results schema (``schema: "pruner.bench/1"``), as written by ``to_json``::

    {"schema": "pruner.bench/1",
     "meta": {"counter", "encoding", "generator", "config" (the PruneConfig used),
              "workloads" (name -> parameters), "sizes", "seeds", "timing_runs",
              "environment" (command, date, machine, load: see ``environment.py``)},
     "rows": [ROW, ...],            # one per workload x size x seed, in run order
     "baselines": [BASELINE, ...],  # four per row: none, truncation, oracle, pruner
     "summary": SUMMARY}

ROW (``to_csv`` writes the same fields, one line per row; ``removed_by_rule`` and
``restored_by_rule`` become ``removed_<rule>`` / ``restored_<rule>`` columns):

* ``workload``, ``turns``, ``seed``, ``session_sha256`` (of the native JSONL: same seed, same hash)
* ``counter``: the token counter (e.g. ``tiktoken/o200k_base``)
* ``messages_before``, ``messages_after``, ``tokens_before``, ``tokens_after`` (kept messages
  plus placeholders), ``placeholder_tokens``, ``reduction_pct``
* ``expired``, ``duplicate``, ``restored``: messages per status; ``removed_by_rule``,
  ``restored_by_rule``: messages per rule; ``rounds``
* ``tagged_facts``: facts some message refers to with ``REF:key``; ``tagged_facts_missing``:
  how many of them no kept message carries (final value); ``tagged_facts_preserved``: none missing
* ``untagged_facts``: facts referred to only in paraphrase; ``untagged_facts_lost``
* ``live_items``, ``live_items_lost``: items of information a safe pruner must keep a copy
  of (see ``pruner.bench.workloads.world``), and how many the pruner kept no copy of
* ``required_messages``, ``redundant_messages``: the generator's labels
* ``idempotent``: pruning the kept session again keeps the same ids with the same content
* ``prune_ms``: median ``stats.elapsed_ms`` (the passes only; token counts are cached) of
  ``timing_runs`` runs after one warm-up; ``prune_ms_min``, ``prune_ms_max``,
  ``ms_per_1000_messages``
* ``oracle_messages_after``, ``oracle_tokens_after``, ``oracle_reduction_pct``,
  ``pct_of_oracle`` (the pruner's reduction as a percentage of the oracle's; null when the
  oracle removes nothing)
* ``truncation_last_n``, ``truncation_messages_after``, ``truncation_tokens_after``,
  ``truncation_reduction_pct``, ``truncation_tagged_facts_missing``,
  ``truncation_untagged_facts_lost``, ``truncation_live_items_lost``: keep the system prompt
  and the last N messages, N the largest that fits the pruner's ``tokens_after``
* ``cost`` (strategy -> ``dollars``, ``cached_share``, ``peak_context``, ``rejected``, ``prunes``,
  ``compactions``, ``facts_missing_max``, ``requests_missing_facts``, ``requests``): the replay of
  the same session under each counterfactual strategy (``pruner.bench.cost``; ``meta["cost"]``
  names the prices) and ``context_recall``, ``used_terms``, ``terms_missing``, ``reply_facts_missing``,
  ``reply_facts_unseen`` (``pruner.bench.recall_agreement``); the CSV has ``dollars_<strategy>``,
  ``cached_share_<strategy>`` and ``context_recall_<strategy>``;
  ``replay_s``, ``replay_s_by_strategy``: how long those replays took (timings); on tool_agent at 2,000
  turns only, ``recall_cost``: the same replay timed without and with recall (``pruner.bench.cost.recall_cost``)
* ``bound``, ``regret``: the hindsight bound of the same replay and every priced strategy's dollars over it
  (``pruner.bench.regret``), computed up to ``meta["bound_turns"]`` turns, ``computed: false`` above

BASELINE: ``workload``, ``turns``, ``seed``, ``method`` (``none`` | ``truncation`` | ``oracle``
| ``pruner``), ``messages_after``, ``tokens_after``, ``reduction_pct``, ``pct_of_oracle``,
``tagged_facts_missing``, ``untagged_facts_lost``, ``live_items_lost``.

SUMMARY (computed from the rows, never typed): ``configurations``, ``tagged_facts_preserved``
and ``idempotent`` (``{"count", "of"}``), ``untagged_facts`` / ``untagged_facts_lost``,
``per_workload`` (name -> ``reduction_pct``, ``pct_of_oracle``, ``oracle_reduction_pct``,
``ms_per_1000_messages`` each ``{"min", "max", "mean"}``, and ``truncation_tagged_facts_missing``),
``per_size`` (one entry per workload x size: ``seeds`` and ``{"mean", "sd", "min", "max"}`` of
``reduction_pct``, ``pct_of_oracle``, ``prune_ms``), ``truncation``
(``configurations_losing_facts``, ``tagged_facts_missing``), ``failures`` (one sentence per
failed configuration) and ``passed``; ``cost`` (``pruner.bench.cost.summarise``): the cheapest
strategy per configuration, where a pruning strategy costs more than ``full``, and
``cache_aware_prune`` against ``full``, ``prune_every_request`` and ``clear_tool_uses``.
"""

from __future__ import annotations

import csv
import gc
import hashlib
import io
import json
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable

from . import cost as cost_columns
from . import environment
from .baselines import oracle, truncate_to_budget
from ..errors import PrunerError
from ..jsonio import load_json_file
from ..analysis.fileops import FileTools
from ..formats.native import dumps as native_dumps
from ..engine.prune import PruneConfig, prune
from ..tokens import get_counter
from .workloads import GENERATOR_VERSION, SIZES, WORKLOADS, generate, lost_items, missing_facts, session_truth

SCHEMA = "pruner.bench/1"
TIMING_RUNS = 20
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class BenchmarkResults:
    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    baselines: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return bool(self.summary.get("passed"))

    def to_json(self) -> str:
        return json.dumps({"schema": SCHEMA, "meta": self.meta, "rows": self.rows,
                           "baselines": self.baselines, "summary": self.summary},
                          ensure_ascii=False, indent=1) + "\n"

    def to_csv(self) -> str:
        return rows_to_csv(self.rows)


def config_dict(config: PruneConfig) -> dict[str, Any]:
    d = asdict(config)
    d["disabled_rules"] = sorted(config.disabled_rules)
    d["file_tools"] = "default" if config.file_tools == FileTools() else "custom"
    return d


def _timing(session, config: PruneConfig, runs: int) -> list[float]:
    prune(session, config, validate=False)  # warm-up: fills the feature and token caches
    return [prune(session, config, validate=False).stats.elapsed_ms for _ in range(runs)]


def _pct(part: float, whole: float) -> float | None:
    return round(100 * part / whole, 2) if whole else None


def measure(session, *, config: PruneConfig, timing_runs: int = TIMING_RUNS) -> tuple[dict, list[dict]]:
    """One row and its four baseline entries for one generated session."""
    counter = get_counter(config.encoding)
    truth = session_truth(session)
    result = prune(session, config)
    s = result.stats
    kept_ids = [m.id for m in result.kept.messages]
    again = prune(result.kept, config)
    idempotent = ([(m.id, m.content) for m in again.kept.messages]
                  == [(m.id, m.content) for m in result.kept.messages])
    lost = missing_facts(truth, kept_ids)
    times = _timing(session, config, timing_runs) if timing_runs else [s.elapsed_ms]
    median_ms = statistics.median(times)
    removed: dict[str, int] = {}
    restored: dict[str, int] = {}
    for d in result.decisions:
        if d.status in ("expired", "duplicate"):
            removed[d.rule] = removed.get(d.rule, 0) + 1
        elif d.status == "restored":
            restored[d.rule] = restored.get(d.rule, 0) + 1
    base = {"workload": session.metadata.get("workload"), "turns": session.metadata.get("turns"),
            "seed": session.metadata.get("seed")}
    before = s.tokens_before
    orc = oracle(session, counter)
    trunc = truncate_to_budget(session, s.tokens_after, counter)
    orc_red = before - orc.tokens_after
    row = {
        **base,
        "session_sha256": hashlib.sha256(native_dumps(session).encode()).hexdigest(),
        "counter": s.counter,
        "messages_before": s.messages_before, "messages_after": s.messages_after,
        "tokens_before": before, "tokens_after": s.tokens_after, "placeholder_tokens": s.placeholder_tokens,
        "reduction_pct": round(100 * s.reduction, 2),
        "expired": s.by_status.get("expired", 0), "duplicate": s.by_status.get("duplicate", 0),
        "restored": s.by_status.get("restored", 0),
        "removed_by_rule": dict(sorted(removed.items())), "restored_by_rule": dict(sorted(restored.items())),
        "rounds": s.rounds,
        "tagged_facts": len(truth.tagged), "tagged_facts_missing": len(lost.tagged),
        "tagged_facts_preserved": not lost.tagged,
        "untagged_facts": len(truth.untagged_only), "untagged_facts_lost": len(lost.untagged),
        "live_items": len(truth.live), "live_items_lost": len(lost_items(truth, kept_ids)),
        "required_messages": len(truth.required),
        "redundant_messages": s.messages_before - len(truth.required),
        "idempotent": idempotent,
        "prune_ms": round(median_ms, 3), "prune_ms_min": round(min(times), 3),
        "prune_ms_max": round(max(times), 3), "timing_runs": len(times),
        "ms_per_1000_messages": round(1000 * median_ms / max(1, s.messages_before), 3),
        "oracle_messages_after": len(orc.kept), "oracle_tokens_after": orc.tokens_after,
        "oracle_reduction_pct": _pct(orc_red, before) or 0.0,
        "pct_of_oracle": _pct(before - s.tokens_after, orc_red),
    }
    baselines = []
    for method, kept, tokens_after in (("none", session.messages, before),
                                       ("truncation", trunc.kept, trunc.tokens_after),
                                       ("oracle", orc.kept, orc.tokens_after),
                                       ("pruner", result.kept.messages, s.tokens_after)):
        ids = [m.id for m in kept]
        lf = missing_facts(truth, ids)
        baselines.append({**base, "method": method, "messages_after": len(kept), "tokens_after": tokens_after,
                          "reduction_pct": _pct(before - tokens_after, before) or 0.0,
                          "pct_of_oracle": _pct(before - tokens_after, orc_red),
                          "tagged_facts_missing": len(lf.tagged), "untagged_facts_lost": len(lf.untagged),
                          "live_items_lost": len(lost_items(truth, ids))})
        if method == "truncation":
            row.update({"truncation_last_n": trunc.last_n, "truncation_messages_after": len(kept),
                        "truncation_tokens_after": tokens_after,
                        "truncation_reduction_pct": baselines[-1]["reduction_pct"],
                        "truncation_tagged_facts_missing": len(lf.tagged),
                        "truncation_untagged_facts_lost": len(lf.untagged),
                        "truncation_live_items_lost": baselines[-1]["live_items_lost"]})
    return row, baselines


def _stats(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"min": None, "max": None, "mean": None, "sd": None}
    return {"min": round(min(values), 3), "max": round(max(values), 3),
            "mean": round(statistics.fmean(values), 3),
            "sd": round(statistics.pstdev(values), 3) if len(values) > 1 else 0.0}


def failures(rows: Iterable[dict]) -> list[str]:
    out = []
    for r in rows:
        where = f"{r['workload']} {r['turns']} turns seed {r['seed']}"
        if not r["tagged_facts_preserved"]:
            out.append(f"{where}: {r['tagged_facts_missing']} tagged fact(s) missing after pruning")
        if not r["idempotent"]:
            out.append(f"{where}: pruning the kept session again changed it (not idempotent)")
    return out


def summarise(rows: list[dict]) -> dict[str, Any]:
    """The SUMMARY block, computed from the rows."""
    n = len(rows)
    per_workload: dict[str, list[dict[str, Any]]] = {}
    per_size: dict[tuple[str, int], list[dict]] = {}
    for r in rows:
        per_workload.setdefault(r["workload"], []).append(r)
        per_size.setdefault((r["workload"], r["turns"]), []).append(r)

    def column(rs, key):
        return [r[key] for r in rs if r[key] is not None]

    fails = failures(rows)
    losing = [r for r in rows if r["truncation_tagged_facts_missing"]]
    return {
        "configurations": n,
        "tagged_facts_preserved": {"count": sum(1 for r in rows if r["tagged_facts_preserved"]), "of": n},
        "idempotent": {"count": sum(1 for r in rows if r["idempotent"]), "of": n},
        "untagged_facts": sum(r["untagged_facts"] for r in rows),
        "untagged_facts_lost": sum(r["untagged_facts_lost"] for r in rows),
        "per_workload": {w: {
            "reduction_pct": _stats(column(rs, "reduction_pct")),
            "oracle_reduction_pct": _stats(column(rs, "oracle_reduction_pct")),
            "pct_of_oracle": _stats(column(rs, "pct_of_oracle")),
            "ms_per_1000_messages": _stats(column(rs, "ms_per_1000_messages")),
            "truncation_tagged_facts_missing": sum(r["truncation_tagged_facts_missing"] for r in rs),
        } for w, rs in per_workload.items()},
        "per_size": [{"workload": w, "turns": t, "seeds": [r["seed"] for r in rs],
                      "reduction_pct": _stats(column(rs, "reduction_pct")),
                      "pct_of_oracle": _stats(column(rs, "pct_of_oracle")),
                      "prune_ms": _stats(column(rs, "prune_ms")),
                      "tagged_facts_preserved": sum(1 for r in rs if r["tagged_facts_preserved"]),
                      "idempotent": sum(1 for r in rs if r["idempotent"])}
                     for (w, t), rs in per_size.items()],
        "truncation": {"configurations_losing_facts": len(losing),
                       "tagged_facts_missing": sum(r["truncation_tagged_facts_missing"] for r in rows)},
        "failures": fails,
        "passed": not fails and n > 0,
        **({"cost": cost_columns.summarise(rows)} if any(r.get("cost") for r in rows) else {}),
    }


def run_benchmark(*, workloads: Iterable[str] = tuple(WORKLOADS), sizes: Iterable[int] = SIZES,
                  seeds: int | Iterable[int] = 1, config: PruneConfig | None = None, timing_runs: int = TIMING_RUNS,
                  progress: Progress | None = None, command: str = "run_benchmark()",
                  cost: bool = True, bound_turns: int | None = None) -> BenchmarkResults:
    """Generate and measure every (workload, size, seed); ``seeds=N`` means seeds 0 .. N-1,
    a sequence names the seeds. ``progress(i, n, what)`` is called before each configuration.
    ``command`` is recorded in ``meta["environment"]`` with the machine, load and date.
    ``cost`` adds the replay's cost columns (``pruner.bench.cost``) to every row; ``bound_turns``: with
    them, the hindsight bound and each strategy's regret up to that many turns (``pruner.bench.regret``;
    None: ``regret.BOUND_TURNS``; 0: none)."""
    from . import regret

    bound_turns = regret.BOUND_TURNS if bound_turns is None else bound_turns
    config = config or PruneConfig()
    workloads, sizes = tuple(workloads), tuple(sizes)
    for w in workloads:
        if w not in WORKLOADS:
            raise PrunerError(f"unknown workload {w!r}; choose from {', '.join(WORKLOADS)}")
    if not sizes or any(not isinstance(t, int) or t < 1 for t in sizes):
        raise PrunerError(f"sizes must be positive numbers of turns, got {list(sizes)}")
    if isinstance(seeds, int):
        if seeds < 1:
            raise PrunerError(f"seeds must be at least 1, got {seeds}", setting="seeds")
        seeds = range(seeds)
    seed_values = [int(x) for x in seeds]
    if not seed_values:
        raise PrunerError("no seeds to run")
    plan = [(w, t, seed) for w in workloads for t in sizes for seed in seed_values]
    env = environment.start(command)
    rows: list[dict] = []
    baselines: list[dict] = []
    for i, (w, t, seed) in enumerate(plan, start=1):
        if progress:
            progress(i, len(plan), f"{w}, {t} turns, seed {seed}")
        session = generate(w, turns=t, seed=seed)
        # Freeze the session's objects out of the cyclic collector, so the timings
        # measure the passes rather than the collector rescanning a large session.
        gc.collect()
        gc.freeze()
        try:
            row, base = measure(session, config=config, timing_runs=timing_runs)
            if cost:
                row["cost"], row["replay_s_by_strategy"], row["replay_s"] = cost_columns.timed(session)
                if cost_columns.times_recall(session):  # issue 20: what recall adds to a replay's time
                    row["recall_cost"] = cost_columns.recall_cost(session)
                row.update(regret.for_row(session, t, bound_turns or None))
        finally:
            gc.unfreeze()
        rows.append(row)
        baselines += base
    counter = get_counter(config.encoding)
    meta = {"counter": counter.name, "encoding": config.encoding, "generator": GENERATOR_VERSION,
            "config": config_dict(config), "workloads": {w: WORKLOADS[w].as_dict() for w in workloads},
            "sizes": list(sizes), "seeds": seed_values, "timing_runs": timing_runs,
            "environment": environment.finish(env)}
    if cost:
        meta["cost"] = cost_columns.meta()
        meta["bound_turns"] = bound_turns
    return BenchmarkResults(rows=rows, summary=summarise(rows), baselines=baselines, meta=meta)


# ----- files ------------------------------------------------------------------------------

_NESTED = ("removed_by_rule", "restored_by_rule", "cost", "replay_s_by_strategy", "recall_cost", "bound", "regret")
_COST_COLUMNS = ("dollars", "cached_share", "context_recall")


def rows_to_csv(rows: list[dict]) -> str:
    """Rows as CSV; the per-rule dicts become ``removed_<rule>`` / ``restored_<rule>`` columns, and the
    cost columns ``dollars_<strategy>`` / ``cached_share_<strategy>`` / ``context_recall_<strategy>``."""
    removed = sorted({k for r in rows for k in r.get("removed_by_rule", {})})
    restored = sorted({k for r in rows for k in r.get("restored_by_rule", {})})
    priced = list(dict.fromkeys(k for r in rows for k in r.get("cost", {})))
    plain = [k for k in (rows[0] if rows else {}) if k not in _NESTED]
    header = (plain + [f"removed_{k}" for k in removed] + [f"restored_{k}" for k in restored]
              + [f"{what}_{k}" for k in priced for what in _COST_COLUMNS])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for r in rows:
        cost = r.get("cost", {})
        writer.writerow([("" if r.get(k) is None else r.get(k)) for k in plain]
                        + [r["removed_by_rule"].get(k, 0) for k in removed]
                        + [r["restored_by_rule"].get(k, 0) for k in restored]
                        + [cost.get(k, {}).get(what, "") for k in priced for what in _COST_COLUMNS])
    return out.getvalue()


def load_results(path) -> BenchmarkResults:
    """Read a results JSON file written by ``pruner bench --json``; ``PrunerError`` says what is wrong."""
    data = load_json_file(path, error=PrunerError, expected="expected the JSON results of pruner bench")
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise PrunerError(f"{path}: field 'schema' is not {SCHEMA!r}; expected the JSON results of "
                          "pruner bench")
    for key in ("rows", "summary"):
        if key not in data:
            raise PrunerError(f"{path}: missing field '{key}'; run pruner bench again to regenerate it")
    if not isinstance(data["rows"], list) or not all(isinstance(r, dict) for r in data["rows"]):
        raise PrunerError(f"{path}: field 'rows' must be a list of objects")
    return BenchmarkResults(rows=data["rows"], summary=data["summary"], baselines=data.get("baselines", []),
                            meta=data.get("meta", {}))
