"""``pruner replay FILE``: what the model receives at every request, and what it costs with caching."""

from __future__ import annotations

import argparse
import sys

from ..errors import ConfigurationError
from ..jsonio import dumps_json
from ..replay import ReplaySettings, default_prices, load_prices, replay
from ..replay.answer import answer
from ..replay.calibration import from_replay
from ..replay.hindsight import DEFAULT_BOUND_MAX_REQUESTS, computes_at_once, not_computed
from ..replay.ledger_report import lines as ledger_lines
from ..replay.report import chain_lines, escape, events_text, show_context, table, to_csv, to_json
from ..replay.verdict import DEFAULT_MIN_RECALL, Bound, recall_share, verdict
from ..replay.settings import DEFAULT_MODELS
from . import replay_lost
from .common import (add_input_arguments, add_setting_arguments, load_from_args, refuse_shared_outputs, setting_values,
                     write_output)
from .ticker import Ticker
from .types import non_negative_int, strategy_list

NAME = "replay"
HELP = "replay a session request by request under each strategy and price it with prompt caching"
#: The replay settings the command takes (provider and model are its own: their default is the session's).
REPLAY_SETTINGS = ("context_window", "ttl", "reserve_tokens", "keep_recent_tokens", "clear_trigger", "clear_keep",
                   "clear_at_least", "clear_exclude_tools", "clear_trigger_type", "clear_tool_inputs", "inherit_cold")


def add_arguments(p) -> None:
    add_input_arguments(p)
    p.add_argument("--strategies", type=strategy_list, default=None, metavar="A,B",
                   help="strategies to replay (default: all)")
    p.add_argument("--provider", choices=sorted(DEFAULT_MODELS), default=None,
                   help="whose prompt cache and prices (default: the session's, else anthropic)")
    p.add_argument("--model", metavar="NAME", default=None,
                   help="model whose prices apply to requests that record none (a request that records its "
                   "model is priced at it, or reported unpriced; default: the session's, else " + ", ".join(
                       f"{k} {v}" for k, v in sorted(DEFAULT_MODELS.items())) + ")")
    p.add_argument("--prices", metavar="FILE", default=None,
                   help="a prices JSON file in the shape of pruner/replay/prices.json (default: the shipped one)")
    add_setting_arguments(p, ReplaySettings, REPLAY_SETTINGS)
    p.add_argument("--show", type=non_negative_int, default=None, metavar="K",
                   help="print the exact messages sent at request K (from 0) under each strategy")
    p.add_argument("--misses", action="store_true",
                   help="print the cache ledger: every recorded cache miss with its cause, and dollars by cause")
    p.add_argument("--min-recall", type=recall_share, default=DEFAULT_MIN_RECALL, metavar="R",
                   help="the verdict's bar: the share of the terms the replies used that a strategy's context "
                   f"must keep (default {DEFAULT_MIN_RECALL}: see docs/context-recall.md)")
    p.add_argument("--explain", action="store_true",
                   help="print how the verdict is reached: the calibration against the bill, the method, the "
                   "strategies that could not run and why, caveats, and where each is documented")
    replay_lost.add_arguments(p)
    p.add_argument("--json", metavar="OUT", nargs="?", const="-", default=None,
                   help="write every request of every strategy as JSON to OUT (no OUT, or -: to stdout, and the "
                   "report to stderr)")
    p.add_argument("--csv", metavar="OUT", nargs="?", const="-", default=None,
                   help="write one CSV line per request per strategy to OUT (no OUT, or -: to stdout, and the "
                   "report to stderr)")
    p.add_argument("--limit", action=argparse.BooleanOptionalAction, default=None,
                   help="compute the hindsight bound (the cheapest schedule of each family, knowing the whole "
                   "session: see docs/explanation/hindsight-bound.md). Default: on sessions of at most "
                   f"{DEFAULT_BOUND_MAX_REQUESTS} requests (seconds); --limit on any (minutes on long ones), "
                   "--no-limit on none")


