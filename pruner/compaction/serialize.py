"""The conversation as plain text for a summariser.

Each message becomes labelled lines (``[User]: ...``, ``[Assistant]: ...``,
``[Assistant thinking]: ...``, ``[Assistant tool calls]: name(arg="...")``,
``[Tool result]: ...``), and the whole is wrapped in ``<conversation>`` tags,
so the model reads it as material to summarise rather than a dialogue to continue.
Tool results are cut at 2,000 characters with a note of how many were cut.

>>> from pruner.model import Message, ToolCall
>>> print(serialize_messages([Message(id="u", role="user", content="Fix the bug"),
...     Message(id="a", role="assistant", content="", tool_calls=(ToolCall("c", "read", {"path": "a.py"}),)),
...     Message(id="r", role="tool", content="x" * 2003, tool_call_id="c")])[-60:])
xxxxxxxxxx
[... 3 more characters cut from this tool result]
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from ..model import Message, parse_arguments

TOOL_RESULT_LIMIT = 2_000


def _neutralise(text: str) -> str:
    # Transcript text must not be able to close the wrapper the prompt relies on.
    return text.replace("</conversation>", "</ conversation>").replace("<conversation>", "< conversation>")


def format_arguments(arguments: Any) -> str:
    """``key="value", n=3`` for an object, else the JSON of the value."""
    args = parse_arguments(arguments)
    if isinstance(args, dict):
        return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return json.dumps(args, ensure_ascii=False)


def cut_text(text: str, limit: int = TOOL_RESULT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters with a note saying how many were removed."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit:,} more characters cut from this tool result]"


def serialize_message(m: Message) -> list[str]:
    """The labelled lines for one message (an empty list for an empty message)."""
    lines = []
    if m.tool_call_id is not None or m.role == "tool":
        label = "Tool result" if m.role == "tool" else "Retrieved document"
        lines.append(f"[{label}]: {cut_text(m.content)}")
        return lines
    if m.role == "user":
        lines.append(f"[User]: {m.content}")
    elif m.role == "assistant":
        thinking = m.metadata.get("thinking") if isinstance(m.metadata, Mapping) else None
        if isinstance(thinking, str) and thinking.strip():
            lines.append(f"[Assistant thinking]: {thinking}")
        if m.content.strip():
            lines.append(f"[Assistant]: {m.content}")
        if m.tool_calls:
            calls = "; ".join(f"{c.name}({format_arguments(c.arguments)})" for c in m.tool_calls)
            lines.append(f"[Assistant tool calls]: {calls}")
    elif m.role == "system":
        lines.append(f"[System]: {m.content}")
    elif m.role == "retrieved_doc":
        lines.append(f"[Retrieved document]: {cut_text(m.content)}")
    elif m.role == "summary":
        lines.append(f"[Earlier summary]: {m.content}")
    else:
        lines.append(f"[{m.role}]: {m.content}")
    return lines


def serialize_messages(messages: Iterable[Message]) -> str:
    """Every message's lines, one message after another, without the wrapper."""
    out = []
    for m in messages:
        out.extend(serialize_message(m))
    return _neutralise("\n".join(out))


def wrap_conversation(messages: Iterable[Message]) -> str:
    """The serialised messages inside ``<conversation>`` ... ``</conversation>``."""
    return f"<conversation>\n{serialize_messages(messages)}\n</conversation>"
