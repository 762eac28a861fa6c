"""``pruner replay FILE --lost STRATEGY``: every term the strategy lost over the session, as a table.

Kept apart from ``pruner.cli.replay`` (which prints the replay itself): the option, the strategy it adds
to the replay, and the table (``pruner.replay.lost``). With ``--json OUT`` the file carries the whole
list under ``"lost"``.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..replay.engine import Replay
from ..replay.lost import SORT_KEYS, lost_lines, lost_terms
from .common import terminal_safe


def one_strategy(text: str) -> str:
    """One registered replay strategy name."""
    from ..replay import strategy_names

    name = text.strip()
    if name not in strategy_names():
        raise argparse.ArgumentTypeError(f"unknown strategy {text[:40]!r}; choose from {', '.join(strategy_names())}")
    return name


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lost", type=one_strategy, default=None, metavar="STRATEGY",
                   help="print every term the replies used that STRATEGY's context lacked, over the whole "
                        "session: the request where it started, the message that held it, why it left "
                        "(replayed even when --strategies leaves it out)")
    p.add_argument("--lost-sort", choices=SORT_KEYS, default=SORT_KEYS[0], metavar="KEY",
                   help=f"order of the --lost table: {', '.join(SORT_KEYS)} (default {SORT_KEYS[0]}; requests: "
                        "the terms lacked at the most requests first)")


def strategies(args: argparse.Namespace) -> list[str] | None:
    """The strategies to replay: --strategies, with the --lost one added when it is not among them."""
    names: list[str] | None = args.strategies
    if args.lost is None or names is None or args.lost in names:
        return names
    return [*names, args.lost]


def lines(result: Replay, args: argparse.Namespace) -> list[str]:
    """The --lost table (nothing without --lost)."""
    if args.lost is None:
        return []
    lost = lost_terms(result, args.lost, sort=args.lost_sort)
    return ["", *lost_lines(lost, safe=lambda s: terminal_safe(s, one_line=True))]


def add_json(data: dict[str, Any], result: Replay, args: argparse.Namespace) -> dict[str, Any]:
    """``data`` (the --json document) with the --lost list under "lost"."""
    if args.lost is not None:
        data["lost"] = lost_terms(result, args.lost, sort=args.lost_sort).as_dict()
    return data