def run(args) -> int:
    refuse_shared_outputs(("--json", args.json), ("--csv", args.csv))  # before the replay: nothing written
    with Ticker() as ticker:  # a line on stderr (a terminal only) once the run passes 2 s
        ticker.stage(f"reading {args.file}")
        session = load_from_args(args)
        prices = load_prices(args.prices) if args.prices else default_prices()
        from ..formats.copilot_cli import lump_usage

        lump = lump_usage(session)
        if lump is not None:  # a counterfactual priced from the transcript alone would read as a bill
            from ..money import money
            from ..replay import bill

            raise ConfigurationError(f"{args.file}: {lump} (billed {money(bill(session, prices).dollars)}; "
                                     "pruner logs --bill-only lists it with the others)")
        # Provider and model left None are the session's: the library's replay detects them (one path for all).
        settings = ReplaySettings(provider=args.provider, model=args.model,
                                  **setting_values(ReplaySettings, args, REPLAY_SETTINGS))
        ticker.stage("replaying every strategy request by request")
        result = replay(session, replay_lost.strategies(args), settings=settings, prices=prices, snapshots=False)
        n = len(result.requests)
        if args.show is not None and not result.requests:
            raise ConfigurationError(f"--show {args.show}: this session has no requests (no assistant message a "
                                     "model produced), so there is no context to show")
        if args.show is not None and args.show >= n:
            raise ConfigurationError(f"--show {args.show}: this session has {n} requests (0 to {n - 1})")
        calibration = from_replay(result)
        figures = answer(result, calibration)
        limits, bound = None, None
        wanted = args.limit if args.limit is not None else computes_at_once(n)
        if result.recall is not None and result.requests and wanted:
            from ..replay.limit import compute_limits

            ticker.stage(f"computing the hindsight bound ({n:,} requests)")
            limits = compute_limits(result, min_recall=args.min_recall)
        elif result.recall is not None and result.requests and args.limit is None:
            # said, not silently left out: the verdict's question is open here
            bound = Bound(False, args.min_recall, note=not_computed(n))
        ticker.stage("writing the answer")
        said = verdict(result, min_recall=args.min_recall, figures=figures, limits=limits, bound=bound)
        report = _report(args, session, result, calibration, said, limits)
        data = None
        if args.json:
            data = replay_lost.add_json(to_json(result, min_recall=args.min_recall, limits=limits, said=said,
                                                bound_note=None if bound is None else bound.note), result, args)
    out = sys.stderr if "-" in (args.json, args.csv) else sys.stdout  # an output on stdout keeps it to itself
    for line in report:
        print(line, file=out)
    # The one writer of every command (atomic; a link followed, the mode kept, a device never
    # replaced) and the one JSON writer (U+2028, C1 controls and the like escaped).
    if data is not None:
        write_output(args.json, dumps_json(data, indent=1) + "\n", source=args.file, option="--json")
    if args.csv:
        write_output(args.csv, to_csv(result), source=args.file, option="--csv")
    return 0


def _report(args, session, result, calibration, said, limits) -> list[str]:
    """What the terminal shows: the session, the table, the events, and last the verdict's three lines
    (``Answer.lines``); the method, the calibration and the caveats only with ``--explain``."""
    n, chains, how = len(result.requests), len(result.chains), result.model_choice
    subagents = f" ({chains - 1} subagent chains included)" if chains > 1 else ""
    out = [f"{args.file}: {len(session.messages):,} messages, {n:,} requests (model calls){subagents} in "
           f"{session.last_turn:,} turns; format {session.source_format}",
           f"prices: {result.money_label}" + (f" ({how})" if how else "")]
    windows = sorted({r.window for r in result.requests if r.window is not None}) or [result.window]
    out.append(f"cache: {result.cache_description}; window {', '.join(f'{w:,}' for w in windows)} tokens")
    visibility = said.figures.visibility
    if args.explain:
        out += [f"note: {note}" for note in result.notes]
        if calibration is not None:
            out += calibration.lines()
    out.append(visibility.sentence() if visibility is not None else
               "Visibility: not measurable (the session records no usage to compare the transcript with).")
    out.append(table(result, said.figures, limits))
    out += chain_lines(result) + events_text(result)
    if args.show is not None:
        for name in result.runs:
            out += show_context(result, name, args.show)
    if args.misses:
        out += [escape(line) for line in ledger_lines(result.ledger)]
    if args.explain:
        out += ["", "How to read it:"] + [f"  {escape(line)}" for line in said.explain()]
    elif said.explain():
        out.append("(method, calibration and caveats: --explain)")
    out += [escape(line) for line in said.lines()]
    out += replay_lost.lines(result, args)
    return out
