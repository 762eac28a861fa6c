"""The one interface every summariser implements.

A summariser gets a ``SummaryTask`` and returns the summary text (Markdown
with the task's required headings) or raises ``SummarizerError``.

>>> from pruner.compaction.offline import OfflineSummarizer
>>> isinstance(OfflineSummarizer(), Summarizer)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..model import Message
from .prompts import SummaryRequest
from .sections import PREFIX_SECTIONS, SUMMARY_SECTIONS

#: Task kinds: summarise from scratch, merge into an earlier summary, summarise a split turn's start.
TASK_KINDS: tuple[str, ...] = ("history", "update", "turn_prefix")


@dataclass(frozen=True)
class SummaryTask:
    """What to summarise, and the exact request an LLM would be sent for it."""

    kind: str  # one of TASK_KINDS
    messages: tuple[Message, ...]
    request: SummaryRequest
    previous_summary: str | None = None  # "update" only: the earlier summary, without file lists

    @property
    def required_sections(self) -> tuple[str, ...]:
        return PREFIX_SECTIONS if self.kind == "turn_prefix" else SUMMARY_SECTIONS


@runtime_checkable
class Summarizer(Protocol):
    """Anything with a ``name`` and ``summarize(task) -> str``."""

    # Read-only: a class attribute satisfies it, and so does OpenAISummarizer's property (a plain
    # ``name: str`` would demand a settable attribute, which that property is not).
    @property
    def name(self) -> str: ...

    def summarize(self, task: SummaryTask) -> str: ...
