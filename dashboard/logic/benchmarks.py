"""The benchmarks page's data: committed result files, runs made from the page, and the reference's figures.

Every figure the page shows comes from a file a benchmark command wrote
(``pruner bench`` -> ``sample_sessions/bench/results.json``, ``pruner bench
--scaling --json`` -> ``sample_sessions/bench/scaling.json``), from a run made on
the page, or from ``REFERENCE`` below: the reference design's own published
figures and the two measured once here, each with its source. A run made on
the page is drawn over the committed results, never instead of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from pruner import PruneConfig
from pruner.bench import run as bench_run
from pruner.errors import PrunerError
from pruner.jsonio import load_json_file

from .. import tables
from ..loading import SAMPLES_DIR

BENCH_RESULTS = SAMPLES_DIR / "bench" / "results.json"
#: Written by ``pruner bench --scaling --json sample_sessions/bench/scaling.json`` (schema pruner.bench.scaling/1).
SCALING_RESULTS = SAMPLES_DIR / "bench" / "scaling.json"
SCALING_SCHEMA = "pruner.bench.scaling/1"
_RUN = "bench_run"


@dataclass(frozen=True)
class Reference:
    """The reference design's figures, each with where it comes from."""

    source: str
    # workload here -> (its name there, published token reduction range in %)
    reduction: dict[str, tuple[str, float, float]]
    facts_kept: str
    idempotent: str
    prune_time: str
    measured_here_ms: float  # its pruner on its own 10,039-message tool-agent corpus, quiet machine
    measured_here_note: str
    per_turn_s: float  # a full re-prune by it after every turn of 2,000 turns, measured once here
    per_turn_note: str


REFERENCE = Reference(
    source=("Published by the reference design (Emmimal/prompt-pruning-layer @ 70c6d0c, its blog post and "
            "README), as the project recorded them when it set its targets"),
    reduction={"plain_chat": ("plain chat", 1.9, 4.1), "rag_assistant": ("RAG assistant", 27.0, 32.5),
               "tool_agent": ("tool agent", 33.1, 33.7)},
    facts_kept="15/15", idempotent="15/15", prune_time="under 50 ms for 2,000 turns (131k tokens)",
    measured_here_ms=13.0,
    measured_here_note=("its pruner on its own 2,000-turn tool-agent corpus (10,039 messages), median of 20 runs "
                        "on this 2-core machine class when quiet (25 ms busy); measured once, not on every run"),
    per_turn_s=10.0,
    per_turn_note="its full re-prune after every turn of a 2,000-turn conversation, measured once here",
)


@st.cache_data(show_spinner=False)
def _committed(path: str, modified: float):
    return bench_run.load_results(path)


def committed_results():
    """The committed ``pruner bench`` results (re-read when the file changes), or ``None``."""
    if not BENCH_RESULTS.exists():
        return None
    return _committed(str(BENCH_RESULTS), BENCH_RESULTS.stat().st_mtime)


def read_scaling(path: Path) -> dict[str, Any]:
    """A ``pruner bench --scaling`` report; ``PrunerError`` naming the file when it is not one."""
    report = load_json_file(path, error=PrunerError, expected="write it with pruner bench --scaling --json")
    if not isinstance(report, dict) or report.get("schema") != SCALING_SCHEMA:
        raise PrunerError(f"{path.name}: not a {SCALING_SCHEMA} report; write it with "
                          "pruner bench --scaling --json")
    if not isinstance(report.get("sizes"), list) or not isinstance(report.get("per_turn"), dict):
        raise PrunerError(f"{path.name}: missing 'sizes' or 'per_turn'")
    return report


@st.cache_data(show_spinner=False)
def _scaling(path: str, modified: float) -> dict[str, Any]:
    return read_scaling(Path(path))


def committed_scaling() -> dict[str, Any] | None:
    """The committed scaling report, or ``None`` when none is committed yet."""
    if not SCALING_RESULTS.exists():
        return None
    return _scaling(str(SCALING_RESULTS), SCALING_RESULTS.stat().st_mtime)


# ------------------------------------------------------------------ a run from the page

def run(*, workloads: list[str], sizes: list[int], seeds: int, timing_runs: int, config: PruneConfig,
        progress) -> Any:
    """Run the benchmark and keep it for this visitor (the committed file is never touched)."""
    results = bench_run.run_benchmark(workloads=workloads, sizes=sorted(sizes), seeds=seeds, config=config,
                                      timing_runs=timing_runs, progress=progress, command="dashboard run")
    st.session_state[_RUN] = results
    return results


def last_run():
    return st.session_state.get(_RUN)


def forget_run() -> None:
    st.session_state.pop(_RUN, None)


def by_size_of(runs: dict[str, Any]) -> pd.DataFrame:
    """Means per (workload, size) of each run, one frame with a ``run`` column ("committed", "your run")."""
    frames = []
    for name, results in runs.items():
        if results is None:
            continue
        frame = tables.bench_by_size(results.rows)
        if len(frame):
            frames.append(frame.assign(run=name))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


# ------------------------------------------------------------------ beside the reference

