"""Exports a person or an API can use: OpenAI Chat Completions messages,
Anthropic Messages, plain text, and pruner's native JSONL.

``dumps(source, to=...)`` is the one way to turn a session or a pruning result
into text; every exporter is API-valid (tested) and answers pruned results with
their placeholders.

>>> from pruner import Message, Session
>>> s = Session.of([Message(id="u", role="user", content="hi")])
>>> dumps(s, to="openai")
'[\\n  {\\n    "role": "user",\\n    "content": "hi"\\n  }\\n]\\n'
"""

from __future__ import annotations

import json
from typing import Callable

from ...engine.prune import PruneResult
from ...errors import ConfigurationError
from ...model import Session
from .anthropic import to_anthropic_messages, validate_anthropic_messages
from .openai import to_openai_messages, validate_openai_messages
from .text import to_text

EXPORTS: tuple[str, ...] = ("native", "openai", "anthropic", "text")


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def dumps(source: Session | PruneResult, *, to: str) -> str:
    """``source`` (a session, or a pruning result: its kept messages and placeholders)
    as text in the export ``to``: one of ``native``, ``openai``, ``anthropic``, ``text``."""
    from ..native import dumps as native_dumps

    writers: dict[str, Callable[[], str]] = {
        "native": lambda: native_dumps(source.kept if isinstance(source, PruneResult) else source),
        "openai": lambda: _json(to_openai_messages(source)),
        "anthropic": lambda: _json(to_anthropic_messages(source)),
        "text": lambda: to_text(source),
    }
    if to not in writers:
        raise ConfigurationError(f"unknown export {to!r}; expected one of {', '.join(EXPORTS)}")
    return writers[to]()


__all__ = ["EXPORTS", "dumps", "to_anthropic_messages", "to_openai_messages", "to_text",
           "validate_anthropic_messages", "validate_openai_messages"]
