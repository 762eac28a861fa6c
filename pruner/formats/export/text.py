"""Export to a plain-text prompt: one ``[role] content`` block per message.

>>> from pruner import Message, Session
>>> print(to_text(Session.of([Message(id="u", role="user", content="hi")])), end="")
[user]
hi
"""

from __future__ import annotations

from typing import Mapping

from ...engine.prune import PruneResult
from ...model import Session, canonical_json
from .openai import _session_and_placeholders


def to_text(source: Session | PruneResult, *, placeholders: Mapping[str, str] | None = None) -> str:
    """A plain-text prompt: one ``[role] content`` block per message."""
    session, holders = _session_and_placeholders(source, placeholders)
    answered = {m.tool_call_id for m in session.messages if m.tool_call_id}
    blocks = []
    for m in session.messages:
        label = m.role if not m.tool_name else f"{m.role} {m.tool_name}"
        text = m.content
        if m.tool_calls:
            calls = "\n".join(f"-> {c.name}({canonical_json(c.arguments)}) [{c.id}]" for c in m.tool_calls)
            text = f"{text}\n{calls}" if text else calls
        blocks.append(f"[{label}]\n{text}")
        for c in m.tool_calls:
            if c.id not in answered and c.id in holders:
                blocks.append(f"[tool {c.name}]\n{holders[c.id]}")
    return "\n\n".join(blocks) + "\n"
