"""Which provider and model a session was recorded with, so its dollars use the right prices.

The importers keep the model where a transcript names it (Pi: each assistant
message's ``provider`` and ``model``; Anthropic and OpenAI request files: the
request's ``model``). The most frequent one among the requests that recorded
usage wins (every chain counted); a recorded name matches a price row by id,
alias or dated id (``PriceTable.find``: ``gpt-4o-2024-08-06`` is priced as
``gpt-4o``, and a name the table does not hold matches nothing). Without
a recorded model the format decides the provider (Codex and the OpenAI formats
are OpenAI's, Claude Code and the Anthropic format Anthropic's).

``resolve_settings`` is the one place a replay's provider and model are chosen: the
library's ``replay`` calls it, so the CLI, the dashboard, ``pruner logs`` and a Python
caller get the same bill for the same file. A provider or model the settings name wins.

>>> from pruner import load_session
>>> detect(load_session("sample_sessions/openai_chat.json"), default_prices())[:2]
('openai', 'gpt-4o')
>>> s, how = resolve_settings(load_session("sample_sessions/codex_rollout.jsonl"), ReplaySettings(), default_prices())
>>> s.provider, s.model, how
('openai', 'gpt-5-codex', "the session records model 'gpt-5-codex'")
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any, Mapping

from ..model import Session
from .cache import CACHE_MODELS
from .prices import PROVIDERS, PriceTable, default_prices
from .requests import recorded_usage
from .settings import DEFAULT_MODELS, DEFAULT_PROVIDER, ReplaySettings

_FORMAT_PROVIDER = {"codex": "openai", "openai_chat": "openai", "openai_responses": "openai",
                    "claude_code": "anthropic", "anthropic": "anthropic"}

__all__ = ["default_prices", "detect", "match_model", "resolve_settings"]


def match_model(name: str, prices: PriceTable, provider: str | None = None) -> str | None:
    """The price row a recorded model name stands for (``PriceTable.find``: its id, an alias or
    its dated id), or None: a name the table does not hold is never matched to another model's row
    (``gpt-5.3-codex`` is not ``gpt-5``)."""
    row = prices.find(name, provider)
    return row.model if row is not None else None


def _recorded_models(session: Session) -> Counter[tuple[str | None, Any]]:
    found: Counter[tuple[str | None, Any]] = Counter()
    for _, chain in session.chains:
        for m in chain.messages:
            if m.role != "assistant" or not isinstance(m.metadata, Mapping) or m.metadata.get("synthetic"):
                continue
            source: Any = m.metadata.get("source")
            source = source if isinstance(source, Mapping) else {}
            model = m.metadata.get("model") or source.get("model")
            provider = m.metadata.get("provider") or source.get("provider")
            usage = recorded_usage(m)
            if isinstance(model, str) and model and not (usage is not None and usage.aborted):
                found[(provider, model)] += 1
    source = session.metadata.get("source") if isinstance(session.metadata, Mapping) else None
    if not found and isinstance(source, Mapping) and isinstance(source.get("model"), str):
        found[(None, source["model"])] += 1
    return found


def detect(session: Session, prices: PriceTable) -> tuple[str, str, str]:
    """``(provider, model, how)``: ``how`` says where they came from, for the output's notes."""
    recorded = _recorded_models(session).most_common()
    for (provider, name), _ in recorded:
        model = match_model(name, prices, provider if provider in PROVIDERS else None)
        if model is not None and prices.get(model).provider in CACHE_MODELS:  # a provider the replay can bill
            row = prices.get(model)
            return row.provider, row.model, f"the session records model {name!r}"
    provider = _FORMAT_PROVIDER.get(session.source_format, DEFAULT_PROVIDER)
    # Recorded models the table does not hold (they stay unpriced): say so, not "no model is recorded".
    own = next((p for (p, _), _ in recorded if p in PROVIDERS and p in CACHE_MODELS), None)
    if recorded:
        names = ", ".join(repr(name) for (_, name), _ in recorded[:3]) + (", ..." if len(recorded) > 3 else "")
        provider = own or provider
        why = f"the session records {names}, not in the price table"
    else:
        why = (f"the {session.source_format} format is {provider}'s" if session.source_format in _FORMAT_PROVIDER
               else "no model is recorded")
    return provider, DEFAULT_MODELS[provider], f"{why}; default model"


def resolve_settings(session: Session, settings: ReplaySettings,
                     prices: PriceTable) -> tuple[ReplaySettings, str | None]:
    """``settings`` with the provider and model filled in, and how they were chosen (None: the settings
    named both). Neither named: the session's (``detect``). Only the model named: its provider in the
    price table (``ConfigurationError`` for a model the table does not hold). The provider named: as
    given (``ReplaySettings.model_name``: its default model when no model is named)."""
    if settings.provider is not None:
        return settings, None
    if settings.model is not None:
        return replace(settings, provider=prices.get(settings.model).provider), None
    provider, model, how = detect(session, prices)
    return replace(settings, provider=provider, model=model), how
