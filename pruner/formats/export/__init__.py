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

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ...engine.prune import PruneResult
from ...errors import ConfigurationError
from ...jsonio import dumps_json
from ...model import Session, validate_session
from .anthropic import anthropic_export, to_anthropic_messages, validate_anthropic_messages
from .openai import openai_export, to_openai_messages, validate_openai_messages
from .text import to_text

EXPORTS: tuple[str, ...] = ("native", "openai", "anthropic", "text")


@dataclass(frozen=True)
class Export:
    """An export's text, and what it left out: ``notes`` are sentences for a person
    (``dropped_empty``: messages with no text and no tool calls, which the API refuses
    or which tell the model nothing)."""

    text: str
    to: str
    dropped_empty: int = 0

    @property
    def notes(self) -> tuple[str, ...]:
        if not self.dropped_empty:
            return ()
        n = self.dropped_empty
        return (f"left out {n:,} empty message{'s' if n != 1 else ''} (no text and no tool calls, such as an "
                f"aborted reply) from the {self.to} export",)


def _api_json(value: Any, validate: Callable[[Any], None]) -> str:
    validate(value)  # ExportError rather than a file the API would reject
    return dumps_json(value, indent=2) + "\n"


def _check_exportable(session: Session) -> None:
    """What a hand-built session could get wrong that an export cannot write or would have to guess
    at; sessions from the importers and the library are valid (``validate_session``) already."""
    if not isinstance(session.metadata, Mapping) or not isinstance(session.name, str) \
            or not isinstance(session.source_format, str):
        validate_session(session)  # raises, naming the field
    answered = [m.tool_call_id for m in session.messages if m.tool_call_id is not None]
    if len(set(answered)) != len(answered):
        validate_session(session)  # names the message answering a call a second time


def export(source: Session | PruneResult, *, to: str) -> Export:
    """``source`` (a session, or a pruning result: its kept messages and placeholders) as an
    ``Export`` in the format ``to``: one of ``native``, ``openai``, ``anthropic``, ``text``.

    A session that the export cannot write faithfully (metadata that is not a
    mapping, a call answered twice) is an ``InvalidSessionError``. The OpenAI and
    Anthropic exports are checked against what the API accepts; anything it
    would refuse (no message at all, NaN in arguments, two results for one
    call) is an ``ExportError`` instead of a file.
    """
    from ..native import dumps as native_dumps

    if isinstance(source, Session):
        _check_exportable(source)
    if to == "native":
        return Export(native_dumps(source.kept if isinstance(source, PruneResult) else source), to)
    if to == "openai":
        messages, dropped = openai_export(source)
        return Export(_api_json(messages, validate_openai_messages), to, dropped)
    if to == "anthropic":
        body, dropped = anthropic_export(source)
        return Export(_api_json(body, validate_anthropic_messages), to, dropped)
    if to == "text":
        return Export(to_text(source), to)
    raise ConfigurationError(f"unknown export {to!r}; expected one of {', '.join(EXPORTS)}")


def dumps(source: Session | PruneResult, *, to: str) -> str:
    """The text of ``export(source, to=to)``."""
    return export(source, to=to).text


__all__ = ["EXPORTS", "Export", "dumps", "export", "to_anthropic_messages", "to_openai_messages", "to_text",
           "validate_anthropic_messages", "validate_openai_messages"]
