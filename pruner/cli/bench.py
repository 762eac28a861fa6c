"""``pruner bench``: run the benchmark, print one row per configuration and a computed SUMMARY.

Exit status 1 when any configuration loses a tagged fact or is not idempotent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..bench.cost import summary_lines as cost_summary_lines
from ..bench.run import run_benchmark
from ..bench import environment
from ..bench.scaling import REFERENCE_CORPUS, SCALING_SIZES, run_scaling
from ..errors import PrunerError
from ..rules import short_name
from ..engine.prune import PruneConfig
from ..bench.workloads import GENERATOR_VERSION, SIZES, WORKLOADS
from ..bench.regret import BOUND_TURNS, regret_lines
from .types import non_negative_int, positive_int
from .common import refuse_shared_outputs, write_output

NAME = "bench"
#: Where the default run keeps its results: the files the dashboard charts and the README's table renders.
DEFAULT_RESULTS = ("sample_sessions/bench/results.json", "sample_sessions/bench/results.csv")
HELP = "benchmark the pruner on synthetic workloads against no pruning, truncation and the oracle"


def _csv_list(kind, allowed=None):
    def parse(text: str):
        items = [x.strip() for x in text.split(",") if x.strip()]
        if kind is int:
            try:
                return [int(x.replace("_", "")) for x in items]
            except ValueError:
                raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
        bad = [x for x in items if allowed and x not in allowed]
        if bad:
            raise argparse.ArgumentTypeError(f"unknown {', '.join(bad)}; choose from {', '.join(allowed)}")
        return items
    return parse


def add_arguments(p) -> None:
    p.add_argument("--workloads", type=_csv_list(str, tuple(WORKLOADS)), default=list(WORKLOADS),
                   metavar="A,B", help=f"workloads to run (default: {','.join(WORKLOADS)})")
    p.add_argument("--sizes", type=_csv_list(int), default=list(SIZES), metavar="N,M",
                   help=f"conversation lengths in turns (default: {','.join(map(str, SIZES))})")
    p.add_argument("--seeds", type=positive_int, default=1, metavar="N",
                   help="run seeds 0..N-1 and report mean and spread (default 1)")
    p.add_argument("--timing-runs", type=positive_int, default=20, metavar="N",
                   help="timed prune runs per configuration after a warm-up (default %(default)s)")
    p.add_argument("--bound-turns", type=non_negative_int, default=BOUND_TURNS, metavar="N",
                   help="compute the hindsight bound and every strategy's regret against it on the configurations "
                        "of at most N turns (default %(default)s; 0: none); larger ones are marked not computed, "
                        "since the bound's search takes minutes from 1,000 turns on")
    p.add_argument("--json", metavar="OUT", help="write the full results (rows, baselines, summary) as JSON "
                   f"(the default run writes {DEFAULT_RESULTS[0]})")
    p.add_argument("--csv", metavar="OUT", help=f"write one CSV line per configuration (the default run writes "
                   f"{DEFAULT_RESULTS[1]})")
    p.add_argument("--scaling", action="store_true",
                   help=f"instead: prune time at {', '.join(f'{s:,}' for s in SCALING_SIZES)} turns of "
                        "tool_agent, and the cost of re-pruning after every turn")
    p.add_argument("--scaling-sizes", type=_csv_list(int), default=list(SCALING_SIZES), help=argparse.SUPPRESS)
    p.add_argument("--per-turn-turns", type=positive_int, default=2000, help=argparse.SUPPRESS)
    p.add_argument("--no-reference-corpus", action="store_true", help=argparse.SUPPRESS)
    # Test hooks: break a pass on purpose to prove the benchmark fails when it should.
    p.add_argument("--no-restore", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--no-expire", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--no-dedupe", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--disable-rule", action="append", default=[], help=argparse.SUPPRESS)


def is_default_run(args) -> bool:
    """Every selection at its default: only such a run may replace the committed default results."""
    return (list(args.workloads) == list(WORKLOADS) and list(args.sizes) == list(SIZES) and args.seeds == 1
            and args.timing_runs == 20 and args.bound_turns == BOUND_TURNS
            and not (args.no_restore or args.no_expire or args.no_dedupe or args.disable_rule))


def _progress(i: int, n: int, what: str) -> None:
    print(f"configuration {i} of {n}: {what}", file=sys.stderr, flush=True)


def _fmt_pct(v) -> str:
    return "n/a" if v is None else f"{v:.1f}%"


def _removed(row) -> str:
    parts = [f"{short_name(k)} {v}" for k, v in row["removed_by_rule"].items()]
    return " ".join(parts) or "-"


def _table(headers: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    def line(cells):
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return [line(headers), "  ".join("-" * w for w in widths)] + [line(r) for r in rows]


def report_lines(results) -> list[str]:
    """The printed report: configurations, baselines, spread across seeds, SUMMARY."""
    rows, s = results.rows, results.summary
    counter = results.meta.get("counter", rows[0]["counter"] if rows else "?")
    out = [f"pruner bench: {len(rows)} configuration(s); tokens counted with {counter}; prune time = median "
           f"passes-only time of {results.meta.get('timing_runs')} runs after a warm-up", ""]
    body = []
    for r in rows:
        tf = (f"yes {r['tagged_facts']}/{r['tagged_facts']}" if r["tagged_facts_preserved"]
              else f"NO, {r['tagged_facts_missing']} of {r['tagged_facts']} missing")
        body.append([r["workload"], str(r["turns"]), str(r["seed"]),
                     f"{r['messages_before']:,} -> {r['messages_after']:,}",
                     f"{r['tokens_before']:,} -> {r['tokens_after']:,}", _fmt_pct(r["reduction_pct"]),
                     _removed(r), str(r["restored"]), tf,
                     f"{r['untagged_facts_lost']}/{r['untagged_facts']}", "yes" if r["idempotent"] else "NO",
                     f"{r['prune_ms']:.1f}", _fmt_pct(r["oracle_reduction_pct"]), _fmt_pct(r["pct_of_oracle"])])
    out += _table(["workload", "turns", "seed", "messages", "tokens", "reduction", "removed by rule", "restored",
                   "tagged facts", "untagged lost", "idempotent", "prune ms", "oracle", "% of oracle"],
                  body, right={1, 2, 5, 7, 9, 11, 12, 13})
    out += ["", "BASELINES (same sessions; truncation keeps the system prompt and the last N messages that fit "
                "the pruner's token budget)"]
    body = [[r["workload"], str(r["turns"]), str(r["seed"]), f"{r['tokens_before']:,}",
             f"{r['truncation_last_n']:,}", f"{r['truncation_tokens_after']:,}",
             _fmt_pct(r["truncation_reduction_pct"]), f"{r['truncation_tagged_facts_missing']}/{r['tagged_facts']}",
             f"{r['truncation_untagged_facts_lost']}/{r['untagged_facts']}",
             f"{r['oracle_tokens_after']:,}", _fmt_pct(r["oracle_reduction_pct"])] for r in rows]
    out += _table(["workload", "turns", "seed", "no pruning", "trunc N", "trunc tokens", "trunc reduction",
                   "trunc tagged lost", "trunc untagged lost", "oracle tokens", "oracle reduction"],
                  body, right=set(range(1, 11)))
    if any(len(g["seeds"]) > 1 for g in s["per_size"]):
        out += ["", "ACROSS SEEDS (mean ± sd, min-max)"]
        def ms(st, unit="%"):
            if st["mean"] is None:
                return "n/a"
            return f"{st['mean']:.1f}{unit} ± {st['sd']:.1f} ({st['min']:.1f}-{st['max']:.1f})"
        body = [[g["workload"], str(g["turns"]), str(len(g["seeds"])), ms(g["reduction_pct"]),
                 ms(g["pct_of_oracle"]), ms(g["prune_ms"], " ms"),
                 f"{g['tagged_facts_preserved']}/{len(g['seeds'])}", f"{g['idempotent']}/{len(g['seeds'])}"]
                for g in s["per_size"]]
        out += _table(["workload", "turns", "seeds", "reduction", "% of oracle", "prune time", "facts kept",
                       "idempotent"], body, right={1, 2})
    if rows and rows[0].get("cost"):
        out += ["", *cost_lines(results)]
    if any(r.get("bound") for r in rows):
        out += ["", *regret_lines(rows)]
    out += ["", *summary_lines(s)]
    return out


def cost_lines(results) -> list[str]:
    """Dollars and cached share per strategy for every configuration (the replay of the same session)."""
    m = results.meta.get("cost", {})
    out = [f"COST (replay of the same sessions, {m.get('provider')} prompt cache, {m.get('model')} list prices, "
           f"{m.get('prices')}; dollars / cached share / requests over the window)"]
    names = list(results.rows[0]["cost"])
    body = [[r["workload"], str(r["turns"]), str(r["seed"])]
            + [f"${c['dollars']:,.2f} {100 * c['cached_share']:.0f}%" + (f" {c['rejected']}!" if c["rejected"] else "")
               for c in (r["cost"][n] for n in names)]
            + [f"{r['replay_s']:.1f}"] for r in results.rows]
    out += _table(["workload", "turns", "seed", *names, "replay s"], body, right=set(range(1, len(names) + 4)))
    if all("context_recall" in c for r in results.rows for c in r["cost"].values()):
        out += ["", "CONTEXT RECALL (share of the terms each recorded reply used that the strategy's context held; "
                "docs/context-recall.md)"]
        body = [[r["workload"], str(r["turns"]), str(r["seed"])]
                + [f"{100 * r['cost'][n]['context_recall']:.1f}%" for n in names] for r in results.rows]
        out += _table(["workload", "turns", "seed", *names], body, right=set(range(1, len(names) + 3)))
    return out


def summary_lines(s) -> list[str]:
    n = s["configurations"]
    def rng(st):
        return "n/a" if st["min"] is None else f"{st['min']:.1f}-{st['max']:.1f}%"
    out = ["SUMMARY (computed from the rows above)",
           f"configurations run:       {n}",
           f"tagged facts preserved:   {s['tagged_facts_preserved']['count']}/{n}",
           f"idempotent:               {s['idempotent']['count']}/{n}",
           f"untagged references lost: {s['untagged_facts_lost']} of {s['untagged_facts']} facts referred to "
           "only in paraphrase (no deterministic pass can see these)"]
    for label, key in (("reduction range", "reduction_pct"), ("oracle reduction", "oracle_reduction_pct"),
                       ("% of oracle", "pct_of_oracle")):
        out.append(f"{label + ':':<26}" + "; ".join(f"{w} {rng(d[key])}" for w, d in s["per_workload"].items()))
    out.append("prune ms per 1k messages: " + "; ".join(
        f"{w} {d['ms_per_1000_messages']['min']:.1f}-{d['ms_per_1000_messages']['max']:.1f}"
        for w, d in s["per_workload"].items()))
    t = s["truncation"]
    out.append(f"truncation, same budget:  lost tagged facts in {t['configurations_losing_facts']}/{n} "
               f"configurations ({t['tagged_facts_missing']} facts)")
    out += cost_summary_lines(s.get("cost", {}))
    out += [f"FAILED: {f}" for f in s["failures"]]
    out.append("result: " + ("PASS" if s["passed"] else "FAIL"))
    return out


def _per_turn_lines(pt: dict, what: str) -> list[str]:
    inc, fr = pt["incremental"], pt["full_reprune"]
    how = (f"estimated from {fr['sampled_turns']} sampled turns by the trapezoid rule" if fr["estimated"]
           else "every turn timed")
    return [f"EVERY TURN, AS AN AGENT LOOP RUNS IT ({what}: {pt['turns']:,} turns, {pt['messages']:,} messages)",
            f"IncrementalPruner, append() + context() after every turn: {inc['total_s']:.2f} s total "
            f"({inc['cpu_s']:.2f} s CPU), {inc['ms_per_turn']:.2f} ms per turn; full recomputes: "
            f"{inc['full_recomputes']}; context equals prune()'s at the sampled turns: "
            f"{'yes' if inc['context_equals_full_prune'] else 'NO'}; decisions equal prune()'s at the end: "
            f"{'yes' if inc['equals_full_prune'] else 'NO'}",
            f"a full prune() of the conversation so far (a new session) after every turn: {fr['total_s']:.1f} s "
            f"({fr['cpu_s']:.1f} s CPU; {how}); {pt.get('speedup_vs_full', 'n/a')}x the incremental time"]


def scaling_lines(rep) -> list[str]:
    out = [f"SCALING ({rep['workload']}; prune time = the passes (stats.elapsed_ms): median after a warm-up, or the "
           "first run when the session outgrows the caches)"]
    body = [[f"{r['turns']:,}", f"{r['messages']:,}", f"{r['tokens']:,}", f"{r['prune_ms']:,.1f}",
             f"{r.get('prune_cpu_ms', float('nan')):,.1f}", f"{r['ms_per_1000_messages']:.2f}", str(r["runs"]),
             "warm" if r.get("warm", True) else "first run", f"{r['first_prune_s']:.1f}"] for r in rep["sizes"]]
    out += _table(["turns", "messages", "tokens", "prune ms", "CPU ms", "ms per 1,000 messages", "runs", "caches",
                   "first prune() s"], body, right=set(range(7)) | {8})
    if rep["ms_per_1000_messages_spread"] is not None:
        out.append(f"time per 1,000 messages, largest / smallest: {rep['ms_per_1000_messages_spread']}x "
                   "(1x = perfectly linear)")
    out += [""] + _per_turn_lines(rep["per_turn"], "the tool_agent workload")
    on_corpus = rep.get("per_turn_reference_corpus")
    if on_corpus:
        out += [""] + _per_turn_lines(on_corpus, "the reference design's tool-agent corpus")
        out.append(f"the reference's full re-prune after every turn of that corpus: about "
                   f"{rep['reference_per_turn_s']:.0f} s ({rep.get('reference_per_turn_source', 'measured once')}); "
                   f"IncrementalPruner is {on_corpus['speedup_vs_reference']}x faster (target: 10x)")
    return out


def run(args) -> int:
    if args.scaling:
        env = environment.start(getattr(args, "command_line", "pruner bench --scaling"))
        if any(n < 1 for n in args.scaling_sizes) or args.per_turn_turns < 1:
            raise PrunerError("scaling sizes must be positive numbers of turns")
        def show(row):
            print(f"  {row['turns']:,} turns: {row['messages']:,} messages, prune {row['prune_ms']:,.1f} ms, "
                  f"{row['ms_per_1000_messages']:.2f} ms per 1,000 messages", file=sys.stderr, flush=True)
        rep = run_scaling(sizes=tuple(args.scaling_sizes), per_turn_turns=args.per_turn_turns,
                          progress=_progress, on_row=show,
                          corpus=None if args.no_reference_corpus else REFERENCE_CORPUS)
        rep["meta"] = {"environment": environment.finish(env), "generator": GENERATOR_VERSION}
        print("\n".join(scaling_lines(rep)))
        if args.json:
            write_output(args.json, json.dumps(rep, indent=1) + "\n")
        return 0
    refuse_shared_outputs(("--json", args.json), ("--csv", args.csv))
    if args.timing_runs < 1:
        raise PrunerError(f"--timing-runs must be at least 1, got {args.timing_runs}")
    config = PruneConfig(expire=not args.no_expire, deduplicate=not args.no_dedupe, restore=not args.no_restore,
                         disabled_rules=frozenset(args.disable_rule))
    results = run_benchmark(workloads=args.workloads, sizes=args.sizes, seeds=args.seeds, config=config,
                            timing_runs=args.timing_runs, progress=_progress,
                            command=getattr(args, "command_line", "pruner bench"), bound_turns=args.bound_turns)
    print("\n".join(report_lines(results)))
    json_out, csv_out = args.json, args.csv
    if is_default_run(args) and not (json_out or csv_out):
        json_out, csv_out = DEFAULT_RESULTS
        try:
            os.makedirs(os.path.dirname(json_out), exist_ok=True)
        except OSError as exc:
            raise PrunerError(f"{os.path.dirname(json_out)}: cannot create it ({exc.strerror})") from None
    if json_out:
        write_output(json_out, results.to_json())
    if csv_out:
        write_output(csv_out, results.to_csv())
    written = [p for p in (json_out, csv_out) if p and p != "-"]
    if written:
        print(f"results written to {' and '.join(written)}")
    return 0 if results.passed else 1
