"""Replay: what the model receives at every request under each strategy, and what it costs.

An agent calls the model once per step, and every call resends the context as
it stands at that step; providers bill most of it at a prompt-cache discount,
and anything that changes the prefix throws the discount away for everything
after it. ``replay`` walks a session request by request under each registered
strategy (``full``, ``as_recorded``, ``truncate``, ``prune_every_request``,
``cache_aware_prune``, ``compact``, ``prune_then_compact``, ``clear_tool_uses``)
and bills every request under Anthropic's or OpenAI's cache rules, with prices
from a dated data file. On a session that records usage, ``calibrate`` compares
the replay with what was really billed.

>>> from pruner.bench.workloads import generate
>>> r = replay(generate("tool_agent", turns=30, seed=0), ["full", "cache_aware_prune"])
>>> sorted(r.runs), r.runs["full"].rows[0].request
(['cache_aware_prune', 'full'], 0)
"""

from .bill import Bill, BilledRequest, bill
from .cache import CACHE_MODELS, AnthropicCache, CacheModel, CacheUsage, OpenAICache
from .calibration import Calibration, calibrate
from .engine import Replay, replay
from .ledger import CAUSES, LedgerEntry, ledger, ledger_of
from .ledger_report import ledger_summary
from .rows import RequestRow, StrategyRun
from .scale import TokenScale
from .recall import RecallReport, context_recall
from .verdict import Answer, verdict
from .prices import ModelPrice, PriceTable, default_prices, load_prices
from .requests import Request, find_requests
from .settings import DEFAULT_MODELS, ReplaySettings
from .strategy import STRATEGIES, Event, ExtraCall, Step, Strategy, register_strategy, strategy_names

__all__ = [
    "Answer", "AnthropicCache", "Bill", "BilledRequest", "CACHE_MODELS", "CAUSES", "CacheModel", "CacheUsage",
    "Calibration", "DEFAULT_MODELS", "Event", "ExtraCall", "LedgerEntry", "ModelPrice", "OpenAICache",
    "PriceTable", "RecallReport", "Replay", "ReplaySettings", "Request", "RequestRow", "STRATEGIES",
    "Step", "Strategy", "StrategyRun", "TokenScale", "bill", "calibrate", "context_recall",
    "default_prices", "find_requests", "ledger", "ledger_of", "ledger_summary", "load_prices",
    "register_strategy", "replay", "strategy_names", "verdict"
]