def reference_rows(results) -> pd.DataFrame:
    """Our committed figures beside the reference's, one row per claim, every cell saying where it comes from."""
    summary, rows = results.summary, results.rows
    out = []
    per_workload = summary.get("per_workload") or {}
    for workload, (their_name, lo, hi) in REFERENCE.reduction.items():
        ours = (per_workload.get(workload) or {}).get("reduction_pct") or {}
        ours_text = (f"{ours['min']:.1f}–{ours['max']:.1f} %" if ours.get("min") is not None else "not run")
        out.append({"figure": f"token reduction, {workload} ({their_name} there)", "pruner (committed run)":
                    ours_text, "reference (published)": f"{lo:.1f}–{hi:.1f} %"})
    facts, idem = summary.get("tagged_facts_preserved") or {}, summary.get("idempotent") or {}
    out.append({"figure": "required facts kept", "pruner (committed run)":
                f"{facts.get('count', 0)}/{facts.get('of', 0)} (labels from the generator's world model)",
                "reference (published)": f"{REFERENCE.facts_kept} (labels from its own rules)"})
    out.append({"figure": "idempotent", "pruner (committed run)": f"{idem.get('count', 0)}/{idem.get('of', 0)}",
                "reference (published)": REFERENCE.idempotent})
    largest = max((r for r in rows if r["workload"] == "tool_agent"), key=lambda r: r["turns"], default=None)
    if largest is not None:
        out.append({"figure": f"prune time (passes only, token counts cached), tool_agent at "
                              f"{largest['turns']:,} turns",
                    "pruner (committed run)": f"{largest['prune_ms']:,.1f} ms ({largest['messages_before']:,} "
                                              "messages, passes only)",
                    "reference (published)": f"{REFERENCE.prune_time}; {REFERENCE.measured_here_ms:.0f} ms "
                                             "measured once here"})
    return pd.DataFrame(out, columns=["figure", "pruner (committed run)", "reference (published)"])


def scaling_frame(report: dict[str, Any]) -> pd.DataFrame:
    """One row per measured size: messages, prune ms and ms per 1,000 messages."""
    return pd.DataFrame([{"turns": r["turns"], "messages": r["messages"], "prune_ms": r["prune_ms"],
                          "ms_per_1000_messages": r["ms_per_1000_messages"], "warm": r.get("warm", True)}
                         for r in report["sizes"]])


def per_turn_bars(report: dict[str, Any]) -> pd.DataFrame:
    """The per-turn totals to chart: incremental, a full prune every turn, and the reference's."""
    per_turn = report["per_turn"]
    rows = []
    inc = per_turn.get("incremental")
    if inc:
        rows.append({"method": "IncrementalPruner, every turn", "seconds": inc["total_s"], "source": "this run"})
    full = per_turn.get("full_reprune")
    if full:
        estimated = "<br>(estimated from sampled turns)" if full.get("estimated") else ""  # two lines: it fits
        rows.append({"method": f"full prune() every turn{estimated}", "seconds": full["total_s"],
                     "source": "this run"})
    rows.append({"method": "the reference: full re-prune every turn", "seconds":
                 float(report.get("reference_per_turn_s") or REFERENCE.per_turn_s), "source": "measured once here"})
    return pd.DataFrame(rows)


def regret_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per configuration: the hindsight bound and each priced strategy's regret against it, as
    text ("n/a": infeasible; "not computed": above the run's ``bound_turns``; ``pruner.bench.regret``)."""
    from pruner.money import money

    names = list(dict.fromkeys(n for r in rows for n in (r.get("cost") or {})))
    out = []
    for r in rows:
        bound = r.get("bound") or {}
        line: dict[str, Any] = {"workload": r["workload"], "turns": r["turns"], "seed": r["seed"]}
        if not bound.get("computed"):
            line["bound"] = "not computed"
        elif bound.get("dollars") is None:
            line["bound"] = "none feasible"
        else:
            line["bound"] = money(bound["dollars"]) + ("" if bound.get("exact") else " ~")
        for name in names:
            value = (r.get("regret") or {}).get(name)
            line[name] = ("" if not bound.get("computed") or bound.get("dollars") is None else
                          "n/a" if value is None else f"{'+' if value >= 0 else '−'}{money(abs(value))}")
        out.append(line)
    return pd.DataFrame(out, columns=["workload", "turns", "seed", "bound", *names])


def regret_table(frame: pd.DataFrame) -> pd.DataFrame:
    """``regret_frame`` turned for a 1366-pixel screen: one column per configuration whose bound was computed
    (``"tool_agent 50 turns"``, the seed added when there are several), one row for the bound and one per
    strategy; the configurations not computed are left to the caption (``not_computed``).

    >>> f = pd.DataFrame({"workload": ["w", "w"], "turns": [50, 200], "seed": [0, 0],
    ...                   "bound": ["$1.00", "not computed"], "full": ["+$0.50", ""]})
    >>> regret_table(f).to_dict()
    {'w 50 turns': {'bound': '$1.00', 'full': '+$0.50'}}
    """
    done = frame[frame["bound"] != "not computed"]
    seeds = done["seed"].nunique() > 1
    names = [c for c in frame.columns if c not in ("workload", "turns", "seed")]
    columns = {f"{row['workload']} {row['turns']:,} turns" + (f" seed {row['seed']}" if seeds else ""):
               [row[n] for n in names] for _, row in done.iterrows()}
    return pd.DataFrame(columns, index=names)


def not_computed(frame: pd.DataFrame) -> list[str]:
    """The configurations whose bound was not computed, as ``"tool_agent 200 turns"``."""
    return [f"{r.workload} {r.turns:,} turns" for r in frame[frame["bound"] == "not computed"].itertuples()]
