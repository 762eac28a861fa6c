"""Which provider and model a session was recorded with, so its dollars use the right prices.

The importers keep the model where a transcript names it (Pi: each assistant
message's ``provider`` and ``model``; Anthropic and OpenAI request files: the
request's ``model``). The most frequent one among the requests that recorded
usage wins; a recorded name matches a price row by id, alias, or the longest
row id it starts with (``gpt-4o-2024-08-06`` is priced as ``gpt-4o``). Without
a recorded model the format decides the provider (Codex and the OpenAI formats
are OpenAI's, Claude Code and the Anthropic format Anthropic's).

>>> from pruner import load_session
>>> detect(load_session("sample_sessions/openai_chat.json"), default_prices())[:2]
('openai', 'gpt-4o')
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping

from ..model import Session
from .prices import PriceTable, default_prices
from .requests import recorded_usage
from .settings import DEFAULT_MODELS

_FORMAT_PROVIDER = {"codex": "openai", "openai_chat": "openai", "openai_responses": "openai",
                    "claude_code": "anthropic", "anthropic": "anthropic"}

__all__ = ["default_prices", "detect", "match_model"]


def match_model(name: str, prices: PriceTable, provider: str | None = None) -> str | None:
    """The price row a recorded model name stands for, or None."""
    rows = [m for m in prices.models if provider is None or m.provider == provider]
    for m in rows:
        if name == m.model or name in m.aliases:
            return m.model
    names = [(alias, m.model) for m in rows for alias in (m.model, *m.aliases) if name.startswith(alias)]
    return max(names, key=lambda pair: len(pair[0]))[1] if names else None


def _recorded_models(session: Session) -> Counter:
    found: Counter = Counter()
    for m in session.messages:
        if m.role != "assistant":
            continue
        source: Any = m.metadata.get("source") if isinstance(m.metadata, Mapping) else None
        model = source.get("model") if isinstance(source, Mapping) else None
        usage = recorded_usage(m)
        if isinstance(model, str) and model and not (usage is not None and usage.aborted):
            found[(source.get("provider"), model)] += 1
    source = session.metadata.get("source") if isinstance(session.metadata, Mapping) else None
    if not found and isinstance(source, Mapping) and isinstance(source.get("model"), str):
        found[(None, source["model"])] += 1
    return found


def detect(session: Session, prices: PriceTable) -> tuple[str, str, str]:
    """``(provider, model, how)``: ``how`` says where they came from, for the output's notes."""
    for (provider, name), _ in _recorded_models(session).most_common():
        model = match_model(name, prices, provider if provider in ("anthropic", "openai") else None)
        if model is not None:
            row = prices.get(model)
            return row.provider, row.model, f"the session records model {name!r}"
    provider = _FORMAT_PROVIDER.get(session.source_format, "anthropic")
    why = (f"the {session.source_format} format is {provider}'s" if session.source_format in _FORMAT_PROVIDER
           else "no model is recorded")
    return provider, DEFAULT_MODELS[provider], f"{why}; default model"
