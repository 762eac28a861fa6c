"""``pruner batch INPUT... --out DIR``: prune many transcripts on Dask into Parquet tables."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from ..formats import DEFAULT_MAX_BYTES, FORMATS
from ..replay import DEFAULT_MODELS, ReplaySettings, strategy_names
from .common import add_prune_arguments, prune_config
from .types import byte_count, dask_address, positive_int, strategy_list

if TYPE_CHECKING:  # pragma: no cover - the batch extra (Dask) is imported only when the command runs
    from ..batch.run import BatchSummary

NAME = "batch"
HELP = "prune many transcripts on Dask (this machine or a cluster) and write Parquet tables"
#: Dask and pyarrow: imported by run(), after pruner.cli checks they are installed.
EXTRA = "batch"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="transcript files, folders (read recursively: *.json, *.jsonl, *.ndjson, *.traj) "
                        "or glob patterns")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="batch folder for the Parquet tables; a rerun into it skips files already done")
    p.add_argument("--format", metavar="NAME", default=None,
                   help=f"read every file as this format instead of detecting it ({', '.join(FORMATS)})")
    p.add_argument("--skip-bad-lines", action="store_true",
                   help="in JSONL files, skip lines that cannot be read (counted in skipped_lines)")
    p.add_argument("--max-bytes", type=byte_count, default=DEFAULT_MAX_BYTES, metavar="N",
                   help="a larger file becomes an error row (default %(default)s)")
    p.add_argument("--retrieval-tool", action="append", default=[], metavar="NAME",
                   help="treat results of this tool as retrieved documents (repeatable)")
    add_prune_arguments(p, orphan_help="how a kept call whose result was pruned is counted: a placeholder, or dropped")
    p.add_argument("--replay", type=strategy_list, nargs="?", const=strategy_names(), default=None,
                   metavar="A,B", help="also replay every session request by request under these strategies (default: "
                                       "all) and bill it; writes the replay table (see pruner replay)")
    p.add_argument("--provider", choices=sorted(DEFAULT_MODELS), default=None,
                   help="with --replay: whose cache rules and prices bill the requests (default: each "
                        "session's, else anthropic, as in pruner replay)")
    p.add_argument("--model", default=None, metavar="MODEL",
                   help="with --replay: the model whose prices and window apply (default: the provider's in "
                        "pruner replay)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=positive_int, metavar="N", default=None,
                       help="worker processes of the local Dask cluster (default: one per CPU core)")
    where.add_argument("--scheduler", type=dask_address, metavar="ADDRESS", default=None,
                       help="use an existing Dask cluster, e.g. tcp://10.0.0.5:8786; its workers must "
                            "read the inputs and write to --out at the same paths")
    p.add_argument("--limit", type=positive_int, metavar="N", default=None,
                   help="take only the first N input files (in path order)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")


def printable(text: str) -> str:
    """Untrusted text (paths, error messages) with control characters escaped for the terminal."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def summary_lines(s: BatchSummary) -> list[str]:
    rate = s.sessions / s.compute_s if s.compute_s else 0.0
    lines = [
        f"inputs:   {s.inputs:,} files: {s.files:,} processed now, {s.skipped:,} skipped (already in the folder "
        "with the same content)" + (f", {s.replaced:,} changed since (old rows replaced)" if s.replaced else ""),
        f"sessions: {s.processed:,} processed, {s.failed:,} failed (error rows)",
    ]
    if s.passed_over or s.not_taken:
        lines.append(f"not read: {s.passed_over:,} files in the folders not named like transcripts (or hidden, "
                     "or pipes / devices)"
                     + (f"; {s.not_taken:,} files beyond --limit" if s.not_taken else ""))
    if s.tokens_before:
        lines.append(f"tokens:   {s.tokens_before:,} -> {s.tokens_after:,} ({100 * s.reduction:.1f}% fewer; "
                     f"{', '.join(s.counters)})")
        lines.append("rules:    " + (", ".join(f"{k} {v:,}" for k, v in s.by_rule.items()) or "none"))
    if s.partitions:
        lines.append(f"cluster:  {printable(s.cluster)}, {s.workers} worker(s), {s.partitions} partitions; "
                     f"{s.elapsed_s:.1f} s in all, {s.compute_s:.1f} s of tasks ({rate:,.1f} sessions/s)")
    else:
        lines.append(f"time:     {s.elapsed_s:.1f} s (nothing to process, no cluster started)")
    lines.append(f"output:   {printable(s.out)}/sessions and /decisions (Parquet; e.g. "
                 f"pandas.read_parquet('{printable(s.out)}/sessions'))")
    if s.replay:
        full = s.replay.get("full")
        parts, not_run = [], []
        for name, t in s.replay.items():
            saved, infeasible = "", t.get("infeasible", 0)
            # An infeasible strategy's dollars stop at its first request over the window: never compared.
            if full and full["dollars"] and name != "full" and not infeasible and not full.get("infeasible", 0):
                change = 1 - t["dollars"] / full["dollars"]
                saved = f", {100 * abs(change):.1f}% {'less' if change >= 0 else 'more'} than full"
            if infeasible:
                not_run.append(f"{name} on {infeasible:,}")
            money = f"(${t['dollars']:,.2f})" if infeasible else f"${t['dollars']:,.2f}"
            parts.append(f"{name} {money} ({t['input_tokens']:,} input tokens{saved})")
        lines.append("replay:   " + "; ".join(parts))
        if not_run:
            lines.append(f"          could not have run (a request over the window, or not applicable): "
                         f"{', '.join(not_run)} session(s); in brackets, their dollars stop there and are "
                         "not compared (the replay table's feasible / infeasible_reason columns)")
        lines.append(f"prices:   {printable(s.prices)}")
        if s.replay_failed:
            lines.append(f"          {s.replay_failed:,} session(s) pruned but not replayed (the replay_error column)")
    if s.took_over:
        lines.append(f"lock:     took over the folder from {printable(s.took_over)}; its unfinished files "
                     "were removed")
    for source, error in s.errors:
        lines.append(f"failed:   {printable(error if error.startswith(source) else f'{source}: {error}')}")
    if s.failed > len(s.errors):
        lines.append(f"          ... and {s.failed - len(s.errors):,} more (the error column of the sessions table)")
    for failure in s.partition_failures:
        lines.append(f"NOT WRITTEN: {printable(failure)} (rerun to retry these files)")
    return lines


def run(args: argparse.Namespace) -> int:
    from ..batch import BatchSettings, run_batch
    from ..batch.progress import TerminalProgress

    config = prune_config(args)
    replay_settings = ReplaySettings(provider=args.provider, model=args.model, prune=config) if args.replay else None
    settings = BatchSettings(config=config, format=args.format, skip_bad_lines=args.skip_bad_lines,
                             retrieval_tools=tuple(args.retrieval_tool), max_bytes=args.max_bytes,
                             replay=tuple(args.replay or ()), replay_settings=replay_settings)
    bar = TerminalProgress(sys.stderr)

    def on_cluster(cluster: str, link: str | None, workers: int) -> None:
        print(f"dask: {printable(cluster)} with {workers} worker(s)"
              + (f"; dashboard at {printable(link)}" if link else ""), file=sys.stderr)

    try:
        summary = run_batch(args.inputs, args.out, settings, workers=args.workers, scheduler=args.scheduler,
                            limit=args.limit, progress=bar, on_cluster=on_cluster)
    finally:
        bar.close()
    if args.json:
        print(json.dumps(summary.as_dict(), ensure_ascii=True, indent=2))
    else:
        print("\n".join(summary_lines(summary)))
    return 1 if summary.partition_failures else 0
