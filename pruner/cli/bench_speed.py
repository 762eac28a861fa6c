"""``pruner bench-speed``: warm prune at ~10,000 messages and 10x/50x that, cold prune in a fresh
process, and the reference design's corpora (see ``pruner.bench.speed``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..bench import environment
from ..bench.near_search import measure_misses
from ..bench.workloads import GENERATOR_VERSION
from ..bench.speed import (COLD_TURNS, REFERENCE_SOURCE, measure_cold, measure_reference, measure_warm,
                           reference_corpora, session_of_size, warm_dict)
from .common import write_output
from .types import positive_int

NAME = "bench-speed"
HELP = "time prune() warm at ~10,000 messages and 10x and 50x that, cold, and on the reference's corpora"

SCHEMA = "pruner.bench.speed/1"
#: The targets of issue 13, printed beside the figures.
TARGETS = {"prune_decisions_ms": 20.0, "passes_ms": 10.0, "flatness": 1.3, "cold_ms": 300.0,
           "tool_agent-2000.jsonl": 6.0, "rag_assistant-2000.jsonl": 4.5}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base", type=positive_int, default=10_000, metavar="N",
                   help="base size in messages (default %(default)s)")
    p.add_argument("--factors", default="1,10,50", metavar="A,B",
                   help="sizes as multiples of the base (default %(default)s)")
    p.add_argument("--runs", type=positive_int, default=20, metavar="N",
                   help="timed runs at the base size, after a warm-up (default %(default)s; "
                        "larger sizes use fewer, at least 3)")
    p.add_argument("--cold-runs", type=int, default=5, metavar="N",
                   help=f"fresh processes that each prune the {COLD_TURNS:,}-turn session once "
                        "(default %(default)s; 0 skips)")
    p.add_argument("--near-seeds", type=int, default=10, metavar="N",
                   help="seeds of templated sessions on which the near-duplicate search is checked against exact "
                        "containment (default %(default)s; 0 skips)")
    p.add_argument("--no-reference-corpora", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--json", metavar="OUT", help="write every figure, with the machine and its load, as JSON")


def _t(t: dict[str, Any]) -> str:
    return f"{t['wall_ms']:,.1f} ms ({t['cpu_ms']:,.1f} ms CPU)"


def _met(value: float, target: float | None) -> str:
    if target is None:
        return "no target"
    return f"target <= {target:g}: {'met' if value <= target else 'MISSED'}"


def report_lines(rep: dict[str, Any]) -> list[str]:
    out = ["WARM PRUNE (tool_agent; same Session object after a warm-up: per-text features, token counts "
           "and its index cached; median of runs)",
           f"{'messages':>9} {'runs':>4} {'prune() call':>26} {'prune() + every decision':>26} "
           f"{'passes ms':>10} {'us/msg':>7} {'exact-only ms':>13} {'new Session object':>26}"]
    rows = rep["warm"]
    for r in rows:
        out.append(f"{r['messages']:>9,} {r['prune']['runs']:>4} {_t(r['prune']):>26} "
                   f"{_t(r['prune_decisions']):>26} {r['passes_ms']:>10.1f} {r['us_per_message']:>7.2f} "
                   f"{r['exact_only_ms']:>13.1f} {_t(r['new_session']):>26}")
    base = rows[0]
    with_decisions = base["prune_decisions"]["wall_ms"]
    out.append(f"at {base['messages']:,} messages: prune() with every decision {with_decisions:.1f} "
               f"ms ({_met(with_decisions, TARGETS['prune_decisions_ms'])}); passes "
               f"{base['passes_ms']:.1f} ms ({_met(base['passes_ms'], TARGETS['passes_ms'])}); near-duplicate "
               f"search is {100 * (1 - base['exact_only_ms'] / base['passes_ms']):.0f}% of the passes"
               if base["passes_ms"] else "")
    base_cpu = base["prune"]["cpu_ms"] / base["messages"]
    for r in rows[1:]:
        ratio = r["us_per_message"] / base["us_per_message"] if base["us_per_message"] else float("inf")
        cpu_ratio = r["prune"]["cpu_ms"] / r["messages"] / base_cpu if base_cpu else float("inf")
        factor = r["messages"] // base["messages"]
        out.append(f"{factor}x the messages: {ratio:.2f}x the passes' time per message"
                   + (f" ({_met(ratio, TARGETS['flatness'])})" if factor == 50 else "")
                   + f"; CPU time of the prune() call per message: {cpu_ratio:.2f}x")
    cold = rep.get("cold")
    if cold:
        out += ["", f"COLD PRUNE ({cold['turns']:,}-turn tool_agent, {cold['messages']:,} messages; a fresh process "
                    f"each, tokenising included; median of {cold['runs']})",
                f"prune(): {cold['wall_ms']:,.1f} ms ({cold['cpu_ms']:,.1f} ms CPU); "
                f"{_met(cold['wall_ms'], TARGETS['cold_ms'])}; loading the vocabulary before it: "
                f"{cold['vocabulary_ms']:,.1f} ms"]
    corpora = rep.get("reference_corpora") or []
    if corpora:
        out += ["", "THE REFERENCE DESIGN'S CORPORA (warm prune(), median of runs; the reference's figures: "
                    f"{REFERENCE_SOURCE})"]
        for c in corpora:
            ref = c["reference"]
            target = TARGETS.get(c["corpus"])
            lo, hi = ref["reduction_pct"]
            out.append(f"{ref['label']} ({c['messages']:,} messages): prune() {_t(c['prune'])}, with every decision "
                       f"{_t(c['prune_decisions'])}; required kept {c['required_kept']}/{c['required']}; reduction "
                       f"{c['reduction_pct']:.1f}% (the reference: {lo}-{hi}%); "
                       f"the reference: {ref['quiet_ms']:g} ms quiet, {ref['busy_ms']:g} ms busy; "
                       f"{_met(c['prune']['wall_ms'], target)}")
    near = rep.get("near_search")
    if near:
        shares = ", ".join(f"{x:.3f}" for x in near["missed_shares"]) or "none"
        out += ["", f"NEAR-DUPLICATE SEARCH against exact containment (templated documents, {near['seeds']} seeds x "
                    f"{'/'.join(str(d) for d in near['documents'])} documents, {near['copies_per_session']} more "
                    f"each, 75% of them near copies; threshold {near['threshold']}; first {near['holders']} holders "
                    "of each 3-gram looked up)",
                f"{near['judged']:,} documents judged, {near['copies']:,} of them copies by exact containment: "
                f"{near['missed']} missed ({near['missed_above_0.9']} above 0.9 containment; their containment: "
                f"{shares}); {near['wrong_original']} pointed at a later original than the earliest"]
    return out


def run(args: argparse.Namespace) -> int:
    factors = [int(x) for x in args.factors.split(",") if x.strip()]
    env = environment.start(getattr(args, "command_line", "pruner bench-speed"))
    rows = []
    for i, factor in enumerate(factors, start=1):
        n = args.base * factor
        print(f"[{i}/{len(factors)}] warm prune at {n:,} messages ...", file=sys.stderr, flush=True)
        runs = args.runs if factor == 1 else max(3, args.runs // factor)
        rows.append(warm_dict(measure_warm(session_of_size(n), runs=runs)))
    rep = {"schema": SCHEMA, "workload": "tool_agent", "warm": rows, "targets": TARGETS}
    if args.cold_runs > 0:
        print(f"cold prune in {args.cold_runs} fresh processes ...", file=sys.stderr, flush=True)
        rep["cold"] = measure_cold(runs=args.cold_runs)
    corpora = []
    for path in [] if args.no_reference_corpora else reference_corpora():
        print(f"reference corpus {path.name} ...", file=sys.stderr, flush=True)
        corpora.append(measure_reference(path, runs=args.runs))
    rep["reference_corpora"] = corpora
    if args.near_seeds > 0:
        print(f"near-duplicate search on templated sessions ({args.near_seeds} seeds) ...", file=sys.stderr,
              flush=True)
        rep["near_search"] = measure_misses(seeds=range(args.near_seeds))
    rep["meta"] = {"environment": environment.finish(env), "cpus": os.cpu_count(), "generator": GENERATOR_VERSION}
    print("\n".join(line for line in report_lines(rep) if line is not None))
    if args.json:
        write_output(args.json, json.dumps(rep, indent=1) + "\n")
    return 0
